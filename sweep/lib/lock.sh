# shellcheck shell=bash
# lock.sh - one sweep per run directory.
#
# RUN/.lock is held with flock(1) on fd 9 for the whole run (the fio
# processes the sweep starts inherit it, so a killed sweep's fio still
# holds it until its point ends) and names the holder's pid. It is taken
# before anything else is written in the run directory (new_run_dir,
# settings.sh), so two sweeps on one directory never interleave: the second
# exits 2 with one line naming the holder.
#
# Owns: lock_run. Reads: RUN. Writes: RUN_LOCKED, RUN/.lock, fd 9.

RUN_LOCKED=0

lock_run() {
	local holder
	[ "$RUN_LOCKED" = 0 ] || return 0
	# Append, not truncate: opening must not erase the holder's pid.
	exec 9>>"$RUN/.lock" || die "$EXIT_ERROR" "cannot open $RUN/.lock"
	if ! flock -n 9; then
		holder=$(head -c 32 -- "$RUN/.lock" 2>/dev/null | tr -cd '0-9')
		die "$EXIT_USAGE" "$RUN is in use by another tswap-sweep (pid ${holder:-unknown}, or a fio it started, which finishes its point first)"
	fi
	: >"$RUN/.lock"
	printf '%d\n' "$$" >&9
	RUN_LOCKED=1
}
