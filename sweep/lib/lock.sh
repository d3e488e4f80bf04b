# shellcheck shell=bash
# lock.sh - one sweep per run directory: a fleet run's lock_run.
#
# On this host the front end takes the run's and the targets' locks in its
# own process (tswap/executor/locks.py, the same rules, files and
# messages; docs/sweep.md).
#
# RUN/.lock is held with flock(1) on fd 9 for the whole run (the fio
# processes the sweep starts inherit it, so a killed sweep's fio still
# holds it until its point ends) and names the holder's pid. It is taken
# before anything else is written in the run directory (new_run_dir,
# settings.sh), so two sweeps on one directory never interleave: the second
# exits 2 with one line naming the holder. A fleet's targets are on its
# hosts: not locked here.
#
# Owns: lock_run, lock_busy, lock_probe. Reads: RUN. Writes: RUN_LOCKED,
# RUN/.lock, fd 9.

RUN_LOCKED=0

lock_run() {
	[ "$RUN_LOCKED" = 0 ] || return 0
	[ ! -L "$RUN/.lock" ] || die "$EXIT_USAGE" "refusing $RUN/.lock: a symbolic link (the run's lock file is never followed)"
	# Append, not truncate: opening must not erase the holder's pid.
	exec 9>>"$RUN/.lock" || die "$EXIT_ERROR" "cannot open $RUN/.lock"
	flock -n 9 || lock_busy
	: >"$RUN/.lock"
	printf '%d\n' "$$" >&9
	RUN_LOCKED=1
}

# lock_busy: exit 2 naming the holder of RUN/.lock.
lock_busy() {
	local holder
	holder=$(head -c 32 -- "$RUN/.lock" 2>/dev/null) || holder=''
	holder=${holder//[!0-9]/}
	die "$EXIT_USAGE" "$RUN is in use by another tswap-sweep (pid ${holder:-unknown}, or a fio it started, which finishes its point first)"
}

# lock_probe: exit 2 (lock_busy) if RUN/.lock is held now; the file is
# opened read-only and not created: nothing is written.
lock_probe() {
	local fd
	[ -f "$RUN/.lock" ] && [ ! -L "$RUN/.lock" ] || return 0
	{ exec {fd}<"$RUN/.lock"; } 2>/dev/null || return 0
	if ! flock -n "$fd"; then
		exec {fd}<&-
		lock_busy
	fi
	exec {fd}<&-
}
