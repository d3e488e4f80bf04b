# shellcheck shell=bash
# target.sh - the target's preparation and identity (one host).
#
# Whether a target may be used is decided before anything is written, in
# one Python stage (ranks.sh check_targets: tswap/cli/targets_check.py;
# the rules: tswap/executor/target_rules.py, docs/sweep.md "Targets").
# Owns: refuse_target; file_rules (an existing regular file the sweep did
# not create, on a fleet host: fleet-target.sh; the same rules on this
# host: target_rules.py file_rules); prepare_target (a target file is
# written in full once, so reads hit the device; its inode locked first,
# lock.sh); target_identity, target_identity_into, target_identity_of,
# target_ids_keep, target_same, target_fds_open, target_fds_export,
# target_fds_close, target_refs_close (what each path the points use
# names, kept once the targets are prepared, held open, and checked again
# before every fio run: a path that comes to name another device or file
# stops the sweep; fio gets the checked ones as descriptors: the point
# stage's --fd, tswap/executor/point.py fio_env).
# Reads: TARGET, TARGET_KIND, TARGET_OWNED, DESTRUCTIVE, SIZE, SIZE_BYTES.
# Writes: TARGET_OWNED, TARGET_IDS, TARGET_REFS, TARGET_FDS; the target file;
# RUN/prepare/.
# shellcheck disable=SC2016 # ${TSWAP_*} is literal: fio expands it

# the end of a target_identity that carries the sweep's scratch mark
readonly TARGET_MARKED=", the sweep's mark"

# refuse_target MESSAGE
refuse_target() { die "$EXIT_USAGE" "refusing target $TARGET: $*"; }

# file_rules WHAT NAME WRITES BIG [HAVE]: the rules for an existing regular
# file the sweep did not create on a fleet host (fleet-target.sh; this
# host's: tswap/executor/target_rules.py file_rules):
# written only with --destructive; a read-only sweep may read one at least
# --size long (BIG 1; fio lays out, i.e. writes, a shorter one). WHAT names
# it in a refusal, NAME in the warning, HAVE is its size, said.
file_rules() {
	local what=$1 name=$2 writes=$3 big=$4 have=${5:-}
	if [ "$DESTRUCTIVE" = 1 ]; then
		if [ "$writes" = 1 ] || [ "$big" = 0 ]; then
			warn_once "overwriting $name, a file the sweep did not create, because of --destructive"
		fi
	elif [ "$writes" = 1 ]; then
		die "$EXIT_USAGE" "refusing $what: an existing file the sweep did not create, and the sweep writes to it (its data would be destroyed); pass --destructive, a new path, or --rw read"
	elif [ "$big" = 0 ]; then
		die "$EXIT_USAGE" "refusing $what: an existing file the sweep did not create, shorter$have than --size $SIZE: fio would write it out to full size; pass --destructive, a new path, or a smaller --size"
	fi
	return 0
}

# prepare_target [DIR]: DIR (default RUN/prepare) keeps the fio job that
# writes the target; ranks.sh gives each rank file its own.
prepare_target() {
	local have=0 alloc=0 need=$SIZE_BYTES dir=${1:-$RUN/prepare} rc=0 blocks bsize id=''
	[ "$TARGET_KIND" = file ] || return 0
	if [ "$TARGET_OWNED" = new ]; then
		# a new, empty file (O_EXCL): its DEV:INODE from the mark's stat
		scratch_create "$TARGET" id
		id=${id/:/-}
		TARGET_OWNED=ours
	fi
	# a new file's inode (a hard link to it is the same target), a rank
	# file's: locked before any I/O (lock.sh); its DEV-INODE and sizes
	# from one stat
	if [ -z "$id" ] && [ -f "$TARGET" ]; then
		blocks=$(stat -L -c '%d-%i %s %b %B' -- "$TARGET") || die "$EXIT_ERROR" "cannot stat target $TARGET for its lock"
		read -r id have blocks bsize <<<"$blocks"
		alloc=$((blocks * bsize))
	fi
	lock_target_inode "$TARGET" "$id"
	if [ "$TARGET_OWNED" = theirs ] && [ "$DESTRUCTIVE" = 0 ]; then
		# a read-only sweep of the user's file: never written
		((have >= need)) || refuse_target "an existing file the sweep did not create, shorter than --size $SIZE"
	elif [ -d "$dir" ] && [ ! -f "$dir/done" ]; then
		have=0 # an interrupted prepare: fill again
	fi
	if ((have >= need)); then
		if ((alloc < need)); then
			note "the target file has holes ($alloc of $need bytes allocated): reads of a hole never reach the device; write the file first"
			say "note: $TARGET has holes: reads of holes never reach the device"
		fi
		return 0
	fi
	say "preparing $TARGET: writing $SIZE with fio (O_DIRECT) so reads hit the device"
	# (rm only if there is one: an interrupted prepare's)
	if [ -e "$dir" ] || [ -L "$dir" ]; then rm -rf "$dir"; fi
	mkdir -p "$dir"
	# Size the file first: fio unlinks and recreates a file it has to extend,
	# which would replace the run directory's symlink to an awkward path.
	fallocate -l "$need" -- "$TARGET" 2>/dev/null || truncate -s "$need" -- "$TARGET" ||
		die "$EXIT_ERROR" "cannot create $TARGET"
	printf '[global]\nioengine=libaio\nfilename=${TSWAP_TARGET}\nsize=${TSWAP_SIZE}\ndirect=1\nbs=1m\niodepth=16\n\n[prepare]\nrw=write\nend_fsync=1\n' >"$dir/job.fio"
	run_fio "$dir" 1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		blocks=$(tail -n 3 -- "$dir/fio.stderr" 2>/dev/null) || blocks=''
		die "$EXIT_ERROR" "could not write $TARGET with O_DIRECT (fio exit $rc): ${blocks//$'\n'/ }"
	fi
	: >"$dir/done"
}

# target_identity PATH [NOMARK]: what PATH names now: "block device
# MAJ:MIN", "file DEV:INODE" (", born BIRTH" where the filesystem keeps a
# birth time, and without NOMARK ", the sweep's mark" when it carries the
# sweep's scratch mark: scratch.sh), else "no file" or its type.
target_identity() {
	local f
	target_identity_into f "$@"
	printf '%s\n' "$f"
}

# target_identity_into VAR PATH [NOMARK]: target_identity into VAR, with
# one stat process (and getfattr for a regular file's mark) and no
# subshell.
target_identity_into() {
	local _f
	_f=$(stat -L -c '%f %t %T %d:%i %.9W %F' -- "$2" 2>/dev/null) || {
		printf -v "$1" 'no file'
		return 0
	}
	target_identity_of "$1" "$_f" "$2" "${3:-}"
}

# target_identity_of VAR STAT PATH [NOMARK]: target_identity into VAR
# from STAT, the line of `stat -L -c '%f %t %T %d:%i %.9W %F'` of PATH.
target_identity_of() {
	local -n _ti=$1
	local _mode _maj _min _id _birth _type
	read -r _mode _maj _min _id _birth _type <<<"$2"
	case $((16#$_mode & 16#f000)) in
	$((16#6000))) printf -v _ti 'block device %d:%d' "$((16#$_maj))" "$((16#$_min))" ;;
	$((16#8000)))
		_ti="file $_id"
		if [[ $_birth =~ ^[1-9][0-9]*(\.[0-9]+)?$ ]]; then
			_ti+=", born $_birth"
			_id+=":$_birth"
		fi
		# the mark from this stat (scratch_mark's DEV:INODE[:BIRTH])
		[ -n "${4:-}" ] || ! scratch_owned "$3" "$_id" || _ti+=$TARGET_MARKED
		;;
	*) _ti=${_type:-unknown} ;;
	esac
}

# target_ids_keep: TARGET_IDS[PATH]: the target_identity of each path the
# points use (precondition_targets: the single target, the rank files),
# once they are checked and prepared (prepare_targets); and
# TARGET_REFS[PATH]=FD: each file or device held open read-only from then
# on, once its descriptor is checked to be what TARGET_IDS says (a file
# held open keeps its inode: no other file can get its DEV:INODE while
# the sweep runs).
target_ids_keep() {
	local p list id fd held out opened
	local -a st
	target_refs_close
	TARGET_IDS=()
	list=$(precondition_targets)
	while IFS= read -r p; do
		[ -n "$p" ] || continue
		# a file or a device: opened, and the descriptor and the path
		# stat'ed at once (a FIFO is never opened: it could block)
		st=() opened=0
		if { [ -f "$p" ] || [ -b "$p" ]; } && { exec {fd}<"$p"; } 2>/dev/null; then
			opened=1
			out=$(stat -L -c '%f %t %T %d:%i %.9W %F' -- "/proc/self/fd/$fd" "$p" 2>/dev/null) || out=''
			mapfile -t st <<<"$out"
		fi
		if [ "${#st[@]}" = 2 ]; then
			target_identity_of id "${st[1]}" "$p"
			target_identity_of held "${st[0]}" "/proc/self/fd/$fd" nomark
		else
			target_identity_into id "$p"
			held=''
		fi
		# shellcheck disable=SC2004 # TARGET_IDS: associative (state.sh)
		TARGET_IDS[$p]=$id
		if [ -n "$held" ] && [ "$held" = "${id%"$TARGET_MARKED"}" ]; then
			# shellcheck disable=SC2004 # TARGET_REFS: associative (state.sh)
			TARGET_REFS[$p]=$fd
		elif [ "$opened" = 1 ]; then
			exec {fd}<&-
		fi
	done <<<"$list"
	return 0
}

# target_same PATH FD: status 0 when PATH is still what it named when
# kept, as target_identity and the descriptor FD would say, without a
# process for the identity: PATH and FD name the very file or device node
# held open since (TARGET_REFS: test -ef, same device and inode), and a
# file's scratch mark is there as it was (scratch_owned, with the mark of
# the kept DEV:INODE[:BIRTH]). Status 1 tells nothing: target_fds_open
# then asks target_identity.
target_same() {
	local p=$1 fd=$2 ref=${TARGET_REFS[$1]:-} was=${TARGET_IDS[$1]} id marked=0 want=0
	[ -n "$ref" ] && [ "$p" -ef "/proc/self/fd/$ref" ] && [ "/proc/self/fd/$fd" -ef "/proc/self/fd/$ref" ] || return 1
	[[ $was == 'file '* ]] || return 0
	id=${was#file }
	id=${id%"$TARGET_MARKED"}
	[[ $id != *', born '* ]] || id="${id%%, born *}:${id#*, born }"
	! scratch_owned "$p" "$id" || marked=1
	[[ $was != *"$TARGET_MARKED" ]] || want=1
	[ "$marked" = "$want" ]
}

# target_fds_open: before each fio run (run_fio: every point, the
# preconditioning), open each path of TARGET_IDS read-only
# (TARGET_FDS[PATH]=FD) and check that the path and the open file are
# still what the path named once prepared (the sweep's mark too). One that
# changed (moved or replaced, a symlink pointed elsewhere, the mark gone)
# is said in one line, status 1, nothing held: run_fio stops the sweep
# (exit 2) before fio starts, as a new file or device there never passed
# the target rules. fio opens the descriptors (/proc/self/fd/FD: the
# point stage's --fd, tswap/executor/point.py fio_env), so a change after
# the check does not redirect its writes either. The file held since target_ids_keep answers first
# (target_same); else the identities are compared as strings.
target_fds_open() {
	local p fd now held was
	target_fds_close
	for p in "${!TARGET_IDS[@]}"; do
		was=${TARGET_IDS[$p]}
		# the path names the file held since it was kept: open it, and
		# check what was opened
		if [ -n "${TARGET_REFS[$p]:-}" ] && [ "$p" -ef "/proc/self/fd/${TARGET_REFS[$p]}" ] &&
			{ exec {fd}<"$p"; } 2>/dev/null; then
			if target_same "$p" "$fd"; then
				# shellcheck disable=SC2004 # TARGET_FDS: associative (state.sh)
				TARGET_FDS[$p]=$fd
				continue
			fi
			exec {fd}<&-
		fi
		target_identity_into now "$p"
		held=$was
		if [ "$now" = "$was" ]; then
			if { exec {fd}<"$p"; } 2>/dev/null; then
				# shellcheck disable=SC2004 # TARGET_FDS: associative (state.sh)
				TARGET_FDS[$p]=$fd
				target_identity_into held "/proc/self/fd/$fd" nomark
				[ "$held" = "${was%"$TARGET_MARKED"}" ] || now=$held
			else
				now="$now, which cannot be opened"
			fi
		fi
		if [ "$now" != "$was" ]; then
			target_fds_close
			warn "refusing target $p: it changed since the sweep checked it (was $was; now $now): stopped, nothing more is written to it; finished points are kept"
			return 1
		fi
	done
	return 0
}

# target_refs_close: close the descriptors of target_ids_keep (before
# they are taken again).
target_refs_close() {
	local p fd
	for p in "${!TARGET_REFS[@]}"; do
		fd=${TARGET_REFS[$p]}
		exec {fd}<&-
	done
	TARGET_REFS=()
}

# target_fds_close: close the descriptors of target_fds_open.
target_fds_close() {
	local p fd
	for p in "${!TARGET_FDS[@]}"; do
		fd=${TARGET_FDS[$p]}
		exec {fd}<&-
	done
	TARGET_FDS=()
}
