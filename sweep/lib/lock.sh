# shellcheck shell=bash
# lock.sh - one sweep per run directory, and one per target.
#
# RUN/.lock is held with flock(1) on fd 9 for the whole run (the fio
# processes the sweep starts inherit it, so a killed sweep's fio still
# holds it until its point ends) and names the holder's pid. It is taken
# before anything else is written in the run directory (new_run_dir,
# settings.sh), so two sweeps on one directory never interleave: the second
# exits 2 with one line naming the holder.
#
# Each target of this host is locked the same way, before the run
# directory is made (the entry point), so two sweeps with different --out
# never share a target: TARGET_LOCK_DIR/blk-MAJ-MIN.lock for a block
# device, else file-HASH.lock, HASH from the path with every symlink
# resolved (readlink -m: a link to the target, or ./name, is the same
# target). Its lines name the holder's pid and run directory; the second
# sweep exits 2 naming them. A lock lives as long as its fd: it goes with
# the process on every exit (error, signal, kill -9), so a lock file a
# dead sweep left blocks nothing. A fleet's targets are on its hosts: not
# locked here.
#
# Owns: lock_run, target_lock_file, lock_targets, target_lock_note,
# lock_targets_name, lock_fds_close. Reads: RUN, TARGETS, FLEET. Writes:
# RUN_LOCKED, RUN/.lock, fd 9; TARGET_LOCK_FDS, TARGET_LOCK_DIR/*.lock.

RUN_LOCKED=0
# TARGET_LOCK_FDS[LOCKFILE]=FD of each target lock held (lock_targets).
declare -gA TARGET_LOCK_FDS=()
readonly TARGET_LOCK_DIR=/tmp/tswap-locks

lock_run() {
	local holder
	[ "$RUN_LOCKED" = 0 ] || return 0
	# Append, not truncate: opening must not erase the holder's pid.
	exec 9>>"$RUN/.lock" || die "$EXIT_ERROR" "cannot open $RUN/.lock"
	if ! flock -n 9; then
		holder=$(head -c 32 -- "$RUN/.lock" 2>/dev/null) || holder=''
		holder=${holder//[!0-9]/}
		die "$EXIT_USAGE" "$RUN is in use by another tswap-sweep (pid ${holder:-unknown}, or a fio it started, which finishes its point first)"
	fi
	: >"$RUN/.lock"
	printf '%d\n' "$$" >&9
	RUN_LOCKED=1
	lock_targets_name
}

# target_lock_file PATH: the lock file of target PATH.
target_lock_file() {
	local p=$1 rdev key
	if [ -b "$p" ]; then
		rdev=$(stat -L -c '%t-%T' -- "$p") || return 1
		printf '%s/blk-%s.lock\n' "$TARGET_LOCK_DIR" "$rdev"
		return 0
	fi
	p=$(readlink -m -- "$p") || return 1
	key=$(printf '%s' "$p" | sha256sum) || return 1
	printf '%s/file-%s.lock\n' "$TARGET_LOCK_DIR" "${key:0:32}"
}

# lock_targets: lock every target of this host (TARGETS, else TARGET), or
# exit 2 naming the sweep that holds one.
lock_targets() {
	local t f fd pid run
	[ "$FLEET" = 0 ] || return 0
	mkdir -m 1777 -- "$TARGET_LOCK_DIR" 2>/dev/null || [ -d "$TARGET_LOCK_DIR" ] ||
		die "$EXIT_ERROR" "cannot create $TARGET_LOCK_DIR (the targets' locks)"
	for t in "${TARGETS[@]:-$TARGET}"; do
		f=$(target_lock_file "$t") || die "$EXIT_ERROR" "cannot name the lock of target $t"
		[ -z "${TARGET_LOCK_FDS[$f]:-}" ] || continue
		# another user's lock file: read-only is enough for flock
		{ exec {fd}>>"$f"; } 2>/dev/null || { exec {fd}<"$f"; } 2>/dev/null ||
			die "$EXIT_ERROR" "cannot open $f (the lock of target $t)"
		if ! flock -n "$fd"; then
			{ read -r pid && read -r run; } <"$f" 2>/dev/null || true
			die "$EXIT_USAGE" "refusing target $t: in use by another tswap-sweep (pid ${pid:-unknown}${run:+, run $run}, or a fio it started, which finishes its point first); wait for it, or give another --target"
		fi
		chmod 0666 -- "$f" 2>/dev/null || true
		TARGET_LOCK_FDS[$f]=$fd
		target_lock_note "$f" ''
	done
	return 0
}

# target_lock_note FILE RUN: the holder's pid, RUN and the target into a
# held lock FILE, in place (a new file would not be the locked one).
target_lock_note() {
	: >"$1" 2>/dev/null || return 0
	printf '%d\n%s\n' "$$" "$2" 1>&"${TARGET_LOCK_FDS[$1]}" 2>/dev/null || true
}

# lock_targets_name: the run directory into the target locks (once it is
# locked: lock_run).
lock_targets_name() {
	local f
	for f in "${!TARGET_LOCK_FDS[@]}"; do
		target_lock_note "$f" "$RUN"
	done
	return 0
}

# lock_fds_close: close the lock fds in a subshell that may outlive the
# sweep (status.sh), so that it holds no lock.
lock_fds_close() {
	local fd
	exec 9>&-
	for fd in "${TARGET_LOCK_FDS[@]}"; do
		exec {fd}>&-
	done
}
