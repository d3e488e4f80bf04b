# shellcheck shell=bash
# settings.sh - a new run's directory and settings on disk (the settings
# resolved, and sweep.json's and plan.json's text made, by
# tswap/cli/sweep_setup.py and sweep_start.py; --resume reads them back
# with tswap/cli/sweep_resume.py): a fleet run's. On this host the front
# end makes the run directory with the same rules and messages
# (tswap/cli/sweep_local.py).
#
# Owns: out_empty, new_run_dir, default_out, save_config.
# Reads: SWEEP_JSON, PLAN_JSON, TARGET_KIND, FLEET, HOSTS_FILE, OUT, ROOT.
# Writes: RUN; RUN/sweep.json, RUN/plan.json, RUN/hosts.txt (fleet),
# build/sweep/latest (checkout).
# shellcheck disable=SC2034 # sets the settings of state.sh
# shellcheck disable=SC2153 # FLEET: a global of state.sh

# save_config: sweep.json and plan.json describe the run for --resume;
# a fleet's hosts file is kept as hosts.txt. Their text is the front
# end's (tswap/cli/sweep_start.py: SWEEP_JSON, PLAN_JSON); sweep.json's
# target_kind is the target check's (TARGET_KIND).
save_config() {
	printf '%s"%s"%s\n' "${SWEEP_JSON[0]}" "$TARGET_KIND" "${SWEEP_JSON[1]}" >"$RUN/sweep.json.tmp"
	mv -f "$RUN/sweep.json.tmp" "$RUN/sweep.json"
	[ "$FLEET" = 0 ] || cp -- "$HOSTS_FILE" "$RUN/hosts.txt"
	printf '%s\n' "$PLAN_JSON" >"$RUN/plan.json.tmp"
	mv -f "$RUN/plan.json.tmp" "$RUN/plan.json"
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
	local base n=1 err parent
	if [ -n "$OUT" ]; then
		RUN=$(abspath "$OUT")
		dirname_into parent "$RUN"
		# (mkdir -p only when the parent is not a directory yet)
		if ! { [ -d "$parent" ] || err=$(mkdir -p -- "$parent" 2>&1); } || ! err=$(mkdir -- "$RUN" 2>&1); then
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
		dirname_into parent "$base"
		[ -d "$parent" ] || mkdir -p -- "$parent"
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
	# date -u +%Y%m%d-%H%M%S, without a process
	TZ=UTC0 printf -v stamp '%(%Y%m%d-%H%M%S)T' -1
	if [ -n "$ROOT" ]; then
		printf '%s\n' "$ROOT/build/sweep/$stamp"
	else
		printf '%s\n' "$PWD/tswap-sweep-$stamp"
	fi
}
