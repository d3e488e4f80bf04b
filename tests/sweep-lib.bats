#!/usr/bin/env bats
# tests/sweep-lib.bats - the sweep's pure functions, with the modules of
# sweep/lib/ sourced directly (no fio, no target, no run directory): fio
# size notation, a point's job and one run's result.json
# (tswap.results.result); the aggregation, best pick and best-aio.json are
# tests/py/test_pick_grid.py. The whole file runs in about a second.

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
@test "a ceiling of several jobs: its job splits the queue over them, each on its own slice" {
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
	# the ceiling of a direction is its faster ceiling point:
	# tests/py/test_pick_grid.py
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
