# shellcheck shell=bash
# scratch.sh - which target files are the sweep's own (docs/sweep.md,
# "Targets: what the sweep writes to").
#
# The sweep writes only to a file it created itself, to a new path (which
# it then creates), or, with --destructive, to any other file. A file it
# creates is marked with a mark tied to that very file, so that neither a
# copy nor a new file at the same path (even one given the same DEV:INODE:
# ext4 reuses a deleted file's inode number at once) is taken for it. The
# mark is DEV:INODE:BIRTH, BIRTH the file's birth time in ns (statx btime),
# which a later file or a copy (cp -a copies xattrs, not the birth time)
# cannot share; where the filesystem reports no birth time, DEV:INODE:
# - the extended attribute user.tswap.scratch, where setfattr and the
#   filesystem allow it (it lives on the inode: deleting the file deletes
#   it);
# - else a sidecar file TARGET.tswap-scratch, a regular file (never a
#   symlink) holding DEV:INODE:BIRTH; an existing one is replaced only if
#   it holds such a mark (a deleted target's), else the new target is
#   removed again and the run refused; where the filesystem reports no
#   birth time the file is not marked, and a later run (or --resume) needs
#   --destructive.
# A fresh run and --resume apply the same test (scratch_owned); the
# identity kept in RUN/scratch-target is a record, never taken as a mark.
#
# Owns: scratch_mark, scratch_owned,
# scratch_sidecar_free, scratch_sidecar, scratch_create, PSEUDO_FS_TYPES.
# Whether a file carries the mark when the targets are checked:
# tswap/executor/target_facts.py (the same test, in Python).
# Reads: RUN. Writes: the mark (xattr or sidecar), RUN/scratch-target.

readonly SCRATCH_XATTR=user.tswap.scratch SCRATCH_SIDECAR=.tswap-scratch
# shellcheck disable=SC2034 # read by fleet-target.sh
# kernel pseudo-filesystems (stat -f -c %T): not storage, on fleet hosts
# (fleet-target.sh; this host's: tswap/executor/target_facts.py PSEUDO_FS)
readonly PSEUDO_FS_TYPES='proc sysfs debugfs tracefs securityfs configfs cgroupfs cgroup2fs devpts bpf_fs pstorefs efivarfs fusectl mqueue'

# scratch_mark PATH: the mark PATH would carry: DEV:INODE:BIRTH (BIRTH:
# its birth time, s.ns), or DEV:INODE where the filesystem reports no
# birth time; one stat.
scratch_mark() {
	local f id birth
	f=$(stat -L -c '%d:%i %.9W' -- "$1" 2>/dev/null) || return 1
	read -r id birth <<<"$f"
	[[ ! $birth =~ ^[1-9][0-9]*(\.[0-9]+)?$ ]] || id+=":$birth"
	printf '%s\n' "$id"
}

# scratch_owned PATH [MARK]: status 0 if PATH is a file this sweep
# created: its xattr or its sidecar (a regular file) holds its
# scratch_mark (MARK: that mark, already read); a sidecar only with a
# birth time in it.
scratch_owned() {
	local path=$1 side=$1$SCRATCH_SIDECAR want=${2:-} mark=''
	[ -n "$want" ] || want=$(scratch_mark "$path") || return 1
	if command -v getfattr >/dev/null 2>&1; then
		mark=$(getfattr --only-values -n "$SCRATCH_XATTR" -- "$path" 2>/dev/null) || mark=''
		[ "$mark" != "$want" ] || return 0
	fi
	[[ $want == *:*:* ]] && [ -f "$side" ] && [ ! -L "$side" ] || return 1
	mark=''
	read -r mark <"$side" || true
	[ "$mark" = "$want" ]
}

# scratch_sidecar_free PATH: status 0 if PATH's sidecar name is free, or
# holds an earlier sidecar mark (a regular file of one DEV:INODE:BIRTH
# line: a deleted target's); 1 when something else is there (a user's
# file, a symlink, a directory).
scratch_sidecar_free() {
	local side=$1$SCRATCH_SIDECAR old=''
	[ -e "$side" ] || [ -L "$side" ] || return 0
	[ -f "$side" ] && [ ! -L "$side" ] && [ "$(stat -c %s -- "$side")" -le 64 ] || return 1
	read -r old <"$side" || true
	[[ $old =~ ^[0-9]+:[0-9]+:[1-9][0-9]*(\.[0-9]+)?$ ]] && [ "$(wc -l <"$side")" = 1 ]
}

# scratch_sidecar PATH MARK: write MARK into PATH's sidecar: a new file
# (O_EXCL), or in place of an earlier sidecar mark (scratch_sidecar_free).
# Status 1 when something else is there: it is left alone.
scratch_sidecar() {
	local side=$1$SCRATCH_SIDECAR tmp
	scratch_sidecar_free "$1" || return 1
	tmp=$side.tmp.$$
	(set -C && printf '%s\n' "$2" >"$tmp") 2>/dev/null || return 1
	mv -f -T -- "$tmp" "$side" || { rm -f -- "$tmp"; return 1; }
}

# scratch_create PATH [VAR]: create PATH, which must not exist (O_EXCL: a
# file that appeared since the check is never taken over), and mark it
# ours; a sidecar in the way (scratch_sidecar) removes PATH again and
# exits 2. VAR: the new file's DEV:INODE.
scratch_create() {
	local path=$1 id mark parent
	dirname_into parent "$path"
	[ -d "$parent" ] || mkdir -p -- "$parent"
	(set -C && : >"$path") 2>/dev/null ||
		die "$EXIT_USAGE" "refusing target $path: it could not be created as a new file (it appeared since the check, or the directory is not writable)"
	mark=$(scratch_mark "$path") || die "$EXIT_ERROR" "cannot stat $path"
	id=$mark
	[[ $mark != *:*:* ]] || id=${mark%:*}
	if command -v setfattr >/dev/null 2>&1 &&
		setfattr -n "$SCRATCH_XATTR" -v "$mark" -- "$path" 2>/dev/null; then
		:
	elif [[ $mark == *:*:* ]]; then
		if ! scratch_sidecar "$path" "$mark"; then
			rm -f -- "$path"
			die "$EXIT_USAGE" "refusing target $path: $path$SCRATCH_SIDECAR, where the sweep would mark it (the filesystem keeps no $SCRATCH_XATTR xattr), exists and is not a tswap mark; move it away, or give another --target"
		fi
	else
		warn "$path is not marked as the sweep's scratch file (the filesystem keeps neither the $SCRATCH_XATTR xattr nor a birth time): a later run on it needs --destructive"
	fi
	[ -z "$RUN" ] || printf '%s %s\n' "$id" "$path" >"$RUN/scratch-target"
	[ -z "${2:-}" ] || printf -v "$2" '%s' "$id"
}
