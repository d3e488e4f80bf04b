#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154,SC2030,SC2031  # awk/jq programs in single quotes; bats sets $stderr, $output
#
# Failed blocks with the real kernel: a loop block device over a sparse
# file on a 4 MiB tmpfs. Writes past the first 4 MiB of data fail in the
# backing file with ENOSPC, and the loop driver completes those blocks with
# that error. The engine must check every block's result, report the
# errno of the operation to fio (io_u->error), count it in tswap_stats, and
# never hang, in every submit/window pattern and with several threads.
#
# Short transfers: an O_DIRECT read past the end of a file returns fewer
# bytes than asked (fio with create_on_open=1 does not lay the file out to
# the job size). The engine reports the operation as short through
# io_u->resid (fio counts it in short_ios), not as an error.
#
# Teardown after a test detached its own loop device: the devices over the
# test's files are detached, never a name another test now holds
# (tests/devices.bash).

load helpers

setup() { common_setup; }
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
	full_loop
	for submit in single block; do
		for window in sequential overlap; do
			enospc_case "$submit" "$window" 1
		done
	done
}

@test "errors: ENOSPC with tswap_threads=2 and 4: no hang, errno reported, stats counted" {
	full_loop
	enospc_case block overlap 2
	enospc_case single sequential 4
}

@test "errors: after a failed job the device is still usable (no leaked in-flight I/O)" {
	full_loop
	enospc_case block overlap 2
	# Free the backing store, then a small verified job on the same device.
	truncate -s 0 "$SCRATCH/small/backing.img"
	truncate -s 16M "$SCRATCH/small/backing.img"
	fio_ok --filename="$FULLDEV" --size=2m --bs=1m --rw=write --verify=crc32c \
		--do_verify=1 --verify_fatal=1 --tswap_threads=2 --tswap_block_size=256k
}

# short_case FILE_KB P B_KB SHORT_BLOCKS - read 4 MiB in 1 MiB operations
# from a FILE_KB file.
short_case() {
	local file_kb=$1 p=$2 b_kb=$3 nshort=$4 f=$SCRATCH/short.file st=$SCRATCH/short.json
	rm -f "$f" "$st"
	truncate -s "${file_kb}k" "$f"
	fio_ok --filename="$f" --size=4m --bs=1m --rw=read --create_on_open=1 \
		--output-format=json --tswap_threads="$p" --tswap_block_size="${b_kb}k" \
		--tswap_stats="$st"
	local got want
	got=$(jq -r '.jobs[0] | "\(.error) \(.read.io_bytes) \(.read.short_ios) \(.read.total_ios)"' <<<"$output")
	# fio's accounting of the short operation is what it is with libaio.
	rm -f "$f"
	truncate -s "${file_kb}k" "$f"
	run -0 timeout -k 10 "$FIO_TIMEOUT" fio --name=swap --ioengine=libaio --direct=1 \
		--filename="$f" --size=4m --bs=1m --rw=read --create_on_open=1 --output-format=json
	want=$(jq -r '.jobs[0] | "\(.error) \(.read.io_bytes) \(.read.short_ios) \(.read.total_ios)"' <<<"$output")
	assert_equal "$got" "$want"
	assert_regex "$got" '^0 [0-9]+ 1 4$'
	run -0 jq -r '"\(.op_errors) \(.op_short) \(.short_blocks) \(.block_errors) \(.bytes)"' "$st"
	assert_output "0 1 $nshort 0 $((file_kb * 1024))"
}

@test "short transfer: a read past EOF is reported short through resid, not as an error" {
	# One 1m block, 512k of it present.
	short_case 3584 1 1024 1
	# Two parts of 512k in 256k blocks; the file ends 256k into the last
	# operation: 1 block of part 0 and both of part 1 come back short.
	short_case 3328 2 256 3
}

# --- teardown ----------------------------------------------------------------------

@test "teardown detaches the loop devices over the test's own files: a name the test let go of, now another's, is left alone" {
	requires loopdev
	local dev other
	loop_setup 8
	dev=$LOOPDEV
	losetup -d "$dev"
	# another test (running at the same time) gets the name
	other=$(mktemp "$BATS_FILE_TMPDIR/other.XXXXXX.img")
	truncate -s 8M "$other"
	losetup "$dev" "$other" || skip "$dev was taken by another test meanwhile"
	(common_teardown)
	run losetup -n -O BACK-FILE "$dev"
	losetup -d "$dev" 2>/dev/null || true
	assert_success
	assert_output "$other"
}
