#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr (run --separate-stderr)
#
# The io_uring backend (tswap_backend=io_uring) with the real fio and the
# built engine:
#   - data integrity, every submit x window, tswap_threads 1, 2, 4, tail
#     blocks, plain and with each of tswap_fixedbufs, tswap_registerfiles,
#     tswap_sqpoll; on a file and, as root, on a loop block device;
#   - the error paths: ENOSPC from a CQE, IOPOLL on a target without poll
#     queues, RLIMIT_MEMLOCK with tswap_fixedbufs. kernel.io_uring_disabled=2
#     (a system-wide sysctl) is tests/faults-sys.bats, which runs alone.
# The pattern proof with strace (SQEs per io_uring_enter, min_complete,
# rings per worker, SQPOLL) is tests/uring-pattern.bats.
#
# Each integrity case starts from a fresh target (design.md section 3) and
# checks both directions against fio's psync engine, with a verify header
# every 4 KiB: tswap writes and verifies, then psync verifies (one fio run,
# two jobs); psync writes a fresh target, then tswap verifies (another).

load helpers

setup() {
	common_setup
	requires io_uring
}

teardown() {
	common_teardown
}

VERIFY=(--verify=crc32c --verify_interval=4k --verify_fatal=1)

# uring_case TARGET SUBMIT WINDOW THREADS [fio args...] - write + verify with
# tswap on io_uring, cross-checked with psync both ways.  bs=1392k, B=128k:
# parts of 1392k, 696k, 348k all end in a tail block; Q=4, iodepth=2,
# 6 operations.
uring_case() {
	local t=$1 submit=$2 window=$3 threads=$4
	shift 4
	local size_kb=$((1392 * 6)) seed=$((2000 + CASE_NO))
	local what="case $CASE_NO: target=$t submit=$submit window=$window threads=$threads $*"
	local -a job=(--filename="$t" --size="${size_kb}k" --bs=1392k --randseed="$seed")
	local -a tswap=(--tswap_backend=io_uring --tswap_submit="$submit"
		--tswap_window="$window" --tswap_threads="$threads"
		--tswap_block_size=128k --tswap_queue_depth=4 "$@")
	CASE_NO=$((CASE_NO + 1))
	echo "# $what" >&3
	cross_verify "$what" "$t" "$size_kb" 2 "${job[@]}" "${VERIFY[@]}" -- "${tswap[@]}"
}

# uring_matrix TARGET [fio args...] - submit x window x threads 1, 2, 4.
uring_matrix() {
	local t=$1 submit window threads
	shift
	for submit in single block; do
		for window in sequential overlap; do
			for threads in 1 2 4; do
				uring_case "$t" "$submit" "$window" "$threads" "$@"
			done
		done
	done
}

# uring_enospc_case SUBMIT WINDOW THREADS [fio args...] - the CQE's -ENOSPC
# reaches fio as the operation's errno and the stats; no hang.
uring_enospc_case() {
	local submit=$1 window=$2 threads=$3 st
	shift 3
	local what="submit=$submit window=$window threads=$threads $*"
	st=$SCRATCH/err-$submit-$window-$threads.json
	truncate -s 0 "$SCRATCH/small/backing.img"
	truncate -s 16M "$SCRATCH/small/backing.img"
	run_fio --filename="$FULLDEV" --size=12m --bs=2m --iodepth=2 --rw=write \
		--tswap_backend=io_uring --tswap_block_size=512k --tswap_queue_depth=2 \
		--tswap_threads="$threads" --tswap_submit="$submit" \
		--tswap_window="$window" --tswap_stats="$st" "$@"
	if [ "$status" -ne 1 ]; then
		show_fio
		fail "$what: expected fio to exit 1 on the write error, got $status"
	fi
	assert_regex "$stderr" "io_u error on file $FULLDEV: No space left on device: write offset=[0-9]+"
	assert_file_exists "$st"
	run -0 jq -r '"\(.backend) \(.op_errors >= 1) \(.block_errors >= 1) \(.bytes < 12582912)"' "$st"
	[ "$output" = "io_uring true true true" ] || fail "$what: stats: $(jq -c '{operations, op_errors, blocks, block_errors, short_blocks, bytes}' "$st")"
}

# --- integrity ----------------------------------------------------------------

@test "uring integrity: submit x window x threads 1,2,4, tail blocks, on a file" {
	CASE_NO=1
	uring_matrix "$SCRATCH/swapfile"
}

@test "uring integrity: the matrix with tswap_fixedbufs=1" {
	CASE_NO=100
	uring_matrix "$SCRATCH/swapfile" --tswap_fixedbufs=1
}

@test "uring integrity: the matrix with tswap_registerfiles=1" {
	CASE_NO=200
	uring_matrix "$SCRATCH/swapfile" --tswap_registerfiles=1
}

@test "uring integrity: the matrix with tswap_sqpoll=1" {
	CASE_NO=300
	uring_matrix "$SCRATCH/swapfile" --tswap_sqpoll=1 --tswap_sqpoll_idle=50
}

@test "uring integrity: fixedbufs + registerfiles + sqpoll together, iodepth=3, numjobs=2" {
	rm -f "$SCRATCH"/swap.*
	fio_ok --directory="$SCRATCH" --numjobs=2 --size=12m --bs=2m --iodepth=3 \
		--rw=write "${VERIFY[@]}" --do_verify=1 --output-format=json \
		--group_reporting=0 --tswap_backend=io_uring --tswap_block_size=384k \
		--tswap_queue_depth=3 --tswap_threads=2 --tswap_fixedbufs=1 \
		--tswap_registerfiles=1 --tswap_sqpoll=1
	run -0 jq -r '[.jobs[] | select(.error == 0 and .write.io_bytes == 12582912 and .read.io_bytes == 12582912)] | length' <<<"$output"
	assert_output 2
	psync_ok --directory="$SCRATCH" --numjobs=2 --size=12m --bs=2m --rw=write \
		"${VERIFY[@]}" --verify_only
}

@test "uring integrity: fixedbufs over a buffer area above 1 GiB (registered in 1 GiB windows)" {
	local t=$SCRATCH/swapfile avail_kb
	avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
	if [ "${avail_kb:-0}" -lt $((4 * 1024 * 1024)) ]; then
		skip "needs 4 GiB of available memory (MemAvailable ${avail_kb:-?} kB)"
	fi
	# Two 640 MiB I/O units: fio's buffer area is 1.25 GiB, blocks of
	# 128 MiB straddle the 1 GiB mark.
	rm -f "$t"
	fio_ok --filename="$t" --size=1280m --bs=640m --iodepth=2 --rw=write \
		--verify=crc32c --verify_fatal=1 --do_verify=1 --output-format=json \
		--tswap_backend=io_uring --tswap_block_size=128m --tswap_queue_depth=4 \
		--tswap_threads=2 --tswap_fixedbufs=1
	run -0 jq -r '.jobs[0] | "\(.error) \(.write.io_bytes) \(.read.io_bytes)"' <<<"$output"
	assert_output "0 1342177280 1342177280"
}

@test "uring integrity: the matrix on a loop block device, plain and with every option" {
	requires loopdev
	loop_setup 16
	CASE_NO=400
	uring_matrix "$LOOPDEV"
	uring_case "$LOOPDEV" block overlap 2 --tswap_fixedbufs=1 --tswap_registerfiles=1
	uring_case "$LOOPDEV" single sequential 4 --tswap_sqpoll=1 --tswap_fixedbufs=1
}

# --- errors ---------------------------------------------------------------------

@test "uring errors: a block failing with ENOSPC fails its operation with that errno, every pattern, no hang" {
	requires loopdev
	full_loop
	local submit window
	for submit in single block; do
		for window in sequential overlap; do
			uring_enospc_case "$submit" "$window" 1
		done
	done
	uring_enospc_case block overlap 2 --tswap_fixedbufs=1
	uring_enospc_case single sequential 4 --tswap_sqpoll=1
}

@test "uring errors: tswap_iopoll on a file of a device without poll queues fails cleanly" {
	local t=$SCRATCH/swapfile dev polls
	dev=$(stat -c '%d' "$SCRATCH")
	polls=$(cat "/sys/dev/block/$((dev >> 8)):$((dev & 255))/queue/io_poll" \
		"/sys/dev/block/$((dev >> 8)):$((dev & 255))/../queue/io_poll" 2>/dev/null | head -1)
	if [ "$polls" != 0 ]; then
		skip "the scratch filesystem's device polls or cannot tell (io_poll='$polls')"
	fi
	rm -f "$t"
	run_fio --filename="$t" --size=4m --bs=1m --rw=write "${VERIFY[@]}" --do_verify=1 \
		--tswap_backend=io_uring --tswap_iopoll=1
	assert_rejected tswap_iopoll poll
}

@test "uring errors: tswap_iopoll on a loop device (no poll queues) fails cleanly" {
	requires loopdev
	loop_setup 16
	run_fio --filename="$LOOPDEV" --size=4m --bs=1m --rw=read \
		--tswap_backend=io_uring --tswap_iopoll=1
	assert_rejected tswap_iopoll poll
}

@test "uring errors: tswap_fixedbufs over RLIMIT_MEMLOCK names the limit" {
	requires root
	if ! command -v setpriv >/dev/null || ! command -v prlimit >/dev/null; then
		skip "requires setpriv and prlimit (util-linux) to drop CAP_IPC_LOCK"
	fi
	local t=$SCRATCH/swapfile
	rm -f "$t"
	# Root is exempt from RLIMIT_MEMLOCK through CAP_IPC_LOCK: drop it and
	# allow 1 MiB of locked memory for a 4 MiB buffer area (tswap_pin=0:
	# the registration's own error, not the mlock's).
	fio_argv "$ENGINE" --filename="$t" --size=8m --bs=4m --rw=write \
		--tswap_backend=io_uring --tswap_fixedbufs=1 --tswap_pin=0
	run --separate-stderr prlimit --memlock=1048576:1048576 \
		setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock "${FIO_ARGV[@]}"
	assert_rejected tswap_fixedbufs RLIMIT_MEMLOCK
}
