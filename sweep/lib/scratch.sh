# shellcheck shell=bash
# scratch.sh - which target files are the sweep's own (docs/sweep.md,
# "Targets: what the sweep writes to").
#
# The sweep writes only to a file it created itself, to a new path (which
# it then creates), or, with --destructive, to any other file. A file it
# creates is marked with a mark tied to that very file, so that neither a
# copy nor a new file at the same path (even one given the same DEV:INODE:
# ext4 reuses a deleted file's inode number at once) is taken for it:
# - the extended attribute user.tswap.scratch = DEV:INODE, where setfattr
#   and the filesystem allow it (it lives on the inode: deleting the file
#   deletes it);
# - else a sidecar file TARGET.tswap-scratch = DEV:INODE:BIRTH, BIRTH the
#   file's birth time in ns (statx btime), which a later file cannot share;
#   where the filesystem reports no birth time the file is not marked, and
#   a later run (or --resume) needs --destructive.
# A fresh run and --resume apply the same test (scratch_owned); the
# identity kept in RUN/scratch-target is a record, never taken as a mark.
#
# Owns: target_id, scratch_birth, scratch_owned, scratch_create, pseudo_fs,
# PSEUDO_FS_TYPES.
# Reads: RUN. Writes: the mark (xattr or sidecar), RUN/scratch-target.

readonly SCRATCH_XATTR=user.tswap.scratch SCRATCH_SIDECAR=.tswap-scratch
# kernel pseudo-filesystems (stat -f -c %T): not storage (pseudo_fs, and
# on fleet hosts fleet-target.sh)
readonly PSEUDO_FS_TYPES='proc sysfs debugfs tracefs securityfs configfs cgroupfs cgroup2fs devpts bpf_fs pstorefs efivarfs fusectl mqueue'

# target_id PATH: DEV:INODE of the file PATH names (symlinks followed).
target_id() { stat -L -c '%d:%i' -- "$1" 2>/dev/null; }

# scratch_birth PATH: the birth time of PATH (s.ns); status 1 where the
# filesystem does not report one.
scratch_birth() {
	local b
	b=$(stat -L -c '%.9W' -- "$1" 2>/dev/null) || return 1
	[[ $b =~ ^[1-9][0-9]*(\.[0-9]+)?$ ]] || return 1
	printf '%s\n' "$b"
}

# scratch_owned PATH: status 0 if PATH is a file this sweep created: its
# xattr names its current DEV:INODE, or its sidecar its DEV:INODE:BIRTH.
scratch_owned() {
	local path=$1 id mark='' birth
	id=$(target_id "$path") || return 1
	if command -v getfattr >/dev/null 2>&1; then
		mark=$(getfattr --only-values -n "$SCRATCH_XATTR" -- "$path" 2>/dev/null) || mark=''
		[ "$mark" != "$id" ] || return 0
	fi
	[ -f "$path$SCRATCH_SIDECAR" ] || return 1
	birth=$(scratch_birth "$path") || return 1
	mark=''
	read -r mark <"$path$SCRATCH_SIDECAR" || true
	[ "$mark" = "$id:$birth" ]
}

# scratch_create PATH: create PATH, which must not exist (O_EXCL: a file
# that appeared since the check is never taken over), and mark it ours.
scratch_create() {
	local path=$1 id birth
	mkdir -p -- "$(dirname -- "$path")"
	(set -C && : >"$path") 2>/dev/null ||
		die "$EXIT_USAGE" "refusing target $path: it could not be created as a new file (it appeared since the check, or the directory is not writable)"
	id=$(target_id "$path") || die "$EXIT_ERROR" "cannot stat $path"
	if command -v setfattr >/dev/null 2>&1 &&
		setfattr -n "$SCRATCH_XATTR" -v "$id" -- "$path" 2>/dev/null; then
		:
	elif birth=$(scratch_birth "$path"); then
		printf '%s\n' "$id:$birth" >"$path$SCRATCH_SIDECAR" ||
			die "$EXIT_ERROR" "cannot mark $path as the sweep's scratch file (no $SCRATCH_XATTR xattr, and $path$SCRATCH_SIDECAR cannot be written)"
	else
		warn "$path is not marked as the sweep's scratch file (the filesystem keeps neither the $SCRATCH_XATTR xattr nor a birth time): a later run on it needs --destructive"
	fi
	[ -z "$RUN" ] || printf '%s %s\n' "$id" "$path" >"$RUN/scratch-target"
}
# pseudo_fs PATH: print the type of a kernel pseudo-filesystem (procfs,
# sysfs, ...) that PATH, or the directory it would be created in, is on;
# status 1 if it is on none.
pseudo_fs() {
	local p=$1 t
	[ -e "$p" ] || p=$(dirname -- "$p")
	t=$(stat -L -f -c %T -- "$p" 2>/dev/null) || return 1
	[[ -n $t && " $PSEUDO_FS_TYPES " == *" $t "* ]] || return 1
	printf '%s\n' "$t"
}
