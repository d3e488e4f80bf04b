#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr (run --separate-stderr)
#
# The io_uring backend's pattern proof (tswap_backend=io_uring, the real
# fio and the built engine) with strace of io_uring_setup/io_uring_enter:
# SQEs per submitting io_uring_enter (to_submit) and min_complete of the
# waiting ones match single/block and sequential/overlap; one ring per
# worker; with SQPOLL the job submits without entering the kernel per
# batch; tswap_stats agrees with what strace saw.  Data integrity and the
# error paths are tests/uring.bats.

load helpers

setup() {
	common_setup
	requires io_uring
}

teardown() {
	common_teardown
}

# traced_run, field, stats_hist: tests/strace.bash; here they trace and
# check the io_uring calls (uring_strace_fio, uring_records, uring_check).
# shellcheck disable=SC2034 # read by strace.bash
TRACE_BACKEND=io_uring

# enter_column N - column N of the submitting (to_submit > 0) or, with
# "wait", the waiting io_uring_enter records, space-separated.
enter_column() {
	awk -F '\t' -v n="$1" -v kind="$2" '
	$2 == "io_uring_enter" && ((kind == "submit" && $4 > 0) || (kind == "wait" && $4 == 0)) {
		printf "%s%s", sep, $n; sep = " "
	} END { print "" }' "$REC"
}

# stats_agree OPS THREADS BYTES - the tswap_stats JSON agrees with strace on
# what both can see: blocks, bytes, rings, and (without SQPOLL) one
# submitting io_uring_enter per submit call with the same SQE counts.
# Waits: both count the io_uring_enter calls that waited (a reap served
# from CQEs already posted makes none).
stats_agree() {
	local ops=$1 threads=$2 bytes=$3
	assert_file_exists "$STATS"
	run -0 jq -r '"\(.backend) \(.blocks) \(.operations) \(.parts) \(.bytes) \(.io_contexts) \(.submit_calls)"' "$STATS"
	assert_output "io_uring $(field blocks) $ops $((ops * threads)) $bytes $threads $(field submits)"
	run -0 stats_hist blocks_per_submit
	assert_output "$(field tsh)"
	run -0 jq -r '.wait_calls' "$STATS"
	[ "$output" -eq "$(field waits)" ] ||
		fail "stats wait_calls=$output, strace saw $(field waits) waiting io_uring_enter calls"
}

# --- pattern proof --------------------------------------------------------------

@test "uring pattern: block+sequential, bs=10m B=1m Q=4: to_submit 4,4,2 per operation, waits for the batch" {
	traced_run seqblock 20m 10m 4 1 block sequential 10
	run enter_column 4 submit
	assert_output "4 4 2 4 4 2"
	[ "$(field rings)" -eq 1 ]
	[ "$(field waits)" -ge 1 ]
	[ "$(field fullwaits)" -ge 1 ] || fail "no wait for a whole batch: $SUMMARY"
	stats_agree 2 1 $((20 * 1048576))
}

@test "uring pattern: single+sequential: one SQE per io_uring_enter, then one wait for the batch" {
	traced_run seqsingle 20m 10m 4 1 single sequential 10
	[ "$(field submits)" -eq 20 ]
	[ "$(field tsh)" = "1:20" ]
	[ "$(field fullwaits)" -ge 1 ] || fail "no wait for a whole batch: $SUMMARY"
	stats_agree 2 1 $((20 * 1048576))
}

@test "uring pattern: single+overlap: one SQE per io_uring_enter, min_complete=1" {
	traced_run ovlsingle 20m 10m 4 1 single overlap 10
	[ "$(field submits)" -eq 20 ]
	[ "$(field tsh)" = "1:20" ]
	run enter_column 5 wait
	refute_output --regexp '(^| )([02-9]|1[0-9])'
	stats_agree 2 1 $((20 * 1048576))
}

@test "uring pattern: block+overlap: the first submit fills the window of Q, min_complete=1" {
	traced_run ovlblock 20m 10m 4 1 block overlap 10
	[ "$(field blocks)" -eq 20 ]
	[ "$(field maxsubmit)" -eq 4 ]
	run enter_column 4 submit
	assert_regex "$output" '^4 '
	run enter_column 5 wait
	refute_output --regexp '(^| )([02-9]|1[0-9])'
	stats_agree 2 1 $((20 * 1048576))
}

@test "uring pattern: tswap_threads=P sets up P rings of Q entries, each used by one worker" {
	local p
	for p in 1 2 4; do
		traced_run "threads$p" 16m 8m 3 "$p" block sequential $((8 / p))
		[ "$(field rings)" -eq "$p" ] || fail "threads=$p: $(field rings) rings"
		[ "$(field threads)" -eq "$p" ] || fail "threads=$p: $(field threads) submitting threads"
		[ "$(field blocks)" -eq 16 ] || fail "threads=$p: $(field blocks) blocks"
		stats_agree 2 "$p" $((16 * 1048576))
	done
}

@test "uring pattern: fixedbufs and registerfiles register once per ring, SQEs unchanged" {
	traced_run fixed 16m 8m 4 2 block sequential 4 --tswap_fixedbufs=1 --tswap_registerfiles=1
	run awk -F '\t' '$2 == "io_uring_register" && $6 == 0 { print $4 }' "$REC"
	assert_output "$(printf 'IORING_REGISTER_BUFFERS\nIORING_REGISTER_FILES\nIORING_REGISTER_BUFFERS\nIORING_REGISTER_FILES')"
	run enter_column 4 submit
	assert_output "4 4 4 4"
	stats_agree 2 2 $((16 * 1048576))
}

@test "uring pattern: with tswap_sqpoll the job submits without an io_uring_enter per batch" {
	# 64 blocks in rounds of 4: 16 batches per ring.  With the SQ thread
	# awake (1 s idle), submitting means a store to the SQ tail: only a
	# wake-up enters the kernel.
	traced_run sqpoll 64m 32m 4 1 block sequential 32 --tswap_sqpoll=1 --tswap_sqpoll_idle=1000
	run awk -F '\t' '$2 == "io_uring_setup" { print $5 }' "$REC"
	assert_output --partial IORING_SETUP_SQPOLL
	[ "$(field submits)" -eq 0 ] || fail "$(field submits) submitting io_uring_enter calls: $SUMMARY"
	[ "$(field wakeups)" -le 4 ] || fail "$(field wakeups) SQ wake-ups for 16 batches: $SUMMARY"
	# tswap_stats counts system calls: the wake-ups are the only
	# io_uring_enter calls made to submit.
	run -0 jq -r '"\(.blocks) \(.submit_calls)"' "$STATS"
	assert_output "64 $(($(field submits) + $(field wakeups)))"
}
