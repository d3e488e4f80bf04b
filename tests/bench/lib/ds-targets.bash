# shellcheck shell=bash
# tests/bench/lib/ds-targets.bash - tswap-bench-deepspeed's targets: a
# tmpfs file, a loop device over one (root), a file on the disk, each
# filled with real data, torn down, and cleaned up on exit.  Sourced by
# tests/bench/tswap-bench-deepspeed, never run.
#
# Reads: RAM_DIR, DISK_FILE, SIZE, OUT, TIMES_FILE.
# Writes: TARGET_PATH, SYNC_PATH, DEV_NAME, LOOPDEV, TMP_FILES,
# OUT/prepare-NAME.log.

LOOPDEV=
TMP_FILES=()
# cleanup: on exit, what setup_target left (trap cleanup EXIT).
cleanup() {
	[ -z "$LOOPDEV" ] || losetup -d "$LOOPDEV" 2>/dev/null || true
	[ "${#TMP_FILES[@]}" -eq 0 ] || rm -f "${TMP_FILES[@]}"
	rm -f "$TIMES_FILE"
}

# setup_target NAME: TARGET_PATH, and SYNC_PATH, the one-tensor file of
# sync rows beside it (empty on the loop device: sync rows are skipped
# there), and DEV_NAME, the block device whose requests run_side counts in
# /proc/diskstats (the loop device; the disk file's filesystem's device,
# when diskstats has it; empty on tmpfs); or 1: skipped, with a note. Only
# files this script creates are ever removed: never the loop device's node.
setup_target() {
	TARGET_PATH='' SYNC_PATH='' DEV_NAME=''
	case $1 in
	ram)
		[ "$(stat -f -c %T "$RAM_DIR" 2>/dev/null)" = tmpfs ] || {
			note "ram: $RAM_DIR is not tmpfs; skipped"
			return 1
		}
		TARGET_PATH=$RAM_DIR/tswap-bench-ds-$$.swap
		SYNC_PATH=$TARGET_PATH.sync
		TMP_FILES+=("$TARGET_PATH" "$SYNC_PATH")
		;;
	loop)
		[ "$(id -u)" -eq 0 ] || { note "loop: needs root; skipped"; return 1; }
		TMP_FILES+=("$RAM_DIR/tswap-bench-ds-$$.loop")
		truncate -s "$SIZE" "$RAM_DIR/tswap-bench-ds-$$.loop"
		LOOPDEV=$(losetup --direct-io=on --show -f "$RAM_DIR/tswap-bench-ds-$$.loop") ||
			{ note "loop: losetup failed; skipped"; return 1; }
		TARGET_PATH=$LOOPDEV
		DEV_NAME=${LOOPDEV#/dev/}
		;;
	disk)
		check_disk_file "$DISK_FILE"
		check_disk_file "$DISK_FILE.sync"
		mkdir -p "$(dirname "$DISK_FILE")"
		TARGET_PATH=$DISK_FILE
		DEV_NAME=$(findmnt -no SOURCE -T "$(dirname "$DISK_FILE")" 2>/dev/null || true)
		DEV_NAME=${DEV_NAME#/dev/}
		dev_requests "$DEV_NAME" read >/dev/null || DEV_NAME=
		SYNC_PATH=$TARGET_PATH.sync
		TMP_FILES+=("$SYNC_PATH")
		;;
	esac
	fio --name=prepare --filename="$TARGET_PATH" --size="$SIZE" --rw=write --bs=1m \
		--direct=1 --ioengine=psync --output=/dev/null >"$OUT/prepare-$1.log" 2>&1 ||
		{ note "$1: preparing $TARGET_PATH failed; skipped"; return 1; }
}
teardown_target() {
	if [ "$1" = loop ]; then
		losetup -d "$LOOPDEV" 2>/dev/null || true
		LOOPDEV=
		rm -f "$RAM_DIR/tswap-bench-ds-$$.loop"
	fi
	[ "$1" != ram ] || rm -f "$TARGET_PATH"
	[ -z "$SYNC_PATH" ] || rm -f "$SYNC_PATH"
}
