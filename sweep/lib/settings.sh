# shellcheck shell=bash
# settings.sh - a run's settings (a new run's resolved by
# tswap/cli/sweep_setup.py): saved in and read back from its run directory.
#
# Owns: out_empty, new_run_dir, default_out, save_config, load_config.
# Reads: the settings globals. Writes: for --resume, the settings of
# sweep.json (RUNTIME, RAMP, REPEAT, SIZE, ..., PLAN_TEXT); RUN; RUN/sweep.json (tswap.plan.config),
# RUN/plan.json (pipeline.sh), RUN/hosts.txt (fleet), build/sweep/latest (checkout).
# shellcheck disable=SC2034 # sets the settings of state.sh
# shellcheck disable=SC2153 # FLEET: a global of state.sh

# save_config: sweep.json and plan.json describe the run for --resume.
save_config() {
	local tmp="$RUN/sweep.json.tmp" fleet=/dev/null created host kernel fio targets
	created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	host=$(hostname)
	kernel=$(uname -r)
	fio=$(fio --version 2>/dev/null) || fio=unknown
	targets=$(targets_json)
	if [ "$FLEET" = 1 ]; then
		fleet="$RUN/fleet-config.json.tmp"
		fleet_config_json >"$fleet"
		cp -- "$HOSTS_FILE" "$RUN/hosts.txt"
	fi
	py sweep-config --fleet="$fleet" \
		--target="$TARGET" --target-kind="$TARGET_KIND" --size="$SIZE" \
		--size-bytes="$SIZE_BYTES" --grid="$G_NAME" --grid-desc="$G_DESC" \
		--runtime="$RUNTIME" --ramp="$RAMP" --io-size="$IO_SIZE" \
		--repeat="$REPEAT" --engine="$ENGINE" --ceiling="$CEILING" \
		--created="$created" --host="$host" --kernel="$kernel" --fio="$fio" \
		--targets="$targets" \
		--ceiling-bs="$CEILING_BS" --ceiling-qd="$CEILING_QD" --ceiling-jobs="$CEILING_JOBS" \
		--ds-version="$DS_VERSION" \
		--steady="$STEADY" --fixed-runtime="$FIXED_RUNTIME" --ss-crit="$SS_CRIT" \
		--ss-dur="$SS_DUR" --precondition="$PRECONDITION" >"$tmp"
	mv -f "$tmp" "$RUN/sweep.json"
	[ "$fleet" = /dev/null ] || rm -f -- "$fleet"
	plan_save "$RUN"
}

load_config() {
	local cfg="$RUN/sweep.json"
	if [ ! -f "$cfg" ] || { [ ! -f "$RUN/plan.json" ] && [ ! -f "$RUN/plan.tsv" ]; }; then
		die "$EXIT_USAGE" "$RUN is not a tswap-sweep run directory (no sweep.json/plan.tsv)"
	fi
	jq -e . "$cfg" >/dev/null 2>&1 || die "$EXIT_ERROR" "$cfg does not parse"
	# the settings in one jq run, NUL-separated (paths and the grid's
	# description may hold newlines), the targets last
	local -a f
	# shellcheck disable=SC2312 # cfg parsed above; the count is checked below
	mapfile -d '' -t f < <(jq -j --argjson qd "$CEILING_QD_MIN" '
		[.target, .size, .size_bytes, .grid, .grid_description, .runtime, .ramp, .io_size,
		 .repeat, (.ceiling_qd // $qd), (.ceiling_jobs // 1), .engine,
		 (if .ceiling then 1 else 0 end), (.ds_version // ""),
		 (.steady_state // "off"), (if .fixed_runtime then 1 else 0 end),
		 (.precondition // "off"), (if .fleet then 1 else 0 end)]
		+ (.targets // [.target]) | map(tostring + "\u0000") | add' "$cfg")
	[ "${#f[@]}" -ge 19 ] || die "$EXIT_ERROR" "$cfg: settings missing"
	TARGET=${f[0]} SIZE=${f[1]} SIZE_BYTES=${f[2]} G_NAME=${f[3]} G_DESC=${f[4]}
	RUNTIME=${f[5]} RAMP=${f[6]} IO_SIZE=${f[7]} REPEAT=${f[8]}
	CEILING_QD=${f[9]} CEILING_JOBS=${f[10]}
	ENGINE=${ENGINE:-${f[11]}}
	CEILING=${f[12]}
	DS_VERSION=${DS_VERSION:-${f[13]}}
	# runs from before steady state: fixed runtime, no preconditioning
	STEADY=${f[14]} FIXED_RUNTIME=${f[15]} PRECONDITION=${f[16]}
	TARGETS=("${f[@]:18}")
	# a damaged or hand-edited plan.json: one line (py's), exit 3
	[ ! -f "$RUN/plan.json" ] || py plan --check "$RUN/plan.json" || exit "$EXIT_ERROR"
	PLAN_TEXT=$(plan_load "$RUN")
	if [ "${f[17]}" = 1 ]; then
		fleet_load_config "$cfg"
	fi
}

# out_empty: exit 2 unless the existing --out directory RUN is empty but
# for a .lock of a sweep's (a regular file, empty or a pid: not a user's
# file or a symlink); an unreadable directory counts as empty, as it
# always has.
out_empty() {
	local v pid=''
	v=$(find "$RUN" -mindepth 1 -maxdepth 1 ! -name .lock -print -quit) || true
	if [ -z "$v" ] && { [ -e "$RUN/.lock" ] || [ -L "$RUN/.lock" ]; }; then
		v=$RUN/.lock
		if [ -f "$RUN/.lock" ] && [ ! -L "$RUN/.lock" ] && [ "$(stat -c %s -- "$RUN/.lock")" -le 16 ]; then
			read -r pid <"$RUN/.lock" || true
			[[ ! $pid =~ ^[0-9]*$ ]] || [ "$(grep -c '' -- "$RUN/.lock")" -gt 1 ] || v=''
		fi
	fi
	[ -z "$v" ] ||
		die "$EXIT_USAGE" "$RUN exists and is not empty (use --resume to finish it, or another --out)"
}

# new_run_dir: RUN for a new run, created with mkdir (atomic) and locked
# (lock.sh) before anything is written in it: --out must be new, or an
# empty directory; the default dated directory gets a suffix (-2, -3, ...)
# when the name is taken. Then its sweep.json and plan.json;
# build/sweep/latest points at it in a checkout.
new_run_dir() {
	local base n=1 err
	if [ -n "$OUT" ]; then
		RUN=$(abspath "$OUT")
		if ! err=$(mkdir -p -- "$(dirname -- "$RUN")" 2>&1) || ! err=$(mkdir -- "$RUN" 2>&1); then
			# mkdir's reason: "Read-only file system", "Permission denied"
			[ -d "$RUN" ] || die "$EXIT_USAGE" "--out $RUN: cannot create the run directory (${err##*: })"
			# free and empty before the lock (a refusal writes no .lock
			# into a user's directory or a finished run), and once held
			lock_probe
			out_empty
			lock_run
			out_empty
		fi
	else
		base=$(default_out)
		mkdir -p -- "$(dirname -- "$base")"
		RUN=$base
		until mkdir -- "$RUN" 2>/dev/null; do
			n=$((n + 1))
			((n <= 999)) || die "$EXIT_ERROR" "cannot create a run directory $base-N"
			RUN=$base-$n
		done
	fi
	lock_run
	save_config
	if [ -n "$ROOT" ] && [ -z "$OUT" ]; then
		ln -sfn "${RUN##*/}" "$ROOT/build/sweep/latest" 2>/dev/null || true
	fi
}

# default_out: the default run directory, build/sweep/DATE-TIME in a
# checkout, ./tswap-sweep-DATE-TIME when installed.
default_out() {
	local stamp
	stamp=$(date -u +%Y%m%d-%H%M%S)
	if [ -n "$ROOT" ]; then
		printf '%s\n' "$ROOT/build/sweep/$stamp"
	else
		printf '%s\n' "$PWD/tswap-sweep-$stamp"
	fi
}
