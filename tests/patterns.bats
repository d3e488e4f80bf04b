#!/usr/bin/env bats
# shellcheck disable=SC2016,SC2154  # awk/jq programs in single quotes; bats sets $stderr
#
# Pattern proof from outside the engine: strace the AIO system calls of a
# real fio run and replay them per I/O context against design.md section 1
# (tests/strace.bash: aio_records, aio_check), then check that the engine's
# own tswap_stats JSON agrees with what strace saw.

load helpers

setup() {
	common_setup
	requires strace
}
teardown() { common_teardown; }

# traced_run, field, stats_hist: tests/strace.bash.

# stats_agree OPS THREADS BYTES - the tswap_stats JSON agrees with strace.
stats_agree() {
	local ops=$1 threads=$2 bytes=$3
	assert_file_exists "$STATS"
	run -0 jq -r '"\(.submit_calls) \(.wait_calls) \(.blocks) \(.operations) \(.parts) \(.bytes) \(.io_contexts)"' "$STATS"
	assert_output "$(field submits) $(field waits) $(field blocks) $ops $((ops * threads)) $bytes $threads"
	# Histograms: blocks per io_submit and blocks in flight after it.
	run -0 stats_hist blocks_per_submit
	assert_output "$(field bps)"
	run -0 stats_hist inflight_at_submit
	assert_output "$(field ias)"
}

# column N CALL - the Nth column of the records of CALL, space-separated.
column() {
	awk -F '\t' -v n="$1" -v call="$2" '$2 == call { printf "%s%s", sep, $n; sep = " " } END { print "" }' "$REC"
}

@test "pattern: block+sequential, bs=10m B=1m Q=4: io_submit nr 4,4,2 per operation, each batch waited for whole" {
	traced_run seqblock 20m 10m 4 1 block sequential 10
	run column 4 io_submit
	assert_output "4 4 2 4 4 2"
	run column 6 io_submit
	assert_output "4 4 2 4 4 2"
	run column 4 io_getevents
	assert_output "4 4 2 4 4 2"
	run column 5 io_getevents
	assert_output "4 4 2 4 4 2"
	run column 4 io_setup
	assert_output "4"
	stats_agree 2 1 $((20 * 1048576))
}

@test "pattern: single+sequential: one io_submit per block with nr=1, then one wait for the batch" {
	traced_run seqsingle 20m 10m 4 1 single sequential 10
	run column 4 io_submit
	assert_output "$(printf '1 %.0s' {1..19})1"
	run column 4 io_getevents
	assert_output "4 4 2 4 4 2"
	[ "$(field submits)" -eq 20 ]
	[ "$(field blocks)" -eq 20 ]
	stats_agree 2 1 $((20 * 1048576))
}

@test "pattern: single+overlap: nr=1 per io_submit, min_nr=1, window of Q kept full" {
	traced_run ovlsingle 20m 10m 4 1 single overlap 10
	[ "$(field submits)" -eq 20 ]
	[ "$(field maxinflight)" -eq 4 ]
	run column 4 io_getevents
	refute_output --regexp '(^| )[02-9]'
	stats_agree 2 1 $((20 * 1048576))
}

@test "pattern: block+overlap: io_submit tops the window up to Q, min_nr=1, never more than Q in flight" {
	traced_run ovlblock 20m 10m 4 1 block overlap 10
	[ "$(field maxinflight)" -eq 4 ]
	[ "$(field blocks)" -eq 20 ]
	# The first submit of each operation fills the window in one call.
	run column 4 io_submit
	assert_regex "$output" '^4 '
	run column 4 io_getevents
	refute_output --regexp '(^| )[02-9]'
	stats_agree 2 1 $((20 * 1048576))
}

@test "pattern: tswap_threads=P sets up P io contexts of depth Q per job, one per worker" {
	local p
	for p in 1 2 4; do
		traced_run "threads$p" 16m 8m 3 "$p" block overlap $((8 / p))
		[ "$(field setups)" -eq "$p" ] || fail "threads=$p: $(field setups) io_setup calls"
		[ "$(field contexts)" -eq "$p" ] || fail "threads=$p: $(field contexts) contexts submitted to"
		# Every worker handled its part of each of the 2 operations.
		[ "$(field parts)" -eq $((2 * p)) ] || fail "threads=$p: $(field parts) parts"
		# Each worker's io_submits come from one thread of its own.
		run -0 awk -F '\t' '$2 == "io_submit" { print $1 }' "$REC"
		[ "$(sort -u <<<"$output" | wc -l)" -eq "$p" ] || fail "threads=$p: io_submit from $(sort -u <<<"$output" | wc -l) threads"
		stats_agree 2 "$p" $((16 * 1048576))
	done
}

@test "pattern: numjobs=2 x tswap_threads=2 makes 4 io contexts, one stats file per job" {
	local log=$SCRATCH/nj.strace
	strace_fio "$log" --directory="$SCRATCH" --numjobs=2 --size=4m --bs=2m \
		--rw=write --tswap_block_size=1m --tswap_queue_depth=2 --tswap_threads=2 \
		--tswap_stats="$SCRATCH/stats-%j-%n-%p.json"
	aio_records "$log" >"$SCRATCH/nj.tsv"
	run -0 awk -F '\t' '$2 == "io_setup" && $6 == 0 && $4 == 2' "$SCRATCH/nj.tsv"
	assert_equal "$(wc -l <<<"$output")" 4
	local -a files
	mapfile -t files < <(find "$SCRATCH" -maxdepth 1 -name 'stats-swap-*.json' | sort)
	assert_equal "${#files[@]}" 2
	# %n and %p expanded, and the JSON says the same.
	local f base jobnum pid total=0
	for f in "${files[@]}"; do
		base=${f##*/stats-swap-}
		base=${base%.json}
		jobnum=${base%%-*}
		pid=${base#*-}
		run -0 jq -r '"\(.job) \(.jobnum) \(.pid) \(.threads) \(.io_contexts)"' "$f"
		assert_output "swap $jobnum $pid 2 2"
		total=$((total + $(jq -r .submit_calls "$f")))
	done
	# Two different job numbers.
	[ "$(jq -r .jobnum "${files[@]}" | sort -u | wc -l)" -eq 2 ]
	run -0 awk -F '\t' '$2 == "io_submit"' "$SCRATCH/nj.tsv"
	assert_equal "$(wc -l <<<"$output")" "$total"
}

@test "pattern: every submit x window with threads 1 and 2 obeys the rules and matches tswap_stats" {
	local submit window p
	for submit in single block; do
		for window in sequential overlap; do
			for p in 1 2; do
				# bs=6m: parts of 6m or 3m, B=1m, Q=4: 6 or 3 blocks per part.
				traced_run "m-$submit-$window-$p" 12m 6m 4 "$p" "$submit" "$window" $((6 / p)) --iodepth=2
				stats_agree 2 "$p" $((12 * 1048576))
			done
		done
	done
}

@test "tswap_stats: every key, sane values, written atomically" {
	local st=$SCRATCH/st.json
	rm -f "$SCRATCH/f"
	fio_ok --filename="$SCRATCH/f" --size=16m --bs=4m --iodepth=2 --rw=write \
		--tswap_block_size=1m --tswap_queue_depth=4 --tswap_threads=2 \
		--tswap_submit=block --tswap_window=overlap --tswap_stats="$st"
	assert_file_exists "$st"
	run -0 jq -r 'keys_unsorted | join(" ")' "$st"
	local k
	for k in tswap_version fio_version job jobnum pid backend submit window \
		block_size queue_depth threads io_contexts operations op_errors op_short \
		parts blocks bytes block_errors short_blocks submit_calls submit_eagain \
		wait_calls blocks_per_submit inflight_at_submit submit_latency_us \
		wait_latency_us op_latency_us elapsed_s gbs; do
		assert_regex " $output " " $k "
	done
	run -0 jq -r '"\(.fio_version) \(.backend) \(.submit) \(.window) \(.block_size) \(.queue_depth) \(.threads)"' "$st"
	assert_output "$(fio_version) libaio block overlap 1048576 4 2"
	run -0 jq -r '"\(.operations) \(.op_errors) \(.op_short) \(.parts) \(.blocks) \(.bytes) \(.block_errors) \(.short_blocks)"' "$st"
	assert_output "4 0 0 8 16 16777216 0 0"
	# Latency summaries are ordered; GB/s is bytes / elapsed / 1e9.
	run -0 jq -r '[.submit_latency_us, .wait_latency_us, .op_latency_us][]
		| (.min <= .p50 and .p50 <= .p99 and .p99 <= .max and .min <= .mean and .mean <= .max and .max > 0)' "$st"
	assert_output "$(printf 'true\ntrue\ntrue')"
	run -0 jq -r '(.elapsed_s > 0) and (.gbs > 0) and ((.gbs - .bytes / .elapsed_s / 1e9) | fabs) <= 0.01 * .gbs' "$st"
	assert_output true
	# Atomic write: nothing but the stats file and the data file is left.
	run -0 ls -A "$SCRATCH"
	assert_output "$(printf 'f\nst.json')"
}

@test "pattern: the issue's example (bs=64m, iodepth=4, Q=32, 4 threads), scaled to 256m, matches strace" {
	# 64m / 4 threads = 16m parts = 16 blocks of 1m: with Q=32 each part
	# goes down in one io_submit of 16 and is reaped with min_nr=1.
	traced_run example 256m 64m 32 4 block overlap 16 --iodepth=4
	[ "$(field setups)" -eq 4 ]
	[ "$(field contexts)" -eq 4 ]
	[ "$(field parts)" -eq 16 ]
	[ "$(field blocks)" -eq 256 ]
	assert_equal "$(field bps)" "16:16"
	stats_agree 4 4 $((256 * 1048576))
	assert_regex "$FIO_STDOUT" "WRITE: bw=.*io=256MiB"
}

# iocb_layout IOCBS BS P B NOPS OP - check the accepted iocbs against the
# layout of design.md section 1, printing one line per violation:
#   - the (offset, nbytes) of all iocbs are exactly the blocks of NOPS
#     operations of BS bytes: P parts of BS/P, cut in blocks of B with an
#     unpadded tail, each block once;
#   - every iocb has opcode OP;
#   - part i of every operation goes through one and the same context, and
#     the P parts through P different contexts;
#   - each context takes the operations in FIFO (here: file) order, as the
#     callers only run sequential jobs;
#   - reads: within an operation, buffer - file offset is constant (each
#     block lands at its own place in the io_u buffer, no bounce buffer).
iocb_layout() {
	awk -F '\t' -v BS="$2" -v P="$3" -v B="$4" -v NOPS="$5" -v OP="$6" '
	BEGIN {
		part = BS / P
		for (o = 0; o < NOPS; o++)
			for (i = 0; i < P; i++)
				for (k = 0; k * B < part; k++) {
					len = part - k * B; if (len > B) len = B
					want[sprintf("%.0f %.0f", o * BS + i * part + k * B, len)] = 1
					nwant++
				}
	}
	{
		key = $5 " " $6
		if (!(key in want)) printf "VIOLATION: unexpected iocb offset=%s nbytes=%s\n", $5, $6
		else if (seen[key]++) printf "VIOLATION: iocb offset=%s nbytes=%s submitted twice\n", $5, $6
		if ($3 != OP) printf "VIOLATION: iocb offset=%s has opcode %s, expected %s\n", $5, $3, OP
		o = int($5 / BS); i = int(($5 - o * BS) / part)
		if ((i in ctxof) && ctxof[i] != $2) printf "VIOLATION: part %d went through contexts %s and %s\n", i, ctxof[i], $2
		ctxof[i] = $2
		# Sequential jobs: each worker takes operations in FIFO order.
		if (($2 in lastop) && o < lastop[$2]) printf "VIOLATION: context %s went back from op %d to op %d (not FIFO)\n", $2, lastop[$2], o
		lastop[$2] = o
		if ($4 != "-") {
			d = sprintf("%.0f", $4 - $5)
			if ((o in delta) && delta[o] != d) printf "VIOLATION: op %d: block at offset %s not at its place in the buffer\n", o, $5
			delta[o] = d
		}
		n++
	}
	END {
		for (key in want) if (!(key in seen)) printf "VIOLATION: block offset/nbytes %s never submitted\n", key
		for (i in ctxof) for (j in ctxof) if (i < j && ctxof[i] == ctxof[j]) printf "VIOLATION: parts %d and %d share context %s\n", i, j, ctxof[i]
		printf "iocbs=%d expected=%d\n", n, nwant
	}' "$1"
}

# layout_case RW P BS_KB B_KB Q IODEPTH SUBMIT WINDOW NOPS
layout_case() {
	local rw=$1 p=$2 bs_kb=$3 b_kb=$4 q=$5 iodepth=$6 submit=$7 window=$8 nops=$9
	local f=$SCRATCH/layout.file log=$SCRATCH/layout.strace out op=PWRITE
	local size_kb=$((bs_kb * nops))
	rm -f "$f"
	if [ "$rw" = read ]; then
		op=PREAD
		psync_ok --filename="$f" --size="${size_kb}k" --bs=1m --rw=write
	fi
	strace_fio "$log" --filename="$f" --size="${size_kb}k" --bs="${bs_kb}k" \
		--rw="$rw" --iodepth="$iodepth" --tswap_block_size="${b_kb}k" \
		--tswap_queue_depth="$q" --tswap_threads="$p" --tswap_submit="$submit" \
		--tswap_window="$window"
	iocb_records "$log" >"$SCRATCH/layout.iocbs"
	out=$(iocb_layout "$SCRATCH/layout.iocbs" $((bs_kb * 1024)) "$p" $((b_kb * 1024)) "$nops" "$op")
	echo "# layout $rw P=$p bs=${bs_kb}k B=${b_kb}k: ${out##*$'\n'}" >&3
	if grep -q '^VIOLATION' <<<"$out"; then
		printf '%s\n' "$out" | head -40 >&2
		fail "$rw P=$p bs=${bs_kb}k B=${b_kb}k: iocbs do not match the operation layout"
	fi
}

@test "layout: the iocbs tile every operation exactly (offsets, tail lengths, one context per part, buffer positions)" {
	layout_case read 2 1392 128 4 3 block overlap 6
	layout_case read 4 1536 256 2 2 single sequential 4
	layout_case read 1 1536 1024 4 1 block sequential 4
	layout_case write 4 1536 256 2 2 block overlap 4
	layout_case write 2 1392 128 4 3 single overlap 6
}

@test "pattern: swap-in (rw=read) follows the same submit/window rules and matches tswap_stats" {
	local submit window
	for submit in single block; do
		for window in sequential overlap; do
			# fio lays the file out with plain writes first: no AIO calls.
			traced_run "r-$submit-$window" 12m 6m 4 2 "$submit" "$window" 3 --rw=read --iodepth=2
			stats_agree 2 2 $((12 * 1048576))
			run -1 grep -q 'IOCB_CMD_PWRITE' "$SCRATCH/r-$submit-$window.strace"
			run -0 grep -o 'IOCB_CMD_PREAD' "$SCRATCH/r-$submit-$window.strace"
			assert_equal "$(wc -l <<<"$output")" 12
		done
	done
}
