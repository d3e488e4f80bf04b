#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154  # awk/jq programs in single quotes; bats sets $stderr
#
# Data integrity with the real fio and the built engine: every submit x
# window combination, tswap_threads 1, 2 and 4 (and 1 without the hand-off
# to a worker thread), tail blocks, iodepth > 1,
# numjobs > 1, on a file of a block-backed filesystem and, as root, on a
# loop block device.
#
# Each case starts from a fresh target (design.md section 3: stale data from
# an earlier correct run can hide a misdirected write) and checks both
# directions against fio's plain psync engine, with a verify header every
# 4 KiB (so a block that lands at the wrong offset or buffer position is
# caught even if the engine reads it back from the same wrong place):
#   1. tswap writes and reads back, verify=crc32c, verify_fatal=1;
#   2. psync reads what tswap wrote (verify_only);
#   3. psync writes, on a fresh target;
#   4. tswap reads what psync wrote (verify_only).
# 1-2 and 3-4 are each one fio run of two jobs, the second after the first
# (stonewall), each job's error and bytes checked in fio's JSON.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

VERIFY=(--verify=crc32c --verify_interval=4k --verify_fatal=1)

# integrity_case TARGET SUBMIT WINDOW THREADS BS_KB B_KB Q IODEPTH NOPS [fio args...]
integrity_case() {
	local t=$1 submit=$2 window=$3 threads=$4 bs_kb=$5 b_kb=$6 q=$7 iodepth=$8 nops=$9
	shift 9
	local size_kb=$((bs_kb * nops)) seed=$((1000 + CASE_NO))
	local what="case $CASE_NO: target=$t submit=$submit window=$window threads=$threads bs=${bs_kb}k B=${b_kb}k Q=$q iodepth=$iodepth size=${size_kb}k"
	local -a job=(--filename="$t" --size="${size_kb}k" --bs="${bs_kb}k" --randseed="$seed")
	local -a tswap=(--tswap_submit="$submit" --tswap_window="$window"
		--tswap_threads="$threads" --tswap_block_size="${b_kb}k"
		--tswap_queue_depth="$q")
	CASE_NO=$((CASE_NO + 1))
	echo "# $what" >&3
	cross_verify "$what" "$t" "$size_kb" "$iodepth" "${job[@]}" "${VERIFY[@]}" -- "${tswap[@]}" "$@"
}

# The matrix: submit x window x threads, with tail blocks in every part
# (bs=1392k: parts of 1392k, 696k, 348k; B=128k leaves 112k, 56k, 92k),
# plus the tail cases of the spec and a bs that is a multiple of B.
integrity_matrix() {
	local t=$1 submit window threads
	CASE_NO=1
	for submit in single block; do
		for window in sequential overlap; do
			for threads in 1 2 4; do
				integrity_case "$t" "$submit" "$window" "$threads" 1392 128 4 2 6
			done
		done
	done
	# tswap_threads=1 above runs on a worker thread (tswap_handoff=worker,
	# the default); in fio's job thread too, and with an open per operation.
	integrity_case "$t" single overlap 1 1392 128 4 2 6 --tswap_handoff=inline
	integrity_case "$t" block sequential 1 1392 128 4 2 6 --tswap_handoff=inline
	integrity_case "$t" block overlap 2 1392 128 4 2 6 --tswap_reopen=1
	# bs not a multiple of B: 1m + 512k tail; 4 parts of 384k = 256k + 128k.
	integrity_case "$t" block overlap 1 1536 1024 4 1 6
	integrity_case "$t" single sequential 4 1536 256 2 2 6
	# bs a multiple of B, deep queue, more ops in flight than workers.
	integrity_case "$t" block overlap 2 4096 1024 8 3 3
}

@test "integrity: submit x window x threads 1,2,4, tail blocks, on a file" {
	integrity_matrix "$SCRATCH/swapfile"
}

@test "integrity: submit x window x threads 1,2,4, tail blocks, on a loop block device" {
	requires loopdev
	loop_setup 16
	integrity_matrix "$LOOPDEV"
}

@test "integrity: on a loop block device with 4 KiB logical sectors" {
	requires loopdev
	loop_setup 16 4096
	CASE_NO=100
	integrity_case "$LOOPDEV" block sequential 2 1024 128 4 2 8
	integrity_case "$LOOPDEV" single overlap 4 768 80 2 4 8
}

@test "integrity: iodepth=4 random writes and reads, threads=2" {
	local t=$SCRATCH/swapfile
	rm -f "$t"
	fio_ok --filename="$t" --size=16m --bs=1m --iodepth=4 --rw=randwrite \
		"${VERIFY[@]}" --do_verify=1 --output-format=json \
		--tswap_block_size=256k --tswap_queue_depth=2 --tswap_threads=2
	run -0 jq -r '.jobs[0] | "\(.error) \(.write.io_bytes) \(.read.io_bytes)"' <<<"$output"
	assert_output "0 16777216 16777216"
	psync_ok --filename="$t" --size=16m --bs=1m --rw=randwrite "${VERIFY[@]}" --verify_only
	# tswap random reads of psync's data, 4 operations queued.
	rm -f "$t"
	psync_ok --filename="$t" --size=16m --bs=1m --rw=write "${VERIFY[@]}" --do_verify=0
	fio_ok --filename="$t" --size=16m --bs=1m --iodepth=4 --rw=randwrite \
		"${VERIFY[@]}" --verify_only --tswap_block_size=256k --tswap_queue_depth=2 \
		--tswap_threads=2 --tswap_window=sequential
}

@test "integrity: numjobs=2, each job its own file" {
	rm -f "$SCRATCH"/swap.*
	fio_ok --directory="$SCRATCH" --numjobs=2 --size=8m --bs=2m --iodepth=2 \
		--rw=write "${VERIFY[@]}" --do_verify=1 --output-format=json --group_reporting=0 \
		--tswap_block_size=512k --tswap_queue_depth=2 --tswap_threads=2
	run -0 jq -r '[.jobs[] | select(.error == 0 and .write.io_bytes == 8388608 and .read.io_bytes == 8388608)] | length' <<<"$output"
	assert_output 2
	assert_file_exists "$SCRATCH/swap.0.0"
	assert_file_exists "$SCRATCH/swap.1.0"
	psync_ok --directory="$SCRATCH" --numjobs=2 --size=8m --bs=2m --rw=write \
		"${VERIFY[@]}" --verify_only
}

@test "integrity: numjobs=2 on one loop device, each job its own offset range" {
	requires loopdev
	loop_setup 16
	fio_ok --filename="$LOOPDEV" --numjobs=2 --size=6m --offset_increment=8m \
		--bs=1536k --iodepth=2 --rw=write "${VERIFY[@]}" --do_verify=1 \
		--output-format=json --tswap_block_size=1m --tswap_queue_depth=4 \
		--tswap_threads=2 --tswap_submit=single
	# fio itself warns on stdout about several writers of one file.
	local json
	json=$(sed '/^fio: multiple writers may overwrite blocks/d' <<<"$output")
	run -0 jq -r '[.jobs[] | select(.error == 0 and .read.io_bytes == 6291456)] | length' <<<"$json"
	assert_output 2
	psync_ok --filename="$LOOPDEV" --numjobs=2 --size=6m --offset_increment=8m \
		--bs=1536k --rw=write "${VERIFY[@]}" --verify_only
}

@test "integrity: a corrupted block is caught (the verify is not a no-op)" {
	local t=$SCRATCH/swapfile
	rm -f "$t"
	fio_ok --filename="$t" --size=4m --bs=1m --rw=write "${VERIFY[@]}" --do_verify=1 \
		--tswap_block_size=256k --tswap_threads=2
	# Overwrite one 4 KiB chunk in the middle of the second operation.
	dd if=/dev/urandom of="$t" bs=4k seek=300 count=1 conv=notrunc status=none
	run_fio --filename="$t" --size=4m --bs=1m --rw=write "${VERIFY[@]}" --verify_only \
		--tswap_block_size=256k --tswap_threads=2
	assert_failure
	assert_regex "$stderr" "offset 1228800"
}
