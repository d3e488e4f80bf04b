# shellcheck shell=bash
# lock.sh - one sweep per run directory, and one per target.
#
# On this host the front end takes these locks before it hands over
# (tswap/executor/locks.py, the same rules, files and messages: RUN/.lock
# on fd 9, each target's on an fd in TARGET_LOCK_FDS, RUN_LOCKED=1,
# LOCK_DIR); what stays here is a fleet run's lock_run and what the
# executor does later: lock_target_inode (a file the sweep creates) and
# lock_fds_close.
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
# creates it: prepare_target (target.sh) takes its inode lock right after
# scratch_create, before any I/O. lock_dir is the user's own
# (/run/tswap-locks for root, else $XDG_RUNTIME_DIR or /tmp,
# tswap-locks-UID, mode 0700): nobody else can plant a symlink there for a
# lock file to follow; one not owned by the user, or a symlink, is
# refused. Its lines name the holder's pid and run directory; the second
# sweep exits 2 naming them. A lock lives as long as its fd: it goes with
# the process on every exit (error, signal, kill -9), so a lock file a
# dead sweep left blocks nothing. A fleet's targets are on its hosts: not
# locked here.
#
# Owns: lock_run, lock_busy, lock_probe, lock_dir, lock_take,
# lock_target_inode, target_lock_note, lock_targets_name, lock_fds_close. Reads: RUN,
# TARGETS, FLEET. Writes: RUN_LOCKED, RUN/.lock, fd 9; TARGET_LOCK_FDS,
# LOCK_DIR, the lock files.

RUN_LOCKED=0
# LOCK_DIR: lock_dir's directory, once it has made it private
LOCK_DIR=
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

# lock_dir: LOCK_DIR, the directory of this user's target locks, made
# 0700 if missing (else chmod'ed 0700, once a run); status 1 when it is a
# symlink or another user's.
lock_dir() {
	local d made=0
	if [ "$EUID" -eq 0 ]; then d=/run/tswap-locks; else d=${XDG_RUNTIME_DIR:-/tmp}/tswap-locks-$EUID; fi
	if [ ! -e "$d" ] && [ ! -L "$d" ] && mkdir -m 0700 -- "$d" 2>/dev/null; then made=1; fi
	[ ! -L "$d" ] && [ -d "$d" ] && [ -O "$d" ] || return 1
	if [ "$made" = 0 ] && [ "$LOCK_DIR" != "$d" ]; then
		chmod 0700 -- "$d" || return 1
	fi
	LOCK_DIR=$d
}

# lock_target_inode PATH [DEV-INODE]: lock the file PATH names by its
# DEV:INODE (lock_dir/ino-DEV-INODE.lock: all its hard links; DEV-INODE:
# the caller's stat of it, else stat's), or exit 2 naming the sweep that
# holds it; nothing for a block device, a path not (yet) a file, or a
# fleet.
lock_target_inode() {
	local t=$1 d id=${2:-}
	[ "$FLEET" = 0 ] && [ -f "$t" ] && [ ! -b "$t" ] || return 0
	lock_dir || die "$EXIT_ERROR" "cannot make a private directory for the targets' locks (a symlink, or another user's, is in the way)"
	d=$LOCK_DIR
	[ -n "$id" ] || id=$(stat -L -c '%d-%i' -- "$t") || die "$EXIT_ERROR" "cannot stat target $t for its lock"
	lock_take "$d/ino-$id.lock" "$t"
}

# lock_take FILE TARGET: hold the lock FILE of TARGET on a new fd
# (TARGET_LOCK_FDS; once held, nothing), or exit 2 naming the sweep that
# holds it (its pid and run: target_lock_note).
lock_take() {
	local f=$1 t=$2 fd pid run
	[ -z "${TARGET_LOCK_FDS[$f]:-}" ] || return 0
	[ ! -L "$f" ] || die "$EXIT_ERROR" "refusing the lock file $f: a symbolic link"
	{ exec {fd}>>"$f"; } 2>/dev/null || die "$EXIT_ERROR" "cannot open $f (the lock of target $t)"
	if ! flock -n "$fd"; then
		{ read -r pid && read -r run; } <"$f" 2>/dev/null || true
		die "$EXIT_USAGE" "refusing target $t: in use by another tswap-sweep (pid ${pid:-unknown}${run:+, run $run}, or a fio it started, which finishes its point first); wait for it, or give another --target"
	fi
	TARGET_LOCK_FDS[$f]=$fd
	run=''
	[ "$RUN_LOCKED" = 0 ] || run=$RUN
	target_lock_note "$f" "$run"
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
