#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $stderr (run --separate-stderr)
#
# The io_uring backend (tswap_backend=io_uring) with the real fio and the
# built engine:
#   - data integrity, every submit x window, tswap_threads 1, 2, 4, tail
#     blocks, plain and with each of tswap_fixedbufs, tswap_registerfiles,
#     tswap_sqpoll; on a file and, as root, on a loop block device;
#   - pattern proof with strace of io_uring_setup/io_uring_enter: SQEs per
#     submitting io_uring_enter (to_submit) and min_complete of the waiting
#     ones match single/block and sequential/overlap; one ring per worker;
#     with SQPOLL the job submits without entering the kernel per batch;
#   - the error paths: IOPOLL on a target without poll queues,
#     RLIMIT_MEMLOCK with tswap_fixedbufs, kernel.io_uring_disabled=2.
#
# Each integrity case starts from a fresh target (design.md section 3) and
# checks both directions against fio's psync engine, with a verify header
# every 4 KiB.

load helpers

setup() {
	common_setup
	requires io_uring
	SYSCTL_SAVED=
}

teardown() {
	# Put kernel.io_uring_disabled back even when the test failed.
	if [ -n "${SYSCTL_SAVED:-}" ]; then
		sysctl -q -w kernel.io_uring_disabled="$SYSCTL_SAVED" || true
	fi
	common_teardown
}

VERIFY=(--verify=crc32c --verify_interval=4k --verify_fatal=1)
URING_SYSCALLS=io_uring_setup,io_uring_enter,io_uring_register

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

	# 1. tswap writes and reads back.
	fresh_target "$t" "$size_kb"
	run_fio "${job[@]}" --iodepth=2 --rw=write "${VERIFY[@]}" --do_verify=1 \
		--output-format=json "${tswap[@]}"
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "$what: fio failed (exit $status)"
	fi
	run -0 jq -r '.jobs[0] | "\(.error) \(.write.io_bytes) \(.read.io_bytes)"' <<<"$output"
	if [ "$output" != "0 $((size_kb * 1024)) $((size_kb * 1024))" ]; then
		fail "$what: fio error/write bytes/verify-read bytes = '$output'"
	fi

	# 2. psync reads what tswap wrote.
	psync_ok "${job[@]}" --rw=write "${VERIFY[@]}" --verify_only

	# 3-4. psync writes, tswap reads.
	fresh_target "$t" "$size_kb"
	psync_ok "${job[@]}" --rw=write "${VERIFY[@]}" --do_verify=0
	run_fio "${job[@]}" --iodepth=2 --rw=write "${VERIFY[@]}" --verify_only \
		"${tswap[@]}"
	if [ "$status" -ne 0 ]; then
		show_fio
		fail "$what: tswap verify_only of psync's writes failed"
	fi
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

# --- strace -----------------------------------------------------------------

# uring_strace_fio LOG ARGS... - run_fio under strace -f, io_uring calls only.
uring_strace_fio() {
	local log=$1
	shift
	requires strace
	STRACE_SYSCALLS=$URING_SYSCALLS strace_fio "$log" --tswap_backend=io_uring "$@"
}

# uring_records LOG - one TSV record per io_uring call, in per-thread order
# ("<unfinished ...>" / "<... resumed>" pairs joined first):
#   tid  io_uring_setup     ring(=ret)  entries  flags        ret
#   tid  io_uring_enter     ring        to_submit min_complete flags  ret
#   tid  io_uring_register  ring        opcode   nr           ret
uring_records() {
	strace_join "$1" | awk -F '\t' '
	function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
	{
		tid = $1
		line = $2
		if (line !~ /^io_uring_(setup|enter|register)\(/)
			next
		call = line; sub(/\(.*/, "", call)
		ret = line; sub(/.*\) += /, "", ret); sub(/ .*/, "", ret)
		args = line; sub(/^[a-z_]+\(/, "", args)
		if (call == "io_uring_setup") {
			flags = "0"
			if (match(args, /flags=[A-Z_|0-9x]+/))
				flags = substr(args, RSTART + 6, RLENGTH - 6)
			n = split(args, a, ",")
			printf "%s\t%s\t%s\t%s\t%s\t%s\n", tid, call, ret, trim(a[1]), flags, ret
		} else if (call == "io_uring_enter") {
			n = split(args, a, ",")
			for (i = 1; i <= n; i++) a[i] = trim(a[i])
			printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", tid, call, a[1], a[2], a[3], a[4], ret
		} else {
			n = split(args, a, ",")
			nr = trim(a[n]); sub(/\).*/, "", nr)
			printf "%s\t%s\t%s\t%s\t%s\t%s\n", tid, call, trim(a[1]), trim(a[2]), nr, ret
		}
	}'
}

# uring_check RECORDS Q NBLOCKS WINDOW SUBMIT - replay the io_uring calls per
# ring against design.md section 1; one line per violation, then
#   summary rings=R submits=N waits=W blocks=B maxsubmit=M fullwaits=F
#           wakeups=K threads=T tsh=N:COUNT,... mch=N:COUNT,...
# (tsh: histogram of to_submit of the submitting io_uring_enter calls; mch:
# of min_complete of the waiting ones; fullwaits: sequential waits whose
# min_complete is the whole batch).  NBLOCKS is the number of blocks of one
# part.  Completions taken from the CQ ring without a system call are
# invisible to strace, so the rules are those that hold regardless:
#   - every ring is used by one thread only;
#   - single: every submitting io_uring_enter has to_submit = 1;
#   - block+sequential: to_submit = min(Q, blocks left of the part);
#   - block+overlap: 1 <= to_submit <= Q;
#   - sequential: each wait has 1 <= min_complete <= the batch just
#     submitted (less when some CQEs were already in the CQ ring; with
#     SQPOLL, where submitting is no system call, <= Q);
#   - overlap: each wait has min_complete = 1;
#   - a wait never submits, a submit never waits (IOPOLL excepted).
uring_check() {
	awk -F '\t' -v Q="$2" -v NB="$3" -v WIN="$4" -v SUB="$5" '
	function bad(msg) { printf "VIOLATION line %d (%s): %s\n", NR, $0, msg; nbad++ }
	function hist(h,   k, s) {
		s = ""
		for (k = 0; k <= 4096; k++) if (h[k] > 0) s = s (s == "" ? "" : ",") k ":" h[k]
		return s == "" ? "-" : s
	}
	$2 == "io_uring_setup" {
		if ($6 + 0 >= 0) {
			rings++; known[$3] = 1
			iopoll[$3] = ($5 ~ /IOPOLL/); sqpoll[$3] = ($5 ~ /SQPOLL/)
		}
		if ($4 != Q) bad("io_uring_setup entries " $4 " != tswap_queue_depth " Q)
		next
	}
	$2 == "io_uring_enter" {
		c = $3; ts = $4 + 0; mc = $5 + 0; fl = $6; r = $7 + 0
		if (!(c in known)) bad("io_uring_enter on a ring no io_uring_setup created")
		if (ts > 0) {
			if ((c in owner) && owner[c] != $1) bad("ring used by two threads: " owner[c] " and " $1)
			owner[c] = $1
			if (!(c in left)) { left[c] = 0; nctx++; tids[$1] = 1 }
			if (fl ~ /SQ_WAKEUP/) { wakeups++; next }
			if (mc != 0 && !iopoll[c]) bad("a submitting io_uring_enter also waits")
			submits++
			if (waited[c]) { batch[c] = 0; waited[c] = 0 }
			if (left[c] == 0) left[c] = NB
			if (SUB == "single" && ts != 1) bad("submit=single but to_submit=" ts)
			want = Q; if (left[c] < want) want = left[c]
			if (SUB == "block" && WIN == "sequential" && !retry[c] && ts != want)
				bad("submit=block window=sequential: to_submit=" ts ", expected min(Q, left) = " want)
			if (ts > Q) bad("to_submit " ts " > Q " Q)
			retry[c] = 0
			if (r >= 0) {
				if (r < ts) retry[c] = 1
				left[c] -= r; blocks += r; batch[c] += r; tsh[r]++
				if (r > maxsub) maxsub = r
			}
			next
		}
		if (fl ~ /GETEVENTS/) {
			if ((c in owner) && owner[c] != $1) bad("ring used by two threads: " owner[c] " and " $1)
			waits++; mch[mc]++
			if (WIN == "overlap" && mc != 1) bad("window=overlap: min_complete=" mc ", expected 1")
			# With SQPOLL the batches are not system calls: only Q bounds.
			if (WIN == "sequential" && sqpoll[c] && (mc < 1 || mc > Q))
				bad("window=sequential: min_complete=" mc ", Q " Q)
			if (WIN == "sequential" && !sqpoll[c]) {
				if (mc < 1 || mc > batch[c]) bad("window=sequential: min_complete=" mc ", batch " batch[c])
				if (mc == batch[c]) full++
			}
			waited[c] = 1
		}
		next
	}
	END {
		nt = 0; for (t in tids) nt++
		printf "summary rings=%d submits=%d waits=%d blocks=%d maxsubmit=%d fullwaits=%d wakeups=%d threads=%d tsh=%s mch=%s\n", rings, submits, waits, blocks, maxsub, full, wakeups, nt, hist(tsh), hist(mch)
	}' "$1"
}

# traced_run NAME SIZE BS Q THREADS SUBMIT WINDOW NB [fio args...] - a write
# job under strace with tswap_stats; leaves $REC, $STATS and $SUMMARY and
# fails on any violation.
traced_run() {
	local name=$1 size=$2 bs=$3 q=$4 threads=$5 submit=$6 window=$7 nb=$8
	shift 8
	local log=$SCRATCH/$name.strace check
	REC=$SCRATCH/$name.tsv
	STATS=$SCRATCH/$name.stats.json
	rm -f "$SCRATCH/$name.file"
	uring_strace_fio "$log" --filename="$SCRATCH/$name.file" --size="$size" \
		--bs="$bs" --rw=write --tswap_block_size=1m --tswap_queue_depth="$q" \
		--tswap_threads="$threads" --tswap_submit="$submit" \
		--tswap_window="$window" --tswap_stats="$STATS" "$@"
	uring_records "$log" >"$REC"
	check=$(uring_check "$REC" "$q" "$nb" "$window" "$submit")
	if grep -q '^VIOLATION' <<<"$check"; then
		printf '%s\n' "$check" >&2
		fail "$name: the io_uring calls break the $submit/$window pattern (Q=$q, $nb blocks per part)"
	fi
	SUMMARY=$(grep '^summary' <<<"$check")
	echo "# $name: $SUMMARY" >&3
}

field() { summary_field "$SUMMARY" "$1"; }

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
	run -0 jq -r '[.blocks_per_submit | to_entries[] | select(.value > 0)
		| {k: (.key | tonumber), v: .value}] | sort_by(.k)
		| map("\(.k):\(.v)") | join(",") | if . == "" then "-" else . end' "$STATS"
	assert_output "$(field tsh)"
	run -0 jq -r '.wait_calls' "$STATS"
	[ "$output" -eq "$(field waits)" ] ||
		fail "stats wait_calls=$output, strace saw $(field waits) waiting io_uring_enter calls"
}

# full_loop - a loop device over a sparse 16 MiB file on a 4 MiB tmpfs:
# writes past the first 4 MiB of data complete with ENOSPC (errors.bats).
full_loop() {
	mount_scratch "$SCRATCH/small" tmpfs size=4m
	truncate -s 16M "$SCRATCH/small/backing.img"
	FULLDEV=$(losetup --find --show --direct-io=on "$SCRATCH/small/backing.img") ||
		fail "losetup over a tmpfs file failed"
	printf 'loop\t%s\n' "$FULLDEV" >>"$CLEANUP_LIST"
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

@test "uring errors: kernel.io_uring_disabled=2 gives one line suggesting tswap_backend=libaio" {
	requires root
	if [ ! -w /proc/sys/kernel/io_uring_disabled ]; then
		skip "requires a writable kernel.io_uring_disabled (Linux 6.6+)"
	fi
	SYSCTL_SAVED=$(cat /proc/sys/kernel/io_uring_disabled)
	sysctl -q -w kernel.io_uring_disabled=2
	rm -f "$SCRATCH/swapfile"
	run_fio --filename="$SCRATCH/swapfile" --size=4m --bs=1m --rw=write \
		--tswap_backend=io_uring
	assert_rejected tswap_backend=io_uring tswap_backend=libaio
	# Restored here too; teardown does it even if the asserts fail.
	sysctl -q -w kernel.io_uring_disabled="$SYSCTL_SAVED"
	SYSCTL_SAVED=
	fio_ok --filename="$SCRATCH/swapfile" --size=4m --bs=1m --rw=write \
		--tswap_backend=io_uring
}
