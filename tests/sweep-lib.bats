#!/usr/bin/env bats
# tests/sweep-lib.bats - the sweep's pure functions, with the modules of
# sweep/lib/ sourced directly (no fio, no target, no run directory): fio
# size notation, a point's job, one run's result.json (tswap.results.result), and the
# aggregation and best pick (tswap.stats.aggregate) and best-aio.json
# (tswap.report.best_aio). The whole file runs
# in about a second.

# '$...' in single quotes are jq's.
# shellcheck disable=SC2016

bats_require_minimum_version 1.5.0

bats_load_library bats-support
bats_load_library bats-assert

# The entry point sets these two, then sources state.sh first.
SCRIPT_DIR=$(cd "$BATS_TEST_DIRNAME/../sweep" && pwd)
SWEEP_HOME=$SCRIPT_DIR
# shellcheck source=../sweep/lib/state.sh
. "$SWEEP_HOME/lib/state.sh"
# shellcheck source=../sweep/lib/util.sh
. "$SWEEP_HOME/lib/util.sh"
# shellcheck source=../sweep/lib/results.sh
. "$SWEEP_HOME/lib/results.sh"
# shellcheck source=../sweep/lib/ranks.sh
. "$SWEEP_HOME/lib/ranks.sh"
# grid_from, expand_grid, add_ceilings (grid files, their plan lines and
# ceilings are tswap.plan's: tests/py/test_sweep_plan.py)
# shellcheck source=plan.bash
. "$BATS_TEST_DIRNAME/plan.bash"

setup() {
	TMP=$BATS_TEST_TMPDIR
}

@test "szname: the shortest exact notation" {
	local v
	szname v 67108864
	assert_equal "$v" 64m
	szname v 1572864
	assert_equal "$v" 1536k
	szname v 4097
	assert_equal "$v" 4097
	szname v 3221225472
	assert_equal "$v" 3g
}
@test "plan_writes: 1 when a point of the plan writes" {
	grid_from 'rw read write' 'qd 8 16'
	PLAN_TEXT=$(add_ceilings "$(expand_grid)")
	assert_equal "$(plan_writes)" 1
	PLAN_TEXT=$(grep -v write <<<"$PLAN_TEXT")
	assert_equal "$(plan_writes)" 0
}
@test "a ceiling of several jobs: its job splits the queue over them, each on its own slice; the faster ceiling counts" {
	# the number of jobs: tests/py/test_sweep_plan.py (tswap.plan.expand ceiling_jobs)
	grid_from 'rw read write' 'tensor 16m' 'block 1m' 'qd 8' 'threads 1 4'
	PLAN_TEXT=$(CEILING_QD=64 CEILING_JOBS=4 add_ceilings "$(expand_grid)")
	# per direction the one-job ceiling and the 4-job one (the faster is
	# the ceiling: tswap.stats.aggregate)
	run -0 cut -f1,2,7,10,11 <<<"$(grep ceiling <<<"$PLAN_TEXT")"
	assert_equal "${#lines[@]}" 4
	assert_line --index 0 "$(printf 'ceiling-read-fio-libaio-bs1m-qd64\tceiling\t64\t0\t64')"
	assert_line --index 1 "$(printf 'ceiling-read-fio-libaio-bs1m-qd64-j4\tceiling\t64\t4\t64')"
	assert_line --index 3 "$(printf 'ceiling-write-fio-libaio-bs1m-qd64-j4\tceiling\t64\t4\t64')"
	# the job: 4 jobs of iodepth 16, each on a quarter of the sweep's size
	# shellcheck source=../sweep/lib/jobs.sh
	. "$SWEEP_HOME/lib/jobs.sh"
	SIZE_BYTES=$((64 * 1048576)) RUNTIME=2 RAMP=1 IO_SIZE='' STEADY=off
	run -0 point_job "$(grep -m 1 -- -j4 <<<"$PLAN_TEXT")"
	assert_output --partial "$(printf '[ceiling-read-fio-libaio-bs1m-qd64-j4]\nrw=read\nbs=1m\niodepth=16\nnumjobs=4\nsize=16m\noffset_increment=16m')"
	assert_output --partial '; as 4 jobs (submitting threads) of iodepth 16, each on its own 1/4 of the target'
	# the ceiling of a direction is its faster ceiling point
	RUN=$BATS_TEST_TMPDIR
	{
		result ceiling-read-fio-libaio-bs1m-qd64.r1 ceiling-read-fio-libaio-bs1m-qd64 1 2.0
		result ceiling-read-fio-libaio-bs1m-qd64-j4.r1 ceiling-read-fio-libaio-bs1m-qd64-j4 1 1.5
		result ceiling-write-fio-libaio-bs1m-qd64.r1 ceiling-write-fio-libaio-bs1m-qd64 1 1.0
		result ceiling-write-fio-libaio-bs1m-qd64-j4.r1 ceiling-write-fio-libaio-bs1m-qd64-j4 1 1.25
	} | jq -s . >"$RUN/results.json"
	run -0 jq -c .ceiling <<<"$(aggregate_json "$RUN/results.json")"
	assert_output '{"read":2,"write":1.25}'
}

# result RUNKEY POINT REPEAT GBS [STATUS]: one result.json object of the plan
# point POINT (its settings from PLAN_TEXT).
result() {
	jq -n --arg runkey "$1" --arg point "$2" --argjson repeat "$3" --argjson gbs "$4" \
		--arg status "${5:-ok}" --slurpfile plan <(plan_json) '
		($plan[0][] | select(.point == $point)) + {runkey: $runkey, repeat: $repeat,
		 status: $status, error: (if $status == "ok" then "" else "boom" end),
		 gbs: (if $status == "ok" then $gbs else null end),
		 ops_per_s: 1, clat_p50_us: 10, clat_p99_us: 20, clat_p999_us: 30, submit_per_gb: 2}'
}

@test "aggregate_json: medians and CV over repeats, % of ceiling, flags, and the best read, write, combined and aio picks" {
	grid_from 'rw read write' 'backend libaio io_uring' 'tensor 4m' 'qd 8 16'
	PLAN_TEXT=$(add_ceilings "$(expand_grid)")
	local rl8=read-libaio-t4m-b1m-q8-block-overlap-p1-d1 rl16=read-libaio-t4m-b1m-q16-block-overlap-p1-d1
	local ru8=read-io_uring-t4m-b1m-q8-block-overlap-p1-d1 wl8=write-libaio-t4m-b1m-q8-block-overlap-p1-d1
	local wl16=write-libaio-t4m-b1m-q16-block-overlap-p1-d1 wu16=write-io_uring-t4m-b1m-q16-block-overlap-p1-d1
	{
		result ceiling-read-fio-libaio-bs1m-qd64.r1 ceiling-read-fio-libaio-bs1m-qd64 1 2.0
		result ceiling-write-fio-libaio-bs1m-qd64.r1 ceiling-write-fio-libaio-bs1m-qd64 1 1.0
		# rl8: repeats 1.0, 1.2, 1.1 -> median 1.1, CV 0.0909 (flagged)
		result "$rl8.r1" "$rl8" 1 1.0
		result "$rl8.r2" "$rl8" 2 1.2
		result "$rl8.r3" "$rl8" 3 1.1
		result "$rl16.r1" "$rl16" 1 1.5
		result "$rl16.r2" "$rl16" 2 1.5
		# io_uring reads fastest, and above 1.1 x the ceiling (a cache)
		result "$ru8.r1" "$ru8" 1 2.5
		result "$wl8.r1" "$wl8" 1 0.9
		result "$wl16.r1" "$wl16" 1 0.3
		result "$wl16.r2" "$wl16" 2 0 error
		result "$wu16.r1" "$wu16" 1 0.95
	} | jq -s . >"$TMP/results.json"
	aggregate_json "$TMP/results.json" >"$TMP/agg.json"
	run -0 jq -c '.ceiling' "$TMP/agg.json"
	assert_output '{"read":2,"write":1}'
	run -0 jq -r --arg p "$rl8" '.points[] | select(.point == $p)
		| "\(.gbs) \(.cv * 1e4 | round) \(.cv_flag) \(.pct_ceiling) \(.runs) \(.ok_runs) \(.status)"' "$TMP/agg.json"
	assert_output '1.1 909 true 55.00000000000001 3 3 ok'
	run -0 jq -r --arg p "$wl16" '.points[] | select(.point == $p) | "\(.gbs) \(.cv) \(.status) \(.errors)"' "$TMP/agg.json"
	assert_output '0.3 null partial ["boom"]'
	run -0 jq -r --arg p "$ru8" '.points[] | select(.point == $p) | "\(.above_ceiling) \(.pct_ceiling)"' "$TMP/agg.json"
	assert_output 'true 125'
	run -0 jq -r '.points[] | select(.status == "not run") | .point' "$TMP/agg.json"
	assert_output "$(printf '%s\n' read-io_uring-t4m-b1m-q16-block-overlap-p1-d1 write-io_uring-t4m-b1m-q8-block-overlap-p1-d1)"
	# flags: the reasons not to trust a point; a flagged point is never a pick
	run -0 jq -c '[.points[] | select(.gbs != null) | {q: .qd, rw, b: .backend, flags, trusted}]' "$TMP/agg.json"
	assert_output '[{"q":8,"rw":"read","b":"libaio","flags":["cv"],"trusted":false},{"q":16,"rw":"read","b":"libaio","flags":[],"trusted":true},{"q":8,"rw":"read","b":"io_uring","flags":["above ceiling"],"trusted":false},{"q":8,"rw":"write","b":"libaio","flags":[],"trusted":true},{"q":16,"rw":"write","b":"libaio","flags":["partial"],"trusted":false},{"q":16,"rw":"write","b":"io_uring","flags":[],"trusted":true}]'
	# best read and write: the highest median among trusted points; the
	# io_uring read above the ceiling (2.5) is skipped
	run -0 jq -r '"\(.best.read.point) \(.best.write.point)"' "$TMP/agg.json"
	assert_output "$rl16 $wu16"
	# combined needs a trusted read and write of the same settings: libaio
	# q8's read has a CV flag, q16's write is partial: none
	run -0 jq -c '.best.combined' "$TMP/agg.json"
	assert_output 'null'
	# so best-aio.json comes from the best trusted libaio point of one
	# direction, never from io_uring
	run -0 jq -c '.best.aio_source | {backend, qd, why}' "$TMP/agg.json"
	assert_output '{"backend":"libaio","qd":16,"why":"Best libaio read GB/s"}'
	py best-aio "$TMP/agg.json" >"$TMP/best-aio.json"
	run -0 jq -c . "$TMP/best-aio.json"
	assert_output '{"deepspeed_versions":">=0.16.4","aio":{"block_size":1048576,"queue_depth":16,"intra_op_parallelism":1,"single_submit":false,"overlap_events":true,"use_gds":false},"reason":"'"$rl16"' is the only trustworthy point: nothing to compare it with (2 other read point(s) flagged: Warnings)"}'
	run -0 jq -c '.trust' "$TMP/agg.json"
	assert_output '{"trusted":3,"flagged":3,"libaio_with_result":4}'
}

@test "aggregate_json: with one direction only, best-aio.json takes the best libaio point of it; with none, {}" {
	grid_from 'rw read' 'qd 8 16'
	PLAN_TEXT=$(expand_grid)
	{
		result r1 read-libaio-t64m-b1m-q8-block-overlap-p1-d1 1 1.0
		result r2 read-libaio-t64m-b1m-q16-block-overlap-p1-d1 1 1.4
	} | jq -s . >"$TMP/results.json"
	aggregate_json "$TMP/results.json" >"$TMP/agg.json"
	run -0 jq -c '{c: .best.combined, w: .best.write, ceiling, a: (.best.aio_source | {qd, why})}' "$TMP/agg.json"
	assert_output '{"c":null,"w":null,"ceiling":{},"a":{"qd":16,"why":"Best libaio read GB/s"}}'
	printf '[]\n' >"$TMP/none.json"
	aggregate_json "$TMP/none.json" >"$TMP/agg.json"
	py best-aio "$TMP/agg.json" >"$TMP/best-aio.json"
	run -0 jq -c . "$TMP/best-aio.json"
	assert_output '{}'
}

@test "aggregate_json: an even number of runs without latencies (a 2-host fleet's ceiling rows) gives null medians, not a jq error" {
	grid_from 'rw read' 'qd 8'
	PLAN_TEXT=$(add_ceilings "$(expand_grid)")
	{
		result ceiling-read-fio-libaio-bs1m-qd64.h1 ceiling-read-fio-libaio-bs1m-qd64 1 2.0
		result ceiling-read-fio-libaio-bs1m-qd64.h2 ceiling-read-fio-libaio-bs1m-qd64 2 1.0
	} | jq -s 'map(.ops_per_s = null | .clat_p50_us = null | .clat_p99_us = null | .clat_p999_us = null)' >"$TMP/results.json"
	run -0 aggregate_json "$TMP/results.json" across-hosts
	run -0 jq -c '.ceiling' <<<"$output"
	assert_output '{"read":1.5}'
}

@test "result_json: fio's JSON after its notes becomes fio.json; no JSON is an error with fio's last stderr lines, a single one too" {
	local d=$TMP/p line
	line=$(printf '%s\t' read-x tswap read libaio 4194304 1048576 8 block overlap 1 1)1
	TARGET=$TMP/t.swap TARGETS=()
	mkdir -p "$d"
	{
		echo 'note: a line fio prints before its JSON'
		echo '{"fio version": "fio-3.33", "jobs": [{"jobname": "read-x", "error": 0, "job_runtime": 4,'
		echo ' "usr_cpu": 1, "sys_cpu": 2, "job options": {"rw": "read"}, "read": {"io_bytes": 4194304,'
		echo ' "bw_bytes": 1000000000, "iops": 238.4, "clat_ns": {"percentile": {"99.000000": 2000}}}}]}'
	} >"$d/fio.stdout"
	result_json "$d" read-x.r1 1 0 1.5 "$line"
	run -0 jq -r '"\(.status) \(.gbs) \(.fio_version) \(.bw_log)"' "$d/result.json"
	assert_output 'ok 1 fio-3.33 null'
	run -0 jq -r '.jobs[0].jobname' "$d/fio.json"
	assert_output read-x
	assert_equal "$(head -n 1 "$d/fio.stdout")" 'note: a line fio prints before its JSON'
	# half a JSON (a killed fio): no fio.json; the error keeps stderr's
	# last two lines that are not blank, or its only one
	rm -rf "$d" && mkdir -p "$d"
	printf '{"jobs": [\n' >"$d/fio.stdout"
	printf 'first\n\n  \nsecond\nthird\n' >"$d/fio.stderr"
	result_json "$d" read-x.r1 1 1 1.5 "$line"
	run -0 jq -r '"\(.status)|\(.error)"' "$d/result.json"
	assert_output 'error|fio gave no JSON (exit 1): second third '
	[ ! -e "$d/fio.json" ] || fail "fio.json from a broken JSON"
	rm -rf "$d" && mkdir -p "$d"
	echo 'fio: the only line' >"$d/fio.stderr"
	result_json "$d" read-x.r1 1 2 1.5 "$line"
	run -0 jq -r .error "$d/result.json"
	assert_output 'fio gave no JSON (exit 2): fio: the only line '
	# nothing on stderr: fio's notes before its JSON say why
	rm -rf "$d" && mkdir -p "$d"
	printf 'fio: pid=1, err=30/file:filesetup.c:805, func=open, error=Read-only file system\n{"jobs": [\n' >"$d/fio.stdout"
	: >"$d/fio.stderr"
	result_json "$d" read-x.r1 1 1 1.5 "$line"
	run -0 jq -r .error "$d/result.json"
	assert_output --partial 'error=Read-only file system'
}
