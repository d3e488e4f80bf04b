#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154  # awk/jq programs in single quotes; bats sets $stderr
#
# Failed blocks with the real kernel: a loop block device over a sparse
# file on a 4 MiB tmpfs. Writes past the first 4 MiB of data fail in the
# backing file with ENOSPC, and the loop driver completes those blocks with
# that error. The engine must check every block's result, report the
# errno of the operation to fio (io_u->error), count it in tswap_stats, and
# never hang, in every submit/window pattern and with several threads.

load helpers

setup() {
	common_setup
	requires loopdev
	mount_scratch "$SCRATCH/small" tmpfs size=4m
	truncate -s 16M "$SCRATCH/small/backing.img"
	local dev
	dev=$(losetup --find --show --direct-io=on "$SCRATCH/small/backing.img") ||
		fail "losetup over a tmpfs file failed"
	printf 'loop\t%s\n' "$dev" >>"$CLEANUP_LIST"
	FULLDEV=$dev
}
teardown() { common_teardown; }

# enospc_case SUBMIT WINDOW THREADS
enospc_case() {
	local submit=$1 window=$2 threads=$3 st
	st=$SCRATCH/err-$submit-$window-$threads.json
	# Fresh backing file: no data blocks allocated yet.
	truncate -s 0 "$SCRATCH/small/backing.img"
	truncate -s 16M "$SCRATCH/small/backing.img"
	run_fio --filename="$FULLDEV" --size=12m --bs=2m --iodepth=2 --rw=write \
		--tswap_block_size=512k --tswap_queue_depth=2 --tswap_threads="$threads" \
		--tswap_submit="$submit" --tswap_window="$window" --tswap_stats="$st"
	local what="submit=$submit window=$window threads=$threads"
	if [ "$status" -ne 1 ]; then
		show_fio
		fail "$what: expected fio to exit 1 on the write error, got $status"
	fi
	# The kernel's errno reaches fio unchanged, for a write past 4 MiB.
	assert_regex "$stderr" "io_u error on file $FULLDEV: No space left on device: write offset=[0-9]+"
	local off
	off=$(sed -n 's/.*No space left on device: write offset=\([0-9]*\).*/\1/p' <<<"$stderr" | sort -n | head -1)
	[ "$off" -ge 2097152 ] || fail "$what: first failed operation at offset $off, below the 4 MiB that fit"
	# tswap_stats counts the failed operations and blocks.
	assert_file_exists "$st"
	run -0 jq -r '"\(.op_errors >= 1) \(.block_errors >= 1) \(.bytes < 12582912) \(.blocks == .block_errors + (.bytes / 524288 | floor) + .short_blocks)"' "$st"
	[ "$output" = "true true true true" ] || fail "$what: stats: $(jq -c '{operations, op_errors, blocks, block_errors, short_blocks, bytes}' "$st")"
}

@test "errors: ENOSPC from a full backing store fails the operation with that errno, every pattern" {
	local submit window
	for submit in single block; do
		for window in sequential overlap; do
			enospc_case "$submit" "$window" 1
		done
	done
}

@test "errors: ENOSPC with tswap_threads=2 and 4: no hang, errno reported, stats counted" {
	enospc_case block overlap 2
	enospc_case single sequential 4
}

@test "errors: after a failed job the device is still usable (no leaked in-flight I/O)" {
	enospc_case block overlap 2
	# Free the backing store, then a small verified job on the same device.
	truncate -s 0 "$SCRATCH/small/backing.img"
	truncate -s 16M "$SCRATCH/small/backing.img"
	fio_ok --filename="$FULLDEV" --size=2m --bs=1m --rw=write --verify=crc32c \
		--do_verify=1 --verify_fatal=1 --tswap_threads=2 --tswap_block_size=256k
}
