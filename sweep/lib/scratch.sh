# shellcheck shell=bash
# scratch.sh - which target files are the sweep's own (docs/sweep.md,
# "Targets: what the sweep writes to").
#
# The sweep writes only to a file it created itself, to a new path (which
# it then creates), or, with --destructive, to any other file. A file it
# creates is marked with its identity (DEV:INODE, so a copy or a file put
# back at the same path is not taken for it): the extended attribute
# user.tswap.scratch where setfattr and the filesystem allow it, else a
# sidecar file TARGET.tswap-scratch; the identity is also kept in
# RUN/scratch-target, so --resume recognises the file even where neither
# mark survived.
#
# Owns: target_id, scratch_owned, scratch_create, pseudo_fs. Reads: RUN.
# Writes: the mark (xattr or sidecar), RUN/scratch-target.

readonly SCRATCH_XATTR=user.tswap.scratch SCRATCH_SIDECAR=.tswap-scratch

# target_id PATH: DEV:INODE of the file PATH names (symlinks followed).
target_id() { stat -L -c '%d:%i' -- "$1" 2>/dev/null; }

# scratch_owned PATH: status 0 if PATH is a file this sweep created (its
# mark, or RUN/scratch-target, names the file's current DEV:INODE).
scratch_owned() {
	local path=$1 id mark=''
	id=$(target_id "$path") || return 1
	if command -v getfattr >/dev/null 2>&1; then
		mark=$(getfattr --only-values -n "$SCRATCH_XATTR" -- "$path" 2>/dev/null) || mark=''
		[ "$mark" != "$id" ] || return 0
	fi
	if [ -f "$path$SCRATCH_SIDECAR" ]; then
		read -r mark <"$path$SCRATCH_SIDECAR" || true
		[ "$mark" != "$id" ] || return 0
	fi
	if [ -n "$RUN" ] && [ -f "$RUN/scratch-target" ]; then
		read -r mark _ <"$RUN/scratch-target" || true
		[ "$mark" != "$id" ] || return 0
	fi
	return 1
}

# scratch_create PATH: create PATH, which must not exist (O_EXCL: a file
# that appeared since the check is never taken over), and mark it ours.
scratch_create() {
	local path=$1 id
	mkdir -p -- "$(dirname -- "$path")"
	(set -C && : >"$path") 2>/dev/null ||
		die "$EXIT_USAGE" "refusing target $path: it could not be created as a new file (it appeared since the check, or the directory is not writable)"
	id=$(target_id "$path") || die "$EXIT_ERROR" "cannot stat $path"
	if ! { command -v setfattr >/dev/null 2>&1 &&
		setfattr -n "$SCRATCH_XATTR" -v "$id" -- "$path" 2>/dev/null; }; then
		printf '%s\n' "$id" >"$path$SCRATCH_SIDECAR" ||
			die "$EXIT_ERROR" "cannot mark $path as the sweep's scratch file (no $SCRATCH_XATTR xattr, and $path$SCRATCH_SIDECAR cannot be written)"
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
	case $t in
	proc | sysfs | debugfs | tracefs | securityfs | configfs | cgroupfs | cgroup2fs | devpts | bpf_fs | pstorefs | efivarfs | fusectl | mqueue)
		printf '%s\n' "$t"
		return 0
		;;
	esac
	return 1
}
