#!/usr/bin/env bats
# tests/sweep-ranks.bats - sweep points of several handles, with real fio on
# small files: ranks (one tswap handle and one file per rank), several
# targets (ranks round-robin over them) and readwrite (a read and a write
# handle at once). Needs the engine: tests skip, saying why, without it.
# shellcheck disable=SC2016 # '${TSWAP_RANK0}' is the literal fio expands

bats_require_minimum_version 1.5.0

if [ -f "$BATS_TEST_DIRNAME/helpers.bash" ]; then
	load helpers
else
	bats_load_library bats-support
	bats_load_library bats-assert
	bats_load_library bats-file
fi

SWEEP_REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
SWEEP=$SWEEP_REPO/sweep/tswap-sweep
SWEEP_ENGINE=${TSWAP_ENGINE:-$SWEEP_REPO/build/tswap.so}

setup() {
	if [ ! -f "$SWEEP_ENGINE" ]; then
		skip "requires the engine: $SWEEP_ENGINE is missing (run 'make')"
	fi
	D=$BATS_TEST_TMPDIR
	export TSWAP_ENGINE=$SWEEP_ENGINE
	# one tswap point: libaio, 4 MiB tensors in 1 MiB blocks, queue depth 8
	printf 'backend libaio\ntensor 4m\nblock 1m\nqd 8\n' >"$D/one.grid"
}

sweep_ok() {
	run --separate-stderr timeout -k 10 300 "$SWEEP" --grid "$D/one.grid" --size 16m "$@"
	if [ "$status" -ne 0 ]; then
		# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
		printf 'exit %s\n--- stdout\n%s\n--- stderr\n%s\n' "$status" "$output" "$stderr" >&2
		fail "tswap-sweep failed (exit $status)"
	fi
}

# sweep_done ARGS...: as sweep_ok, but exit 4 (every point flagged: on a
# busy machine one point beside a ceiling measured at the same time can
# land above it) passes too, with the report saying why: the tests that
# use it check how points run, not whether they are trusted.
sweep_done() {
	run --separate-stderr timeout -k 10 300 "$SWEEP" --grid "$D/one.grid" --size 16m "$@"
	if [ "$status" -ne 0 ] && [ "$status" -ne 4 ]; then
		printf 'exit %s\n--- stdout\n%s\n--- stderr\n%s\n' "$status" "$output" "$stderr" >&2
		fail "tswap-sweep failed (exit $status)"
	fi
	[ "$status" -eq 0 ] || assert_output --partial 'pick:       none: every point with a result is flagged'
}

@test "sweep ranks: bad ranks and target lists exit 2 with one line" {
	run --separate-stderr "$SWEEP" --ranks 0 --dry-run
	assert_failure 2
	assert_equal "$stderr" "tswap-sweep: --ranks: ranks: not an integer from 1 to 256: '0'"
	run --separate-stderr "$SWEEP" --target "$D/a,,$D/b" --dry-run
	assert_failure 2
	assert_equal "$stderr" "tswap-sweep: --target: an empty path in the list '$D/a,,$D/b' (see --help)"
	run --separate-stderr "$SWEEP" --target "$D/a,$D/a" --dry-run
	assert_failure 2
	assert_equal "$stderr" "tswap-sweep: --target: $D/a is named twice (see --help)"
	printf 'ranks 1 x\n' >"$D/bad.grid"
	run --separate-stderr "$SWEEP" --grid "$D/bad.grid" --dry-run
	assert_failure 2
	assert_equal "$stderr" "tswap-sweep: $D/bad.grid:1: ranks: not an integer from 1 to 256: 'x'"
}

@test "sweep ranks: 1 rank reading or writing gives the keys and job files of before" {
	run --separate-stderr "$SWEEP" --grid "$D/one.grid" --size 16m --target "$D/t" --rw read --ranks 1 --dry-run
	assert_success
	assert_output --partial '### [2/2] read-libaio-t4m-b1m-q8-block-overlap-p1-d1.r1'
	assert_output --partial $'filename=${TSWAP_TARGET}\nsize=16m'
	refute_output --partial 'TSWAP_RANK'
}

@test "sweep ranks: ranks=3 runs three handles on three files at once; aggregate and slowest-rank GB/s" {
	local run=$D/run p
	sweep_done --target "$D/t" --rw read --ranks 3 --io-size 8m --out "$run"
	p=$run/points/read-libaio-t4m-b1m-q8-block-overlap-p1-d1-n3.r1
	assert_file_exist "$p/result.json"
	# three files, each written in full by the sweep before the reads
	for r in 0 1 2; do
		assert_equal "$(stat -c %s "$D/t.rank$r")" 16777216
		assert_equal "$(grep -c "^filename=\${TSWAP_RANK$r}\$" "$p/job.fio")" 1
		assert_equal "$(jq -r '.io_contexts' "$p/stats.job$r.json")" 1
		assert_equal "$(jq -r '.bytes' "$p/stats.job$r.json")" 8388608
	done
	assert_file_not_exist "$D/t.rank3"
	assert_file_not_exist "$D/t" # no point of 1 rank: the single target is not made
	# three jobs, one per handle, in one group (no stonewall, no group_reporting)
	run ! grep -E '^(stonewall|group_reporting)' "$p/job.fio"
	assert_equal "$(jq '.jobs | length' "$p/fio.json")" 3
	assert_equal "$(jq '[.jobs[].groupid] | unique | length' "$p/fio.json")" 1
	assert_equal "$(jq -c '[.handles, .io_contexts]' "$p/stats.json")" '[3,3]'
	# the ceiling is fio libaio with three jobs too
	assert_equal "$(jq '.jobs | length' "$run/points/ceiling-read-fio-libaio-bs1m-qd64-n3.r1/fio.json")" 3
	run -0 jq -e '.points[0] | .ranks == 3 and .gbs > 0 and .slowest_rank_gbs > 0
		and .slowest_rank_gbs <= .gbs / 3 + 1e-9 and .pct_ceiling > 0' "$run/aggregate.json"
	# aggregate = the sum of the handles; slowest = the least of them
	run -0 jq -e '(.handles | map(.gbs)) as $g | ((($g | add) - .gbs) | fabs) < 1e-6
		and .slowest_rank_gbs == ($g | min) and ([.handles[].rank] | sort) == [0,1,2]' "$p/result.json"
	assert_file_contains "$run/report.md" '^## Ranks, targets and mixed direction'
	assert_file_contains "$run/report.md" '^| read-libaio-t4m-b1m-q8-block-overlap-p1-d1-n3 | 3 |'
	# run.sh reruns the point with the rank files
	assert_file_contains "$p/run.sh" '^export TSWAP_RANK2='
}

@test "sweep ranks: two targets get their ranks round-robin; per-target GB/s" {
	local run=$D/run p
	mkdir -p "$D/a" "$D/b"
	sweep_ok --target "$D/a/s,$D/b/s" --rw write --ranks 4 --io-size 8m --no-ceiling --out "$run"
	for f in a/s.rank0 b/s.rank1 a/s.rank2 b/s.rank3; do assert_file_exist "$D/$f"; done
	for f in b/s.rank0 a/s.rank1 b/s.rank2 a/s.rank3; do assert_file_not_exist "$D/$f"; done
	p=$run/points/write-libaio-t4m-b1m-q8-block-overlap-p1-d1-n4.r1
	run -0 jq -c '[.handles[] | [.rank, .target]]' "$p/result.json"
	assert_output "[[0,\"$D/a/s\"],[1,\"$D/b/s\"],[2,\"$D/a/s\"],[3,\"$D/b/s\"]]"
	run -0 jq -e --arg a "$D/a/s" --arg b "$D/b/s" '.points[0].targets | map(.target) == [$a, $b]
		and all(.gbs > 0)' "$run/aggregate.json"
	run -0 jq -c '.targets' "$run/sweep.json"
	assert_output "[\"$D/a/s\",\"$D/b/s\"]"
}

@test "sweep ranks: readwrite runs a read and a write handle at once; read, write, combined; best-aio by combined" {
	local run=$D/run p
	sweep_ok --target "$D/t" --rw readwrite --runtime 2 --ramp 0 --no-ceiling --out "$run"
	p=$run/points/readwrite-libaio-t4m-b1m-q8-block-overlap-p1-d1.r1
	assert_file_exist "$D/t.rank0"
	assert_file_exist "$D/t.rank0.write"
	run -0 jq -c '[.jobs[] | [.jobname, .["job options"].rw, .groupid]]' "$p/fio.json"
	assert_output '[["readwrite-libaio-t4m-b1m-q8-block-overlap-p1-d1.rank0.read","read",0],["readwrite-libaio-t4m-b1m-q8-block-overlap-p1-d1.rank0.write","write",0]]'
	# at once: one group, no stonewall in the job file, each handle ran
	# about its 2 s (fio's own runtime; not the run's wall time, which a
	# loaded machine stretches past the two back to back: seen at load 10)
	run ! grep -E '^(stonewall|wait_for)' "$p/job.fio"
	run -0 jq -e 'all(.handles[]; .runtime_ms >= 1500 and .bytes > 0)' "$p/result.json"
	run -0 jq -e '.points[0] | .read_gbs > 0 and .write_gbs > 0
		and ((.read_gbs + .write_gbs - .gbs) | fabs) < 1e-6' "$run/aggregate.json"
	run -0 jq -r '.best.aio_source.why' "$run/aggregate.json"
	assert_output 'Best libaio readwrite GB/s (a read and a write handle at once, combined)'
	assert_equal "$(jq -c '.aio | [.block_size, .queue_depth]' "$run/best-aio.json")" '[1048576,8]'
}

# timing_free AGGREGATE: aggregate.json's points without the figures that
# vary from run to run (GB/s, latencies, spreads), for comparing two runs.
timing_free() {
	jq -S '.points | map(del(.gbs, .read_gbs, .write_gbs, .slowest_rank_gbs, .hi, .lo, .thi, .tlo, .opq, .cv_limit, .ops_per_s,
		.clat_p50_us, .clat_p99_us, .clat_p999_us, .cv, .submit_per_gb, .steady_s, .targets[]?.gbs))' "$1"
}

@test "sweep ranks: --resume of multi-handle points (ranks=2, readwrite): a deleted or interrupted point is redone, the rest kept, the aggregate as uninterrupted" {
	local run=$D/run p rw rd sum pid rc=0 i left
	printf 'backend libaio\ntensor 4m\nblock 1m\nqd 8\nrw read readwrite\nranks 2\nrepeat 1\n' >"$D/two.grid"
	run --separate-stderr timeout -k 10 300 "$SWEEP" --grid "$D/two.grid" --size 16m --target "$D/t" \
		--io-size 8m --no-ceiling --out "$run"
	assert_success
	cp "$run/aggregate.json" "$D/whole.json"
	rd=$run/points/read-libaio-t4m-b1m-q8-block-overlap-p1-d1-n2.r1
	rw=$run/points/readwrite-libaio-t4m-b1m-q8-block-overlap-p1-d1-n2.r1
	sum=$(md5sum <"$rd/result.json")
	# a lost point directory: --resume redoes only it
	rm -rf -- "$rw"
	run --separate-stderr timeout -k 10 300 "$SWEEP" --resume "$run"
	assert_success
	# progress goes to stderr
	grep -q '^\[1/2\] read .*done earlier' <<<"$stderr" || fail "read point not kept: $stderr"
	grep -q '^\[2/2\] readwrite .*GB/s' <<<"$stderr" || fail "readwrite point not run: $stderr"
	! grep -q '^\[2/2\] readwrite .*done earlier' <<<"$stderr" || fail "readwrite point not redone: $stderr"
	assert_equal "$(md5sum <"$rd/result.json")" "$sum"
	# four handles again (a read and a write per rank), each its 8 MiB
	run -0 jq -c '[.handles[] | [.rank, .rw, .bytes]]' "$rw/result.json"
	assert_output '[[0,"read",8388608],[0,"write",8388608],[1,"read",8388608],[1,"write",8388608]]'
	assert_equal "$(timing_free "$run/aggregate.json")" "$(timing_free "$D/whole.json")"
	assert_equal "$(jq -c '.points[0] | [.gbs, .slowest_rank_gbs]' "$run/aggregate.json")" \
		"$(jq -c '.points[0] | [.gbs, .slowest_rank_gbs]' "$D/whole.json")"

	# stopped (SIGTERM) as the readwrite point starts: the half point is
	# removed, --resume finishes it. SIGTERM goes to timeout, which passes
	# it on and SIGKILLs the sweep 10 s later: the sweep stops its fio
	# within its grace (5 s; fio 3.33 can hang on a SIGTERM that lands
	# while it forks a job), before that. fd 3 closed: nothing left behind
	# can keep bats' output open.
	run=$D/run2
	timeout -k 10 300 "$SWEEP" --grid "$D/two.grid" --size 16m --target "$D/t2" --runtime 4 --ramp 0 \
		--no-ceiling --out "$run" >"$D/log2" 2>&1 3>&- &
	pid=$!
	for ((i = 0; i < 1200; i++)); do
		compgen -G "$run/points/.tmp-readwrite-*" >/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "$pid"
	for ((i = 0; i < 600; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && { kill -KILL "$pid"; cat "$D/log2"; fail "the sweep did not exit within 60 s of SIGTERM"; }
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ] || { cat "$D/log2"; fail "expected exit 143, got $rc"; }
	# no process (fio) is left working in the run directory
	left=$(find /proc/[0-9]*/cwd -maxdepth 0 -lname "$run/*" 2>/dev/null) || true
	[ -z "$left" ] || fail "processes left in $run: $left"
	assert_file_exist "$run/points/read-libaio-t4m-b1m-q8-block-overlap-p1-d1-n2.r1/result.json"
	assert_file_not_exist "$run/points/readwrite-libaio-t4m-b1m-q8-block-overlap-p1-d1-n2.r1/result.json"
	run --separate-stderr timeout -k 10 300 "$SWEEP" --resume "$run"
	assert_success
	grep -q '^\[1/2\] read .*done earlier' <<<"$stderr" || fail "read point not kept: $stderr"
	run -0 jq -c '[.handles[] | [.rank, .rw, (.bytes > 0)]]' \
		"$run/points/readwrite-libaio-t4m-b1m-q8-block-overlap-p1-d1-n2.r1/result.json"
	assert_output '[[0,"read",true],[0,"write",true],[1,"read",true],[1,"write",true]]'
	run -0 jq -e '.points | length == 2 and all(.status == "ok" and .ranks == 2)
		and (.[1] | .read_gbs > 0 and .write_gbs > 0)' "$run/aggregate.json"
}
