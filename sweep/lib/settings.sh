# shellcheck shell=bash
# settings.sh - a run's settings: resolved for a new run, saved in and
# read back from its run directory.
#
# Owns: setup_new_run (options over the grid's values over defaults; the
# plan), out_empty, new_run_dir, save_config, load_config. Reads: the
# option globals, the grid (grid.sh). Writes: RUNTIME, RAMP, REPEAT, SIZE, SIZE_BYTES,
# TARGET, ENGINE, CEILING, PLAN_TEXT, RUN; RUN/sweep.json (tswap.plan.config),
# RUN/plan.json (pipeline.sh), RUN/hosts.txt (fleet), build/sweep/latest (checkout).
# shellcheck disable=SC2034 # sets the settings of state.sh
# shellcheck disable=SC2153 # FLEET: a global of state.sh

# grid_options CHECK: --rw, --ranks, --backend and --tensor-size over the
# grid's lists (G_RW, G_RANKS, G_BACKEND, G_TENSOR), checked when CHECK is 1.
grid_options() {
	local spec name flag opt arr
	local -a list
	for spec in rw:--rw:RW_OPT:G_RW ranks:--ranks:RANKS_OPT:G_RANKS \
		backend:--backend:BACKEND_OPT:G_BACKEND tensor:--tensor-size:TENSOR_OPT:G_TENSOR; do
		IFS=: read -r name flag opt arr <<<"$spec"
		[ -n "${!opt}" ] || continue
		split_into list "${!opt}"
		[ "$1" = 0 ] || check_values "$name" "$flag" "${list[@]}"
		split_into "$arr" "${!opt}"
	done
}

# setup_new_run: resolve the settings of a new run and its plan.
setup_new_run() {
	local gfile item t tb max_t=0 sz
	gfile=$(grid_file_for "$GRID") || exit # its own message and status
	load_grid "$gfile"
	grid_options 1
	check_engine_limits
	io_size_check
	if [ -z "$IO_SIZE" ]; then
		: "${RUNTIME:=${G_RUNTIME:-5}}"
		: "${RAMP:=${G_RAMP:-1}}"
	else
		RUNTIME=
		RAMP=
		IO_SIZE=$(size_to_bytes "$IO_SIZE")
		szname IO_SIZE "$IO_SIZE"
	fi
	: "${REPEAT:=${G_REPEAT:-1}}"
	REPEAT=$((10#$REPEAT))
	: "${SIZE:=${G_SIZE:-1g}}"
	if [ "$G_CEILING" = off ]; then
		CEILING=0
	fi
	if [ "$FLEET" = 1 ]; then
		# paths on the hosts: taken as given (absolute, checked per host)
		[ -n "$ENGINE" ] || ENGINE=$(fleet_default_engine)
		[[ ${G_RANKS[*]} == 1 && ${G_RW[*]} != *readwrite* && $TARGET != *,* ]] ||
			usage_error "--hosts: ranks above 1, rw readwrite and several targets are not supported in fleet mode"
	else
		: "${TARGET:=$G_TARGETS}"
		[ -n "$TARGET" ] || TARGET=$(default_target)
		target_list
		[ -n "$ENGINE" ] || ENGINE=$(default_engine)
		ENGINE=$(abspath "$ENGINE")
	fi
	SIZE_BYTES=$(size_to_bytes "$SIZE")
	for item in "${G_TENSOR[@]}"; do
		tb=$(size_to_bytes "$item")
		((tb > max_t)) && max_t=$tb
	done
	if [ "$FLEET" = 0 ] && [ -b "$TARGET" ]; then
		t=$(blockdev --getsize64 "$TARGET" 2>/dev/null) || die "$EXIT_ERROR" "cannot read the size of $TARGET"
		if ((SIZE_BYTES > t)); then
			warn "--size $SIZE is larger than $TARGET ($t bytes): using the whole device"
			SIZE_BYTES=$((t / 4096 * 4096))
		fi
	fi
	SIZE=$(bytes_to_size "$SIZE_BYTES")
	# the target's preparation, the ceiling and preconditioning write 1m
	# blocks: refused here, before a run directory or a target file
	((SIZE_BYTES >= 1 << 20)) ||
		usage_error "--size $SIZE: at least 1m (one 1 MiB block: the target's preparation, the ceiling and preconditioning write 1m blocks)"
	szname sz "$max_t"
	((max_t <= SIZE_BYTES)) || usage_error "tensor size $sz does not fit in --size $SIZE"
	PLAN_TEXT=$(expand_grid)
	PLAN_TEXT=$(unique_points "$PLAN_TEXT")
	[ -n "$PLAN_TEXT" ] || usage_error "the grid has no valid point"
	if [ "$CEILING" = 1 ]; then
		CEILING_QD=$(ceiling_depth "$PLAN_TEXT")
		CEILING_JOBS=$(ceiling_jobs "$PLAN_TEXT")
		PLAN_TEXT=$(add_ceilings "$PLAN_TEXT")
	fi
	steady_resolve
	precondition_check_plan
}

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
