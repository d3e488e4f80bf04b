# shellcheck shell=bash
# LOOPDEV and FULLDEV are read by the tests.
# shellcheck disable=SC2034
#
# tests/devices.bash - loop devices and mounts for a test, undone by
# common_teardown (tests/helpers.bash, which loads this file) through
# $CLEANUP_LIST, last first:
#
#   loop_setup SIZE_MB [SECTOR]  a loop device over a fresh file in
#                                $SCRATCH; sets $LOOPDEV
#   loop_attach IMG [ARGS...]    a loop device over IMG; prints it
#   loop_detach_file IMG         detach every loop device over IMG
#   full_loop                    $FULLDEV: 16 MiB over a 4 MiB tmpfs (ENOSPC)
#   mount_scratch DIR TYPE [OPTS]  mount TYPE on DIR
#   mount_device DEV DIR [OPTS]    mount the filesystem on DEV on DIR

# loop_attach IMG [LOSETUP_ARGS...] - prints the loop device now over IMG
# (a file in $SCRATCH; losetup --find --show --direct-io=on ARGS IMG),
# or fails the test. Teardown detaches the devices over IMG, not a device
# by name: once a test detaches its device, another test may get that
# name for its own.
loop_attach() {
	local img=$1 dev
	shift
	dev=$(losetup --find --show --direct-io=on "$@" "$img") ||
		fail "losetup --find --show --direct-io=on $* $img failed"
	printf 'loop\t%s\n' "$img" >>"$CLEANUP_LIST"
	printf '%s\n' "$dev"
}

# loop_detach_file IMG - detach every loop device over IMG.
loop_detach_file() {
	local dev
	for dev in $(losetup -n -O NAME -j "$1" 2>/dev/null || true); do
		losetup -d "$dev" 2>/dev/null || true
	done
}

# loop_setup SIZE_MB [SECTOR_SIZE] - a loop device over a fresh zeroed
# file in $SCRATCH (loop_attach); the device is in $LOOPDEV.
loop_setup() {
	local size_mb=$1 sector=${2:-} img
	local -a extra=()
	img=$(mktemp "$SCRATCH/loop.XXXXXX.img")
	truncate -s "${size_mb}M" "$img"
	if [ -n "$sector" ]; then
		extra=(--sector-size "$sector")
	fi
	LOOPDEV=$(loop_attach "$img" "${extra[@]}") || fail "no loop device over $img"
}

# full_loop - $FULLDEV: a loop device over a sparse 16 MiB file,
# $SCRATCH/small/backing.img, on a 4 MiB tmpfs: writes past the first
# 4 MiB of data complete with ENOSPC (errors.bats, uring.bats).
full_loop() {
	requires loopdev
	mount_scratch "$SCRATCH/small" tmpfs size=4m
	truncate -s 16M "$SCRATCH/small/backing.img"
	FULLDEV=$(loop_attach "$SCRATCH/small/backing.img") || fail "losetup over a tmpfs file failed"
}

# mount_scratch DIR TYPE [OPTIONS] - mount a TYPE filesystem on DIR;
# unmounted in teardown.
mount_scratch() {
	local dir=$1 type=$2 opts=${3:-}
	mkdir -p "$dir"
	if [ -n "$opts" ]; then
		mount -t "$type" -o "$opts" "$type" "$dir" || fail "mount -t $type -o $opts on $dir failed"
	else
		mount -t "$type" "$type" "$dir" || fail "mount -t $type on $dir failed"
	fi
	printf 'mount\t%s\n' "$dir" >>"$CLEANUP_LIST"
}

# mount_device DEV DIR [OPTIONS] - mount the filesystem on DEV (or a file)
# on DIR, with OPTIONS (mount -o: offset=N stacks a loop device); unmounted
# in teardown (before the loop devices made earlier are detached).
mount_device() {
	local dev=$1 dir=$2 opts=${3:-}
	mkdir -p "$dir"
	mount ${opts:+-o "$opts"} "$dev" "$dir" || fail "mount ${opts:+-o $opts }$dev on $dir failed"
	printf 'mount\t%s\n' "$dir" >>"$CLEANUP_LIST"
}
