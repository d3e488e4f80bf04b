#!/usr/bin/env bats
# tests/bench.bats - tests/bench/tswap-bench (make bench): its usage, its
# rows, and one row end to end on a small file (seconds, not minutes). It
# asserts no speed: the benchmark reports ratios, it does not judge them.

# output, stderr and stderr_lines are set by bats' run.
# shellcheck disable=SC2154

bats_require_minimum_version 1.5.0

load helpers

BENCH=$REPO/tests/bench/tswap-bench

setup() { common_setup; }
teardown() { common_teardown; }

@test "bench: --list has the issue's rows on every target it names" {
	run -0 "$BENCH" --list --targets ram,disk
	local rw geo be
	for rw in read write; do
		for geo in 1m-q32 128k-q64; do
			for be in libaio io_uring; do
				assert_line --regexp "^ram $rw-$geo-$be $rw "
				assert_line --regexp "^disk $rw-$geo-$be $rw "
			done
		done
	done
	for be in libaio io_uring; do
		assert_line "ram read-1m-q32-$be-seq read 1m 32 $be seq"
		assert_line "ram read-1m-q32-$be-single read 1m 32 $be single"
		assert_line "ram read-128k-q64-$be-threads2 read 128k 64 $be threads2"
	done
	assert_line "ram read-1m-q32-io_uring-fixedbufs read 1m 32 io_uring fixedbufs"
	assert_line "ram read-1m-q32-libaio-aa read 1m 32 libaio aa"
}

@test "bench: bad usage is one line and exit 2" {
	local args
	for args in "--runs 0" "--runtime 1.5" "--targets nvme" "--size 12" "--tensor x" "--bogus"; do
		# shellcheck disable=SC2086 # one option and its value
		run -2 --separate-stderr "$BENCH" $args
		[ "${#stderr_lines[@]}" -eq 1 ] || fail "$args: ${stderr}"
		assert_regex "$stderr" '^tswap-bench: '
		[ -z "$output" ] || fail "$args printed on stdout: $output"
	done
}

@test "bench: one row end to end: A B runs, medians, ratios, syscalls, table, results.{md,json}, --report" {
	local out=$SCRATCH/out
	local row
	run -0 --separate-stderr "$BENCH" --targets disk --disk-file "$SCRATCH/b.swap" \
		--size 64m --tensor 8m --tswap-iodepth 1 --rows '^read-128k-q64-libaio$' \
		--runs 2 --runtime 1 --out "$out"
	assert_line --regexp '^target +row +A / B'
	assert_line --regexp '^disk +read-128k-q64-libaio +tswap 8mx1 / fio 128kx64 '
	row=$(grep -E '^disk +read-128k' <<<"$output")
	assert_line --regexp '^disk: best tswap .* best fio '
	assert_file_exists "$out/results.md"
	grep -q '^| target | row |' "$out/results.md"
	# Two alternating timed runs per side, a setup run each, a count each.
	run -0 jq -s '[.[] | select(.kind == "timed") | .side] | join(",")' "$out/runs.jsonl"
	assert_output '"tswap,fio,tswap,fio"'
	run -0 jq -r '.rows[0] | [.a.side, .b.side, (.a.gbs > 0), (.b.gbs > 0),
		(.ratio.gbs > 0), (.a.cpu_s_per_gb > 0), (.b.cpu_s_per_gb > 0),
		.a.bs, .a.iodepth, .b.bs, .b.iodepth] | @tsv' "$out/results.json"
	assert_output "$(printf 'tswap\tfio\ttrue\ttrue\ttrue\ttrue\ttrue\t8388608\t1\t131072\t64')"
	# tswap's syscalls come from tswap_stats; with a counter, fio's too,
	# and the counter agrees with tswap_stats for tswap.
	run -0 jq -r '.meta.counter' "$out/results.json"
	if [ "$output" != none ]; then
		run -0 jq -r '.rows[0] | [(.a.syscalls_per_gb > 0), (.b.syscalls_per_gb > 0),
			(.a.syscalls_per_gb == .a.counted_syscalls_per_gb)] | @tsv' "$out/results.json"
		assert_output "$(printf 'true\ttrue\ttrue')"
	fi
	# --report rebuilds the same table from the run.
	run -0 --separate-stderr "$BENCH" --report "$out"
	assert_line "$row"
}
