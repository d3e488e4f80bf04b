# shellcheck shell=bash
# target.sh - the target's safety and preparation (one host).
#
# Owns: refuse_target, device_in_use, target_loops, device_claimed,
# device_signature, check_target, check_existing_file, file_rules (a
# block device is written only with --destructive, an in-use or signed one
# only with --force; a regular file only if new or the sweep's own, see
# scratch.sh, else with --destructive, and one a loop device is stacked on
# only with --force; anything else is refused),
# prepare_target (a target file is written in full once, so reads hit the
# device; its inode locked first, lock.sh), target_identity,
# target_ids_keep, target_fds_open, target_fds_export, target_fds_close
# (what each path the points use names, kept once the targets are
# prepared and checked again before every fio run: a path that comes to
# name another device or file stops the sweep; fio gets the checked ones
# as descriptors). Reads: TARGET, DESTRUCTIVE, FORCE, SIZE, SIZE_BYTES.
# Writes: TARGET_KIND, TARGET_OWNED, TARGET_IDS, TARGET_FDS; the target
# file; RUN/prepare/.
# shellcheck disable=SC2016 # ${TSWAP_*} is literal: fio expands it

# the end of a target_identity that carries the sweep's scratch mark
readonly TARGET_MARKED=", the sweep's mark"

# refuse_target MESSAGE
refuse_target() { die "$EXIT_USAGE" "refusing target $TARGET: $*"; }

# device_in_use DEV: print why DEV (or a partition of it) is busy; 1 if
# not: mounted, swap, held (holders), a loop device stacked on it
# (target_loops), or claimed (an O_EXCL open fails: device_claimed). A
# check that cannot run (lsblk, findmnt, losetup, the O_EXCL open failing)
# refuses the device.
device_in_use() {
	local dev=$1 name mp real part out rc=0
	local -a names=()
	real=$(readlink -f "$dev")
	out=$(lsblk -nrpo NAME,MOUNTPOINT "$real" 2>&1) || rc=$?
	[ "$rc" = 0 ] || refuse_target "lsblk failed (exit $rc: ${out%%$'\n'*}): cannot tell whether the device is mounted"
	while read -r name mp; do
		if [ -n "$mp" ]; then
			printf 'mounted: %s on %s\n' "$name" "$mp"
			return 0
		fi
		[ -z "$name" ] || names+=("$name")
	done <<<"$out"
	out=$(awk 'NR > 1 { print $1 }' /proc/swaps 2>/dev/null) || out=''
	if grep -qxF "$real" <<<"$out"; then
		printf 'used as swap\n'
		return 0
	fi
	name=${real##*/}
	for part in /sys/class/block/"$name"/holders/* /sys/class/block/"$name"/"$name"*/holders/*; do
		if [ -e "$part" ]; then
			printf 'held by %s\n' "${part##*/}"
			return 0
		fi
	done
	rc=0
	out=$(findmnt -rno SOURCE 2>&1) || rc=$?
	[ "$rc" = 0 ] || refuse_target "findmnt failed (exit $rc: ${out%%$'\n'*}): cannot tell whether the device is mounted"
	if grep -qxF "$real" <<<"$out"; then
		printf 'mounted\n'
		return 0
	fi
	# the device and what lsblk lists under it (its partitions)
	[ "${#names[@]}" -gt 0 ] || names=("$real")
	# (status 0 found, 1 none, else the check could not run: its refusal
	# is printed, exit with it)
	for name in "${names[@]}"; do
		rc=0
		out=$(target_loops "$name") || rc=$?
		((rc <= 1)) || exit "$rc"
		if [ "$rc" = 0 ]; then
			printf '%s\n' "$out"
			return 0
		fi
	done
	rc=0
	out=$(device_claimed "$real") || rc=$?
	((rc <= 1)) || exit "$rc"
	if [ "$rc" = 0 ]; then
		printf '%s\n' "$out"
		return 0
	fi
	return 1
}

# target_loops PATH: print "backs loop device(s) LOOP..." when a loop
# device is stacked on PATH (its backing file is PATH: for a block device
# the same device number, for a file the same DEV:INODE); 1 if none.
# Writing PATH rewrites what the loop device holds (a filesystem mounted
# through it, at any offset). Found twice over: each loop device's
# backing_file in sysfs, its name resolved now, and `losetup -j`, which
# asks the kernel for the backing file's DEV:INODE (a name deleted since,
# or seen through another mount); losetup failing refuses the target.
target_loops() {
	local p=$1 want f back id out rc=0 l
	local -A hit=()
	want=$(stat -L -c '%F %t:%T %d:%i' -- "$p" 2>/dev/null) || return 1
	for f in /sys/block/loop*/loop/backing_file; do
		[ -f "$f" ] || continue
		back=''
		IFS= read -r back <"$f" 2>/dev/null || [ -n "$back" ] || continue
		back=${back% (deleted)}
		id=$(stat -L -c '%F %t:%T %d:%i' -- "$back" 2>/dev/null) || continue
		if [[ $want == block* ]]; then
			# a device: the same device number, whatever the node
			[ "${id% *}" = "${want% *}" ] || continue
		else
			[ "$id" = "$want" ] || continue
		fi
		f=${f%/loop/backing_file}
		hit[/dev/${f##*/}]=1
	done
	out=$(losetup -n -l -O NAME -j "$p" 2>&1) || rc=$?
	[ "$rc" = 0 ] || refuse_target "losetup -j failed (exit $rc: ${out%%$'\n'*}): cannot tell whether a loop device is stacked on it"
	for l in $out; do
		[[ $l == /dev/* ]] && hit[$l]=1
	done
	[ "${#hit[@]}" -gt 0 ] || return 1
	out=$(printf '%s\n' "${!hit[@]}" | sort -V)
	if [ "${#hit[@]}" = 1 ]; then
		printf 'backs loop device %s\n' "$out"
	else
		printf 'backs loop devices %s\n' "${out//$'\n'/ }"
	fi
}

# device_claimed DEV: print why when DEV is claimed (an O_EXCL open fails
# with EBUSY, as it does while a filesystem is mounted on it, or
# device-mapper, MD, or a program holds it exclusively); 1 if not. The
# open is python3's (bash has no O_EXCL); one that cannot run refuses.
device_claimed() {
	local out rc=0
	command -v python3 >/dev/null 2>&1 ||
		refuse_target "python3 is not installed: cannot tell whether the device is claimed (an O_EXCL open)"
	out=$(python3 -c 'import errno, os, sys
try:
    os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL))
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)) + ": " + e.strerror)
    sys.exit(10 if e.errno == errno.EBUSY else 11)' "$1" 2>&1) || rc=$?
	case $rc in
	0) return 1 ;;
	10) printf 'claimed: an O_EXCL open fails with EBUSY (a mounted filesystem, device-mapper, MD, or a program holds it)\n' ;;
	*) refuse_target "an O_EXCL open with python3 failed (exit $rc: ${out%%$'\n'*}): cannot tell whether the device is claimed" ;;
	esac
}

# device_signature DEV: print a filesystem/partition-table signature; 1 if
# none. blkid -p exits 2 when it finds nothing; any other failure (blkid
# missing, BusyBox's blkid without -p, an unreadable device) refuses the
# device: a signature check that cannot run never counts as "no signature".
device_signature() {
	local dev=$1 out rc=0
	out=$(blkid -p -o export "$dev" 2>&1) || rc=$?
	case $rc in
	0) ;;
	2) return 1 ;;
	*) refuse_target "blkid -p failed (exit $rc: ${out%%$'\n'*}): cannot tell whether the device holds a filesystem or partition table" ;;
	esac
	out=$(grep -E '^(TYPE|PTTYPE)=' <<<"$out") || out=''
	[ -z "$out" ] || out="${out//$'\n'/ } "
	if [ -n "$out" ]; then
		printf '%s\n' "$out"
		return 0
	fi
	return 1
}

check_target() {
	local writes=$1 why fs rc
	if [ -b "$TARGET" ]; then
		TARGET_KIND='block'
		if [ "$writes" = 1 ]; then
			need_tools blkid lsblk findmnt
			[ "$DESTRUCTIVE" = 1 ] ||
				refuse_target "it is a block device and the sweep writes to it (write points and the write ceiling destroy its data); pass --destructive, or --rw read"
			# status 0 found, 1 none, else the check could not run: its
			# refusal is printed, exit with it (even with --force)
			rc=0
			why=$(device_in_use "$TARGET") || rc=$?
			((rc <= 1)) || exit "$rc"
			if [ "$rc" = 0 ]; then
				[ "$FORCE" = 1 ] || refuse_target "the device is in use ($why); --force overrides"
				warn "writing to an in-use device ($why) because of --force"
			fi
			rc=0
			why=$(device_signature "$TARGET") || rc=$?
			((rc <= 1)) || exit "$rc"
			if [ "$rc" = 0 ]; then
				[ "$FORCE" = 1 ] || refuse_target "the device holds a signature ($why) - a filesystem or partition table would be destroyed; --force overrides"
				warn "overwriting a device with a signature ($why) because of --force"
			fi
		fi
	elif [ -e "$TARGET" ] && [ ! -f "$TARGET" ]; then
		refuse_target "not a regular file or a block device"
	elif fs=$(pseudo_fs "$TARGET"); then
		refuse_target "it is on $fs, a kernel pseudo-filesystem, not storage"
	elif [ -f "$TARGET" ]; then
		TARGET_KIND='file'
		check_existing_file "$writes"
	else
		TARGET_KIND='file'
		TARGET_OWNED=new
		scratch_sidecar_free "$TARGET" ||
			refuse_target "$TARGET$SCRATCH_SIDECAR, the name of its mark where the filesystem keeps no xattr (scratch.sh), is taken by something that is not a tswap mark; move it away, or give another --target"
	fi
	return 0
}

# check_existing_file WRITES: an existing regular file is written only if
# the sweep created it (scratch.sh) or with --destructive (file_rules).
check_existing_file() {
	local have
	# fio's writes (and a fill) would fail on every point
	[ "$1" = 0 ] || [ -w "$TARGET" ] ||
		refuse_target "the sweep writes to it and it is not writable (a read-only file system, or no permission)"
	if scratch_owned "$TARGET"; then
		TARGET_OWNED=ours
		file_loops "$1"
		return 0
	fi
	TARGET_OWNED=theirs
	have=$(stat -L -c %s -- "$TARGET")
	# without --destructive it is never written: file_rules says so
	[ "$DESTRUCTIVE" = 0 ] || file_loops "$1"
	file_rules "target $TARGET" "$TARGET" "$1" "$((have >= SIZE_BYTES))" " ($have bytes)"
}

# file_loops WRITES: a file the sweep writes (WRITES 1) or fills (shorter
# than --size) with a loop device stacked on it is in use: only with
# --force (target_loops).
file_loops() {
	local why rc=0 have
	if [ "$1" = 0 ]; then
		have=$(stat -L -c %s -- "$TARGET")
		((have < SIZE_BYTES)) || return 0
	fi
	why=$(target_loops "$TARGET") || rc=$?
	((rc <= 1)) || exit "$rc"
	[ "$rc" = 0 ] || return 0
	[ "$FORCE" = 1 ] || refuse_target "the file is in use ($why); --force overrides"
	warn_once "writing to an in-use file $TARGET ($why) because of --force"
}

# file_rules WHAT NAME WRITES BIG [HAVE]: the rules for an existing regular
# file the sweep did not create, here or on a fleet host (fleet-target.sh):
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
	local have=0 alloc=0 need=$SIZE_BYTES dir=${1:-$RUN/prepare} rc=0 blocks bsize
	[ "$TARGET_KIND" = file ] || return 0
	if [ "$TARGET_OWNED" = new ]; then
		scratch_create "$TARGET"
		TARGET_OWNED=ours
	fi
	# a new file's inode (a hard link to it is the same target), a rank
	# file's: locked before any I/O (lock.sh)
	lock_target_inode "$TARGET"
	if [ -f "$TARGET" ]; then
		blocks=$(stat -L -c '%s %b %B' -- "$TARGET") || die "$EXIT_ERROR" "cannot stat $TARGET"
		read -r have blocks bsize <<<"$blocks"
		alloc=$((blocks * bsize))
	fi
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
	rm -rf "$dir"
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
	local f mode maj min id birth
	f=$(stat -L -c '%f %t %T %d:%i %.9W' -- "$1" 2>/dev/null) || {
		printf 'no file\n'
		return 0
	}
	read -r mode maj min id birth <<<"$f"
	case $((16#$mode & 16#f000)) in
	$((16#6000))) printf 'block device %d:%d\n' "$((16#$maj))" "$((16#$min))" ;;
	$((16#8000)))
		f="file $id"
		[[ ! $birth =~ ^[1-9] ]] || f+=", born $birth"
		[ -n "${2:-}" ] || ! scratch_owned "$1" || f+=$TARGET_MARKED
		printf '%s\n' "$f"
		;;
	*) stat -L -c '%F' -- "$1" 2>/dev/null || printf 'unknown\n' ;;
	esac
}

# target_ids_keep: TARGET_IDS[PATH]: the target_identity of each path the
# points use (precondition_targets: the single target, the rank files),
# once they are checked and prepared (prepare_targets).
target_ids_keep() {
	local p list
	TARGET_IDS=()
	list=$(precondition_targets)
	while IFS= read -r p; do
		# shellcheck disable=SC2004 # TARGET_IDS: associative (state.sh)
		[ -z "$p" ] || TARGET_IDS[$p]=$(target_identity "$p")
	done <<<"$list"
	return 0
}

# target_fds_open: before each fio run (run_fio: every point, the
# preconditioning), open each path of TARGET_IDS read-only
# (TARGET_FDS[PATH]=FD) and check that the path and the open file are
# still what the path named once prepared (the sweep's mark too). One that
# changed (moved or replaced, a symlink pointed elsewhere, the mark gone)
# is said in one line, status 1, nothing held: run_fio stops the sweep
# (exit 2) before fio starts, as a new file or device there never passed
# the target rules. fio opens the descriptors (/proc/self/fd/FD:
# target_fds_export), so a change after the check does not redirect its
# writes either.
target_fds_open() {
	local p fd now held was
	target_fds_close
	for p in "${!TARGET_IDS[@]}"; do
		was=${TARGET_IDS[$p]}
		now=$(target_identity "$p")
		held=$was
		if [ "$now" = "$was" ]; then
			if { exec {fd}<"$p"; } 2>/dev/null; then
				# shellcheck disable=SC2004 # TARGET_FDS: associative (state.sh)
				TARGET_FDS[$p]=$fd
				held=$(target_identity "/proc/self/fd/$fd" nomark)
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

# target_fds_export: in fio's subshell (run_fio), the target and rank-file
# variables (TSWAP_TARGET, TSWAP_RANK*) of the paths held open
# (target_fds_open) name their descriptors instead.
target_fds_export() {
	local r h f v slots
	[ "${#TARGET_FDS[@]}" -gt 0 ] || return 0
	[ -z "${TARGET_FDS[$TARGET]:-}" ] || export TSWAP_TARGET="/proc/self/fd/${TARGET_FDS[$TARGET]}"
	slots=$(rank_slots)
	while IFS=$'\t' read -r r h; do
		[ -n "$r" ] || continue
		f=$(rank_file "$r" "$h")
		[ -n "${TARGET_FDS[$f]:-}" ] || continue
		v=$(rank_var "$r" "$h")
		export "$v=/proc/self/fd/${TARGET_FDS[$f]}"
	done <<<"$slots"
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
