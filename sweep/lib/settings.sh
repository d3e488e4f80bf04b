# shellcheck shell=bash
# settings.sh - a new run's directory and settings on disk (the settings
# resolved by tswap/cli/sweep_setup.py; --resume reads them back with
# tswap/cli/sweep_resume.py).
#
# Owns: out_empty, new_run_dir, default_out, save_config.
# Reads: the settings globals. Writes: RUN; RUN/sweep.json (tswap.plan.config),
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
		--ds-version="$DS_VERSION" --workload="$WORKLOAD" \
		--steady="$STEADY" --fixed-runtime="$FIXED_RUNTIME" --ss-crit="$SS_CRIT" \
		--ss-dur="$SS_DUR" --precondition="$PRECONDITION" >"$tmp"
	mv -f "$tmp" "$RUN/sweep.json"
	[ "$fleet" = /dev/null ] || rm -f -- "$fleet"
	plan_save "$RUN"
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
