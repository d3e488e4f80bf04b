# shellcheck shell=bash
# lock.sh - one sweep per run directory, and one per target.
#
# On this host the front end takes these locks before it hands over
# (tswap/executor/locks.py, the same rules, files and messages: RUN/.lock
# on fd 9, each target's on an fd, RUN_LOCKED=1); what stays here is a
# fleet run's lock_run.
#
# RUN/.lock is held with flock(1) on fd 9 for the whole run (the fio
# processes the sweep starts inherit it, so a killed sweep's fio still
# holds it until its point ends) and names the holder's pid. It is taken
# before anything else is written in the run directory (new_run_dir,
# settings.sh), so two sweeps on one directory never interleave: the second
# exits 2 with one line naming the holder.
#
# Each target of this host is locked the same way, before the run
# directory is made (the entry point), so two sweeps of one user with
# different --out never share a target: lock_dir/blk-MAJ-MIN.lock for a
# block device, else file-HASH.lock, HASH from the path with every symlink
# resolved (readlink -m: a link to the target, or ./name, is the same
# target), and an existing file also ino-DEV-INODE.lock (a hard link is
# the same file). A new path has only its path lock until the sweep
# creates it, then its inode lock too, before any I/O. The lock directory
# is the user's own
# (/run/tswap-locks for root, else $XDG_RUNTIME_DIR or /tmp,
# tswap-locks-UID, mode 0700): nobody else can plant a symlink there for a
# lock file to follow; one not owned by the user, or a symlink, is
# refused. Its lines name the holder's pid and run directory; the second
# sweep exits 2 naming them. A lock lives as long as its fd: it goes with
# the process on every exit (error, signal, kill -9), so a lock file a
# dead sweep left blocks nothing. A fleet's targets are on its hosts: not
# locked here.
#
# Owns: lock_run, lock_busy, lock_probe, target_lock_note,
# lock_targets_name (this host's target locks: tswap/executor/locks.py).
# Reads: RUN, TARGETS, FLEET. Writes: RUN_LOCKED, RUN/.lock, fd 9.

RUN_LOCKED=0
# TARGET_LOCK_FDS[LOCKFILE]=FD of each target lock held (this host's
# targets: the front end's, tswap/executor/locks.py).
declare -gA TARGET_LOCK_FDS=()

lock_run() {
	[ "$RUN_LOCKED" = 0 ] || return 0
	[ ! -L "$RUN/.lock" ] || die "$EXIT_USAGE" "refusing $RUN/.lock: a symbolic link (the run's lock file is never followed)"
	# Append, not truncate: opening must not erase the holder's pid.
	exec 9>>"$RUN/.lock" || die "$EXIT_ERROR" "cannot open $RUN/.lock"
	flock -n 9 || lock_busy
	: >"$RUN/.lock"
	printf '%d\n' "$$" >&9
	RUN_LOCKED=1
	lock_targets_name
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
