# shellcheck shell=bash
# tests/bench/lib/targets.bash - tswap-bench's targets: set up (a tmpfs
# file, a loop device over one, a zram device, a file on the disk) filled
# with real data, described in targets.json, torn down, and cleaned up on
# exit.  Sourced by tests/bench/tswap-bench, never run.
#
# Reads: RAM_DIR, DISK_FILE, SIZE, IS_ROOT, OUT, TIMES_FILE.
# Writes: TARGET_PATH, LOOPDEV, ZRAM_ID, RAM_FILES, OUT/targets.json,
# OUT/prepare-NAME.log.  A target that cannot be set up is skipped with a
# note (setup_target returns 1).

LOOPDEV=
ZRAM_ID=
RAM_FILES=()

# cleanup: on exit, whatever setup_target left (trap cleanup EXIT).
cleanup() {
	if [ -n "$LOOPDEV" ]; then
		losetup -d "$LOOPDEV" 2>/dev/null || true
	fi
	if [ -n "$ZRAM_ID" ]; then
		echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove 2>/dev/null || true
	fi
	if [ "${#RAM_FILES[@]}" -gt 0 ]; then
		rm -f "${RAM_FILES[@]}"
	fi
	rm -f "$TIMES_FILE"
}

# setup_target NAME: sets TARGET_PATH (or returns 1 with a note: skipped).
setup_target() {
	local name=$1 fstype
	TARGET_PATH=
	case $name in
	ram)
		fstype=$(stat -f -c %T "$RAM_DIR" 2>/dev/null || true)
		if [ "$fstype" != tmpfs ]; then
			note "ram: $RAM_DIR is not tmpfs ($fstype); skipped (--ram-dir)"
			return 1
		fi
		TARGET_PATH=$RAM_DIR/tswap-bench-$$.swap
		RAM_FILES+=("$TARGET_PATH")
		;;
	loop)
		if [ -z "$IS_ROOT" ]; then
			note "loop: needs root (losetup); skipped"
			return 1
		fi
		RAM_FILES+=("$RAM_DIR/tswap-bench-$$.loop")
		truncate -s "$SIZE" "$RAM_DIR/tswap-bench-$$.loop"
		LOOPDEV=$(losetup --direct-io=on --show -f "$RAM_DIR/tswap-bench-$$.loop") || {
			note "loop: losetup failed; skipped"
			return 1
		}
		TARGET_PATH=$LOOPDEV
		;;
	zram)
		if [ -z "$IS_ROOT" ]; then
			note "zram: needs root (modprobe zram); skipped"
			return 1
		fi
		modprobe zram 2>/dev/null || true
		if [ ! -w /sys/class/zram-control/hot_add ]; then
			note "zram: no /sys/class/zram-control (zram module missing); skipped"
			return 1
		fi
		ZRAM_ID=$(cat /sys/class/zram-control/hot_add)
		echo "$SIZE" >"/sys/block/zram$ZRAM_ID/disksize"
		TARGET_PATH=/dev/zram$ZRAM_ID
		;;
	disk)
		check_disk_file "$DISK_FILE"
		mkdir -p "$(dirname "$DISK_FILE")"
		fstype=$(stat -f -c %T "$(dirname "$DISK_FILE")")
		if [ "$fstype" = tmpfs ] || [ "$fstype" = ramfs ]; then
			note "disk: $DISK_FILE is on $fstype, not a disk"
		fi
		TARGET_PATH=$DISK_FILE
		;;
	esac
	# Real data everywhere (fio's random buffers): zram must not see
	# zero pages, the disk file no unwritten extents.
	fio --name=prepare --filename="$TARGET_PATH" --size="$SIZE" --rw=write \
		--bs=1m --direct=1 --ioengine=psync --output=/dev/null \
		>"$OUT/prepare-$name.log" 2>&1 || {
		note "$name: preparing $TARGET_PATH failed (see $OUT/prepare-$name.log); skipped"
		return 1
	}
}

teardown_target() {
	local name=$1
	case $name in
	loop)
		losetup -d "$LOOPDEV" 2>/dev/null || true
		LOOPDEV=
		rm -f "$RAM_DIR/tswap-bench-$$.loop"
		;;
	zram)
		echo "$ZRAM_ID" >/sys/class/zram-control/hot_remove 2>/dev/null || true
		ZRAM_ID=
		;;
	ram) rm -f "$TARGET_PATH" ;;
	esac
}

describe_target() { # describe_target NAME: its line in targets.json
	local desc
	case $1 in
	ram) desc="file on tmpfs ($TARGET_PATH)" ;;
	loop) desc="loop device $TARGET_PATH, --direct-io=on, over a tmpfs file" ;;
	zram) desc="zram device $TARGET_PATH" ;;
	disk) desc="file on $(findmnt -no FSTYPE,SOURCE --target "$TARGET_PATH" | xargs): $TARGET_PATH" ;;
	esac
	jq --arg k "$1" --arg v "$desc" '. + {($k): $v}' "$OUT/targets.json" >"$OUT/targets.json.new"
	mv "$OUT/targets.json.new" "$OUT/targets.json"
}
