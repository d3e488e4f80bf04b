# shellcheck shell=bash
# target.sh - the target's safety and preparation (one host).
#
# Owns: refuse_target, device_in_use, device_signature, check_target (a
# block device is written only with --destructive, an in-use or signed one
# only with --force; anything else but a regular file is refused),
# prepare_target (a target file is written in full once, so reads hit the
# device). Reads: TARGET, DESTRUCTIVE, FORCE, SIZE, SIZE_BYTES.
# Writes: TARGET_KIND; the target file; RUN/prepare/.
# shellcheck disable=SC2016 # ${TSWAP_*} is literal: fio expands it

# refuse_target MESSAGE
refuse_target() { die "$EXIT_USAGE" "refusing target $TARGET: $*"; }

# device_in_use DEV: print why DEV (or a partition of it) is busy; 1 if not.
device_in_use() {
	local dev=$1 name mp real part
	real=$(readlink -f "$dev")
	while read -r name mp; do
		if [ -n "$mp" ]; then
			printf 'mounted: %s on %s\n' "$name" "$mp"
			return 0
		fi
	done < <(lsblk -nrpo NAME,MOUNTPOINT "$real" 2>/dev/null)
	if awk 'NR > 1 { print $1 }' /proc/swaps 2>/dev/null | grep -qxF "$real"; then
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
	if findmnt -rno SOURCE 2>/dev/null | grep -qxF "$real"; then
		printf 'mounted\n'
		return 0
	fi
	return 1
}

# device_signature DEV: print a filesystem/partition-table signature; 1 if none.
device_signature() {
	local dev=$1 out
	out=$(blkid -p -o export "$dev" 2>/dev/null | grep -E '^(TYPE|PTTYPE)=' | tr '\n' ' ') || true
	if [ -n "$out" ]; then
		printf '%s\n' "$out"
		return 0
	fi
	return 1
}

check_target() {
	local writes=$1 why
	if [ -b "$TARGET" ]; then
		TARGET_KIND='block'
		if [ "$writes" = 1 ]; then
			[ "$DESTRUCTIVE" = 1 ] ||
				refuse_target "it is a block device and the sweep writes to it (write points and the write ceiling destroy its data); pass --destructive, or --rw read"
			if why=$(device_in_use "$TARGET"); then
				[ "$FORCE" = 1 ] || refuse_target "the device is in use ($why); --force overrides"
				warn "writing to an in-use device ($why) because of --force"
			fi
			if why=$(device_signature "$TARGET"); then
				[ "$FORCE" = 1 ] || refuse_target "the device holds a signature ($why) - a filesystem or partition table would be destroyed; --force overrides"
				warn "overwriting a device with a signature ($why) because of --force"
			fi
		fi
	elif [ -e "$TARGET" ] && [ ! -f "$TARGET" ]; then
		refuse_target "not a regular file or a block device"
	else
		TARGET_KIND='file'
	fi
	return 0
}

# prepare_target [DIR]: DIR (default RUN/prepare) keeps the fio job that
# writes the target; ranks.sh gives each rank file its own.
prepare_target() {
	local have=0 alloc=0 need=$SIZE_BYTES dir=${1:-$RUN/prepare} rc=0 blocks bsize
	[ "$TARGET_KIND" = file ] || return 0
	mkdir -p "$(dirname "$TARGET")"
	if [ -f "$TARGET" ]; then
		read -r have blocks bsize < <(stat -c '%s %b %B' -- "$TARGET")
		alloc=$((blocks * bsize))
	fi
	if [ -d "$dir" ] && [ ! -f "$dir/done" ]; then
		have=0 # an interrupted prepare: fill again
	elif ((have >= need)); then
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
		die "$EXIT_ERROR" "could not write $TARGET with O_DIRECT (fio exit $rc): $(tail -n 3 "$dir/fio.stderr" | tr '\n' ' ')"
	fi
	: >"$dir/done"
}
