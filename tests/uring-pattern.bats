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

URING_SYSCALLS=io_uring_setup,io_uring_enter,io_uring_register

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
