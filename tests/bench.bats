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

@test "bench: a --disk-file that is a symlink or a device node is refused (exit 2), left as it was" {
	printf 'keep\n' >"$SCRATCH/user.txt"
	ln -s "$SCRATCH/user.txt" "$SCRATCH/link.swap"
	local f
	for f in "$SCRATCH/link.swap" /dev/null; do
		run -2 --separate-stderr "$BENCH" --targets disk --disk-file "$f" --runs 1 --runtime 1 --out "$SCRATCH/out"
		assert_regex "${stderr_lines[-1]}" "^tswap-bench: --disk-file $f: not a regular file"
	done
	assert_equal "$(cat "$SCRATCH/user.txt")" keep
	assert [ -L "$SCRATCH/link.swap" ]
	assert [ -c /dev/null ]
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

# --- tests/bench/tswap-bench-deepspeed (make bench-deepspeed) ------------------

DS_BENCH=$REPO/tests/bench/tswap-bench-deepspeed

# ds_source - DeepSpeed's source for the smoke test: $DEEPSPEED_SRC, or the
# release make bench-deepspeed downloaded; skip, saying why, without one.
ds_source() {
	DS_SRC=${DEEPSPEED_SRC:-$REPO/build/deepspeed-v0.16.4}
	if [ ! -d "$DS_SRC/csrc/aio/common" ]; then
		skip "no DeepSpeed source: set DEEPSPEED_SRC=DIR (a DeepSpeed checkout or release) or run make bench-deepspeed once with network access"
	fi
}

@test "bench-deepspeed: --list, and bad usage is one line and exit 2" {
	run -0 "$DS_BENCH" --list --targets ram,loop
	assert_line "ram read-32m-1m-q32-block-overlap-p1-async read 32m 1m 32 block overlap 1 async locked"
	assert_line "ram write-8m-128k-q64-block-overlap-p1-sync write 8m 128k 64 block overlap 1 sync locked"
	assert_line "ram read-32m-1m-q32-block-overlap-p1-aa read 32m 1m 32 block overlap 1 aa locked"
	assert_line "loop read-32m-1m-q32-single-sequential-p1-async read 32m 1m 32 single sequential 1 async locked"
	refute_line --regexp '^loop .*-sync '
	refute_line --regexp ' plain$'
	# A reduced set (docs/performance.md): rows by field, and the time.
	run -0 --separate-stderr "$DS_BENCH" --list --targets disk --dirs read \
		--patterns block-overlap,single-sequential --threads 1 --modes async --pairs 9
	assert_equal "${#lines[@]}" 3
	assert_line "disk read-32m-1m-q32-block-overlap-p1-async read 32m 1m 32 block overlap 1 async locked"
	assert_line "disk read-32m-1m-q32-single-sequential-p1-async read 32m 1m 32 single sequential 1 async locked"
	assert_line "disk read-8m-128k-q64-block-overlap-p1-async read 8m 128k 64 block overlap 1 async locked"
	assert_regex "$stderr" '^tswap-bench-deepspeed: 3 rows x 9 pairs x 2 runs of 2 s: about [0-9]+ minutes$'
	BENCH_DS_THREADS=2 BENCH_DS_MODES=async run -0 --separate-stderr "$DS_BENCH" --list --dirs write
	assert_equal "${#lines[@]}" 1
	assert_line "ram write-32m-1m-q32-block-overlap-p2-async write 32m 1m 32 block overlap 2 async locked"
	local bad
	for bad in "--pairs 0" "--runtime x" "--targets zram" "--size 12" "--bogus" \
		"--threads 3" "--patterns block" "--modes" "--dirs readwrite" \
		"--targets loop --modes sync" "--side rust" "--buffers pinned" "--buffers plain"; do
		# shellcheck disable=SC2086 # the option and its value
		run -2 --separate-stderr "$DS_BENCH" $bad
		assert_equal "${#stderr_lines[@]}" 1
		assert_regex "${stderr_lines[0]}" '^tswap-bench-deepspeed: .*see --help'
	done
}

@test "bench-deepspeed: a locked disk row's tswap side allocates as DeepSpeed 0.19.4+ (tswap_alloc=deepspeed); ram and plain rows do not" {
	[ -f "$ENGINE" ] || skip "requires the engine: $ENGINE is missing (run make)"
	# side_cmd (tests/bench/lib/ds-sides.bash) as run_row calls it, per
	# target and buffer: tswap's buffer options in the fio command
	# shellcheck disable=SC2016 # the script's own $1, $2
	run -0 bash -c 'set -euo pipefail
		PROG=t EXIT_ERROR=3 ENGINE=$2 PATTERN=0xdeadbeef SIDE=cpp
		. "$1/tests/bench/bench-lib.bash"
		. "$1/tests/bench/lib/ds-sides.bash"
		for CUR_TARGET in disk ram loop; do
			for buf in locked plain; do
				side_cmd tswap /x 64m read 32m 1m 32 block overlap 1 async "$buf"
				echo "$CUR_TARGET $buf" $(printf "%s\n" "${CMD[@]}" | grep -E "^--tswap_(pin|alloc|bounce)=")
			done
		done' _ "$REPO" "$ENGINE"
	assert_line "disk locked --tswap_pin=1 --tswap_alloc=deepspeed"
	assert_line "disk plain --tswap_pin=0 --tswap_bounce=1"
	assert_line "ram locked --tswap_pin=1"
	assert_line "loop locked --tswap_pin=1"
	# an engine without the option: one line naming it, exit 3
	# shellcheck disable=SC2016 # the script's own $1
	run -3 --separate-stderr bash -c 'set -euo pipefail
		PROG=t EXIT_ERROR=3 ENGINE=/nonexistent.so PATTERN=0xdeadbeef SIDE=cpp CUR_TARGET=disk
		. "$1/tests/bench/bench-lib.bash"
		. "$1/tests/bench/lib/ds-sides.bash"
		side_cmd tswap /x 64m read 32m 1m 32 block overlap 1 async locked' _ "$REPO"
	assert_equal "$stderr" "t: disk rows need tswap_alloc=deepspeed; /nonexistent.so has no tswap_alloc (run make, or pass --engine)"
}

@test "bench-deepspeed: --side python lists the Python path's rows (P 1 and 8, locked and plain, A/A)" {
	run -0 --separate-stderr "$DS_BENCH" --list --side python --targets ram,disk
	assert_equal "${#lines[@]}" 18
	local rw p buf
	for rw in read write; do
		for p in 1 8; do
			for buf in locked plain; do
				assert_line "disk $rw-32m-1m-q32-block-overlap-p$p-async-$buf $rw 32m 1m 32 block overlap $p async $buf"
			done
		done
	done
	assert_line "ram read-32m-1m-q32-block-overlap-p1-aa-locked read 32m 1m 32 block overlap 1 aa locked"
	assert_regex "$stderr" '^tswap-bench-deepspeed: 18 rows x 15 pairs x 2 runs of 2 s: about [0-9]+ minutes$'
	BENCH_DS_SIDE=python run -0 --separate-stderr "$DS_BENCH" --list --buffers plain --threads 8 --dirs write
	assert_equal "${#lines[@]}" 1
	assert_line "ram write-32m-1m-q32-block-overlap-p8-async-plain write 32m 1m 32 block overlap 8 async plain"
}

@test "bench-deepspeed: --side python without torch skips (exit 4) and says why" {
	printf '#!/bin/sh\necho "ModuleNotFoundError: No module named torch" >&2\nexit 1\n' >"$SCRATCH/python3"
	chmod +x "$SCRATCH/python3"
	run -4 --separate-stderr "$DS_BENCH" --side python --python "$SCRATCH/python3" \
		--rows '^read-32m-1m-q32-block-overlap-p1-async-locked$' --pairs 1 --runtime 1 --out "$SCRATCH/ds-nopy"
	assert_equal "${#stderr_lines[@]}" 1
	assert_regex "${stderr_lines[0]}" "^tswap-bench-deepspeed: skipped: --side python: .*python3 cannot import torch \\(ModuleNotFoundError: No module named torch\\): run make deps-bench-deepspeed"
	assert_file_not_exists "$SCRATCH/ds-nopy"
}

# python_torch - Debian's python3 with python3-torch for --side python;
# skip, saying why, without it (make bench-deepspeed installs it; make
# deps and CI do not: it is large).
python_torch() {
	/usr/bin/python3 -c 'import torch' 2>/dev/null ||
		skip "no python3-torch for /usr/bin/python3: make deps-bench-deepspeed installs it"
	command -v ninja >/dev/null || skip "no ninja (torch's JIT build): make deps-bench-deepspeed installs it"
}

@test "bench-deepspeed: --side python, a locked and a plain row end to end against DeepSpeed's op from Python" {
	ds_source
	python_torch
	# The op is built once into build/ds-py-ext (minutes on 2 cores) and
	# reused by later runs and by make bench-deepspeed.
	local out=$SCRATCH/ds-py row=read-32m-1m-q32-block-overlap-p1-async
	run -0 --separate-stderr "$DS_BENCH" --side python --ds-src "$DS_SRC" --targets ram \
		--size 64m --rows "^$row-(locked|plain)\$" --pairs 2 --runtime 1 --out "$out"
	assert_line --regexp "^\| ram\.$row-locked \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \[n/a\] \|"
	assert_line --regexp "^\| ram\.$row-plain \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \[n/a\] \|"
	assert_line --regexp "^tswap vs DeepSpeed v0.16.4 \(side: python, async_io op by op_builder/(cpu/)?async_io.py, effective -O0, "
	run -0 jq -s -c '[.[] | select(.kind == "timed" and (.row | endswith("locked"))) | .side]' "$out/runs.jsonl"
	assert_output '["tswap","ds","ds","tswap"]'
	# tmpfs: the same calls on both sides; the bytes written and read back
	# are the pattern on both, through DeepSpeed's bounce buffer too.
	run -0 jq -r '.rows[] | [.row, .bytes_ok, .shape.same, .shape.a.hist, .shape.b.hist,
		(.gbs.b > 0), (.cpu_s_per_gb.b > 0)] | @tsv' "$out/results.json"
	assert_line "$(printf 'ram.%s-locked\tyes\ttrue\t32:8\t32:8\ttrue\ttrue' "$row")"
	assert_line "$(printf 'ram.%s-plain\tyes\ttrue\t32:8\t32:8\ttrue\ttrue' "$row")"
	run -0 jq -r '.meta.side, (.meta.py_build.cflags | [scan("-O[0-3]")] | last), .meta.tswap_bounce' "$out/results.json"
	assert_output "$(printf 'python\n-O0\nyes')"
	# The plain row's tswap side does DeepSpeed's bounce (tswap_bounce=1,
	# fio's buffers unlocked); the locked row's locks fio's buffers.
	run -0 jq -r '.jobs[0]."job options" | "\(.tswap_bounce) \(.tswap_pin)"' \
		"$out/runs/ram.$row-plain.tswap.timed.1.json"
	assert_output "1 0"
	run -0 jq -r '.jobs[0]."job options" | "\(.tswap_bounce) \(.tswap_pin)"' \
		"$out/runs/ram.$row-locked.tswap.timed.1.json"
	assert_output "null 1"
}

@test "bench-deepspeed: one row end to end against DeepSpeed's handle (pairs, ratios, CI fields, shapes, bytes)" {
	ds_source
	local out=$SCRATCH/ds-out row=read-32m-1m-q32-block-sequential-p1-async
	local row2=read-32m-1m-q32-block-overlap-p2-async
	run -0 --separate-stderr "$DS_BENCH" --ds-src "$DS_SRC" --targets disk \
		--disk-file "$SCRATCH/ds.swap" --size 64m --rows "^($row|$row2)\$" --pairs 2 \
		--runtime 1 --out "$out"
	assert_line --regexp "^\| disk\.$row \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \[n/a\] \|"
	assert_file_exists "$out/results.json"
	# Two pairs, alternating: A B, then B A.
	# shellcheck disable=SC2016 # $NAME in single quotes: jq's
	run -0 jq -s -c --arg row "disk.$row" '[.[] | select(.kind == "timed" and .row == $row) | .side]' "$out/runs.jsonl"
	assert_output '["tswap","ds","ds","tswap"]'
	# Every timed run counted the device's requests (0 when the scratch
	# directory's device is not in /proc/diskstats).
	run -0 jq -s -c '[.[] | select(.kind == "timed") | (.dev_reqs | type)] | unique' "$out/runs.jsonl"
	assert_output '["number"]'
	# P = 2: 16 blocks of each part in one io_submit, 8 tensors x 2 threads,
	# counted from one trace file per thread.
	# shellcheck disable=SC2016 # $NAME in single quotes: jq's
	run -0 jq -r --arg row "disk.$row2" '.rows[] | select(.row == $row) | "\(.shape.a.hist) / \(.shape.b.hist)"' "$out/results.json"
	assert_output "16:16 / 16:16"
	# shellcheck disable=SC2016 # $NAME in single quotes: jq's
	run -0 jq -r --arg row "disk.$row" '.rows[] | select(.row == $row) | [.a, .b, (.gbs.a > 0), (.gbs.b > 0), .ratio_gbs.n,
		(.ratio_gbs.median > 0), (.cpu_s_per_gb.a > 0), (.cpu_s_per_gb.b > 0),
		.bytes_ok, .shape.same, .shape.a.hist, .shape.b.hist] | @tsv' "$out/results.json"
	# 32m tensors of 1m blocks, Q=32, sequential: one io_submit of 32 per
	# tensor on both sides, same bytes written and read back.
	assert_output "$(printf 'tswap\tds\ttrue\ttrue\t2\ttrue\ttrue\ttrue\tyes\ttrue\t32:8\t32:8')"
	# the disk rows' tswap buffer is allocated as DeepSpeed 0.19.4+'s swap buffers
	run -0 jq -r '.jobs[0]."job options" | "\(.tswap_alloc) \(.tswap_pin)"' "$out/runs/disk.$row.tswap.timed.1.json"
	assert_output "deepspeed 1"
	run -0 jq -r '.meta.ds_version' "$out/results.json"
	assert_output v0.16.4
}

@test "bench-deepspeed: the loop target's device node and a symlinked --disk-file are left as they were" {
	ds_source
	[ "$(id -u)" -eq 0 ] || skip "needs root (loop device)"
	local before after
	# shellcheck disable=SC2012 # loop device names are plain
	before=$(ls /dev/loop[0-9]* | sort)
	run -0 --separate-stderr "$DS_BENCH" --ds-src "$DS_SRC" --targets loop --size 64m \
		--rows '^read-8m-128k-q64-block-overlap-p1-async$' --pairs 1 --runtime 1 --out "$SCRATCH/ds-loop"
	assert_line --regexp '^\| loop\.read-8m-128k-q64-block-overlap-p1-async \|'
	# shellcheck disable=SC2012 # loop device names are plain
	after=$(ls /dev/loop[0-9]* | sort)
	assert_equal "$after" "$before"
	printf 'keep\n' >"$SCRATCH/user.txt"
	ln -s "$SCRATCH/user.txt" "$SCRATCH/link.swap"
	run -2 --separate-stderr "$DS_BENCH" --ds-src "$DS_SRC" --targets disk --disk-file "$SCRATCH/link.swap" \
		--rows '^read-8m-128k-q64-block-overlap-p1-async$' --pairs 1 --runtime 1 --out "$SCRATCH/ds-link"
	assert_regex "${stderr_lines[-1]}" '^tswap-bench-deepspeed: --disk-file .*link.swap: not a regular file'
	assert_equal "$(cat "$SCRATCH/user.txt")" keep
}
