#!/usr/bin/env bats
# tests/sweep-steady.bats - steady state (fio's steadystate per point),
# bandwidth over time (fio's bw logs, "drops during the run") and
# preconditioning (--precondition) of sweep/tswap-sweep: result_json's
# steady fields on crafted fio JSON, job options with --dry-run, then real
# fio on small files and a loop device (the bandwidth-log check's rules:
# tests/py/test_bwlog.py).

# '$...' in single quotes are jq's and fio's.
# shellcheck disable=SC2016

bats_require_minimum_version 1.5.0

load helpers

REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
SWEEP=$REPO/sweep/tswap-sweep
ENGINE=${TSWAP_ENGINE:-$REPO/build/tswap.so}

setup() {
	common_setup
	cd "$SCRATCH" || fail "cd $SCRATCH"
	# one write point of 4 MiB tensors; RUNTIME/RAMP per test
	cat >one.grid <<-'EOF'
		description  one write point
		rw           write
		backend      libaio
		tensor       4m
		iodepth      2
		block        1m
		qd           8
		window       overlap
		submit       block
		threads      1
		size         32m
		repeat       1
	EOF
}

teardown() {
	common_teardown
}

# bwlog FILE START_MS STEP_MS KIBS...: a fio bandwidth log, one sample each.
bwlog() {
	local f=$1 t=$2 step=$3 v
	shift 3
	: >"$f"
	for v in "$@"; do
		printf '%s, %s, 1, 0, 0\n' "$t" "$v" >>"$f"
		t=$((t + step))
	done
}

sweep() {
	TSWAP_ENGINE=$ENGINE run --separate-stderr timeout -k 10 300 "$SWEEP" "$@"
}

sweep_ok() {
	sweep "$@"
	# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
	[ "$status" -eq 0 ] || fail "tswap-sweep $* exited $status: $stderr"
}

needs_engine() {
	[ -f "$ENGINE" ] || skip "requires the engine: $ENGINE is missing (run 'make')"
}

# result_of FIO_JSON: result.json of a point directory whose fio output is
# FIO_JSON (jq text), as the executors write it (tswap.cli.result
# write_result, once results.sh result_json).
result_of() {
	mkdir -p p
	printf '%s\n' "$1" >p/fio.stdout
	/usr/bin/python3 -I -B -c 'import sys
sys.path.insert(0, sys.argv[1])
from tswap.cli.result import write_result
from tswap.executor.local import BWLOG_MIN_SAMPLES, BWLOG_MSEC, DROP_PCT
write_result("p", sys.argv[2], "write-x.r1", "1", "0", "1.0", ["t"], float(BWLOG_MSEC), float(BWLOG_MIN_SAMPLES),
             float(DROP_PCT))' "$REPO/sweep" "$(printf 'write-x\ttswap\twrite\tlibaio\t4194304\t1048576\t8\tblock\toverlap\t1\t2\t1')"
	cat p/result.json
}

@test "result_json: steady and steady_s from fio's steadystate object" {
	local job='{"jobname": "write-x", "error": 0, "job_runtime": 4250, "usr_cpu": 1, "sys_cpu": 1,
		"write": {"io_bytes": 1000, "bw_bytes": 100, "iops": 1, "clat_ns": {"percentile": {}}}}'
	run -0 result_of "$(jq -c '{jobs: [. + {steadystate: {ss: "bw_slope:2.000000%", attained: 1}}]}' <<<"$job")"
	run -0 jq -e '.status == "ok" and .steady == true and .steady_s == 4.25 and .steady_criterion == "bw_slope:2.000000%"' <<<"$output"
	run -0 result_of "$(jq -c '{jobs: [. + {steadystate: {ss: "bw_slope:2.000000%", attained: 0}}]}' <<<"$job")"
	run -0 jq -e '.steady == false and .steady_s == null' <<<"$output"
	run -0 result_of "$(jq -c '{jobs: [.]}' <<<"$job")"
	run -0 jq -e '.steady == null and .steady_s == null and .drops == null' <<<"$output"
}

@test "result_json: a window fio did not find steady is steady within one op when its trend is under one tensor op; a trend of more is not steady" {
	local job='{"jobname": "write-x", "error": 0, "job_runtime": 10000, "usr_cpu": 1, "sys_cpu": 1,
		"write": {"io_bytes": 1000, "bw_bytes": 100, "iops": 1, "clat_ns": {"percentile": {}}}}'
	# ss FIO: one job whose steadystate did not attain, its last window IOPS
	ss() { jq -c --argjson y "$1" '{jobs: [. + {steadystate: {ss: "bw_slope:2.000000%", duration: ($y | length), attained: 0, criterion: "-5.347575%", data: {iops: $y}}}]}' <<<"$job"; }
	# 400 MiB tensors at 2.3 GB/s: 5.6 a second samples as 6,6,6,5,5 (fio 3.33, 2026-11-23)
	run -0 result_of "$(ss '[6,6,6,5,5]')"
	run -0 jq -e '.steady == true and .steady_op_jobs == 1 and .steady_s == 10' <<<"$output"
	run -0 result_of "$(ss '[6,5,6,6,5]')"
	run -0 jq -e '.steady == true and .steady_op_jobs == 1' <<<"$output"
	# a real decline: one op a second
	run -0 result_of "$(ss '[8,7,6,5,4]')"
	run -0 jq -e '.steady == false and .steady_op_jobs == 0 and .steady_s == null' <<<"$output"
	# fio's own 1 MiB units: a ramp of hundreds a second
	run -0 result_of "$(ss '[260,230,545,584,705]')"
	run -0 jq -e '.steady == false' <<<"$output"
	# a window fio reports short of its duration is not judged
	run -0 result_of "$(jq -c '.jobs[0].steadystate.duration = 5' <<<"$(ss '[6,6,5]')")"
	run -0 jq -e '.steady == false' <<<"$output"
	# fio's own verdict: no job judged by the op rule
	run -0 result_of "$(jq -c '{jobs: [. + {steadystate: {ss: "bw_slope:2.000000%", attained: 1}}]}' <<<"$job")"
	run -0 jq -e '.steady == true and .steady_op_jobs == 0' <<<"$output"
}

@test "result_json: a point fio ends on a steady window is judged at that window's mean (bw_mean), not the whole run's" {
	# a write cliff 1 s into the run, 300 then 100 MB/s: fio attained
	# steady state on 5 post-cliff samples (tests/drive-sweep.bats)
	local job='{"jobname": "write-x", "error": 0, "job_runtime": 7060, "usr_cpu": 1, "sys_cpu": 1,
		"write": {"io_bytes": 995983360, "bw_bytes": 141077354, "iops": 66.8, "clat_ns": {"percentile": {}}}}'
	local ss='{ss: "bw_slope:2.000000%", duration: 5, attained: 1,
		data: {bw_mean: 100284171, iops_mean: 47, bw: [100764060, 100663296, 98566144, 100764060, 100663296], iops: [48, 48, 47, 48, 48]}}'
	run -0 result_of "$(jq -c "{jobs: [. + {steadystate: $ss}]}" <<<"$job")"
	run -0 jq -e '.steady == true and .gbs == 0.100284171' <<<"$output"
	# not attained: the whole run
	run -0 result_of "$(jq -c "{jobs: [. + {steadystate: ($ss | .attained = 0 | .data.iops = [70, 60, 50, 48, 48])}]}" <<<"$job")"
	run -0 jq -e '.steady == false and .gbs == 0.141077354' <<<"$output"
	# fixed runtime: the whole run
	run -0 result_of "$(jq -c '{jobs: [.]}' <<<"$job")"
	run -0 jq -e '.steady == null and .gbs == 0.141077354' <<<"$output"
}

@test "sweep: job files get steadystate and a bw log; --fixed-runtime, a short runtime and ranks do not" {
	needs_engine
	printf 'runtime 7\nramp 0\n' >>one.grid
	sweep_ok --grid one.grid --target t.swap --no-ceiling --dry-run
	assert_output --partial $'steadystate=bw_slope:2%\nss_dur=5\nss_ramp=0\nwrite_bw_log=bw\nlog_avg_msec=250'
	sweep_ok --grid one.grid --target t.swap --no-ceiling --dry-run --fixed-runtime
	refute_output --partial steadystate
	assert_output --partial write_bw_log=bw
	# shorter than ramp + 1 + ss_dur + 1 s: fixed runtime (the quick grid)
	sweep_ok --grid one.grid --target t.swap --no-ceiling --dry-run --runtime 6 --ramp 0
	refute_output --partial steadystate
	sweep_ok --grid one.grid --target t.swap --no-ceiling --dry-run --runtime 9 --ramp 2
	assert_output --partial $'ss_ramp=2\n'
	# several handles: fio would end each job on its own
	sweep_ok --grid one.grid --target t.swap --no-ceiling --dry-run --ranks 2
	refute_output --partial steadystate
}

@test "sweep: steady-state fields in results.json with real fio; --fixed-runtime gives steady null" {
	needs_engine
	printf 'runtime 7\nramp 0\n' >>one.grid
	sweep --grid one.grid --target t.swap --out r1 -q
	# on a loaded machine the point may not attain steady state: exit 4
	[ "$status" -eq 0 ] || [ "$status" -eq 4 ] || fail "exit $status: $stderr"
	# steady state ends a job 5 s in at the earliest (ramp 0: samples at
	# 1..5 s); the bw log has 4 samples a second until then
	jq -e 'length == 2 and all(.[]; .status == "ok" and (.steady | type) == "boolean"
		and (if .steady then (.steady_s | type) == "number" and .steady_s >= 4.5 and .steady_s <= 8 else .steady_s == null end)
		and .steady_criterion == "bw_slope:2.000000%" and (.bw_log.samples >= 16))' r1/results.json >/dev/null ||
		fail "steady-state fields: $(jq -c 'map({runkey, status, steady, steady_s, steady_criterion, bw_log})' r1/results.json)"
	run -0 jq -e '.steady_state == "on" and .ss == "bw_slope:2%" and .ss_dur == 5' r1/sweep.json
	run -0 grep -q 'steady state: fio steadystate=bw_slope:2%' r1/report.md
	# a point that did not attain it is flagged and never picked
	if jq -e '.[] | select(.kind == "tswap") | .steady == false' r1/results.json >/dev/null; then
		# (on a loaded machine it may carry other flags too, cv say)
		jq -e 'any(.points[0].flags[]; . == "not steady") and .best.write == null' r1/aggregate.json >/dev/null ||
			fail "not flagged, or picked: $(jq -c '{flags: .points[0].flags, best: .best.write.point}' r1/aggregate.json)"
	fi
	sweep_ok --grid one.grid --target t.swap --out r2 -q --runtime 2 --fixed-runtime --no-ceiling
	run -0 jq -e 'all(.[]; .status == "ok" and .steady == null and .steady_s == null)' r2/results.json
	run -0 jq -e '.steady_state == "off" and .fixed_runtime == true' r2/sweep.json
	run -0 grep -q 'fixed runtime: no steady-state detection (--fixed-runtime)' r2/report.md
}

@test "sweep: a point that drops during the run is warned about and plotted, and still picked" {
	needs_engine
	command -v gnuplot >/dev/null || skip "requires gnuplot"
	printf 'runtime 2\nramp 0\n' >>one.grid
	sweep_ok --grid one.grid --target t.swap --out r -q --no-ceiling
	local d=(r/points/write-*.r1)
	# replace the point's log by a cliff, then let --resume re-judge the run
	bwlog "${d[0]}/bw_bw.1.log" 250 250 1953125 1953125 1953125 1953125 976563 976563 976563 976563
	# its bw_log as the sweep summarises a point's logs (tswap.cli.result)
	jq --argjson b "$(/usr/bin/python3 -I -B -c 'import sys
sys.path.insert(0, sys.argv[1])
from tswap.cli.files import shell_glob
from tswap.executor.local import BWLOG_MSEC, BWLOG_MIN_SAMPLES, DROP_PCT
from tswap.results.bwlog import read_lines, summary_text
lines = read_lines(shell_glob(sys.argv[2] + "/bw_bw.*.log"))
print(summary_text([x for x, _ in lines], float(BWLOG_MSEC), float(BWLOG_MIN_SAMPLES), float(DROP_PCT)))' \
		"$REPO/sweep" "${d[0]}")" \
		'. + {bw_log: $b, drops: $b.drops, drop_pct: $b.drop_pct}' "${d[0]}/result.json" >res.tmp
	mv res.tmp "${d[0]}/result.json"
	sweep_ok --resume r -q
	run -0 jq -e '.points[0] | .drops == true and .trusted == true' r/aggregate.json
	run -0 jq -e '.best.write.point | startswith("write-")' r/aggregate.json
	run -0 grep -q 'drops during the run: its last third averaged 50% below its first' r/report.md
	assert_file_exists "r/plots/bw-$(jq -r '.points[0].point' r/aggregate.json).png"
}

@test "sweep --precondition: the target is written twice before the first write point, once per run" {
	needs_engine
	printf 'runtime 1\nramp 0\n' >>one.grid
	sweep_ok --grid one.grid --target t.swap --out r -q --no-ceiling --precondition
	# fio's own count: two passes over the 32 MiB used
	run -0 jq -e '[.jobs[] | .write.io_bytes] | add == 2 * 33554432' r/precondition/1/fio.json
	run -0 jq -e '.passes == 2 and .bytes == 67108864 and .gbs > 0 and (.targets[0].path | endswith("/t.swap"))' r/precondition.json
	run -0 jq -e '.precondition == "on"' r/sweep.json
	run -0 grep -q 'preconditioned before the first write point: 2 sequential passes of 33554432 bytes' r/report.md
	# --resume with a point to redo does not precondition again
	local before
	before=$(stat -c %Y.%i r/precondition/1/fio.json)
	rm -rf r/points/write-*
	sweep_ok --resume r -q
	[ "$(stat -c %Y.%i r/precondition/1/fio.json)" = "$before" ] || fail "preconditioned again on --resume"
	assert_file_exists r/points/write-libaio-t4m-b1m-q8-block-overlap-p1-d2.r1/result.json
	# a file target is not preconditioned by default
	sweep_ok --grid one.grid --target t2.swap --out r2 -q --no-ceiling
	assert_file_not_exists r2/precondition.json
	run -0 grep -q 'not preconditioned (a file target' r2/report.md
}

@test "sweep: a block device with --destructive is preconditioned by default, --no-precondition skips it" {
	needs_engine
	[ "$(id -u)" -eq 0 ] || skip "requires root (loop devices)"
	loop_setup 64
	printf 'runtime 1\nramp 0\n' >>one.grid
	sweep_ok --grid one.grid --target "$LOOPDEV" --size 32m --destructive --out r -q --no-ceiling
	run -0 jq -e --arg d "$LOOPDEV" '.bytes == 67108864 and .targets[0].path == $d' r/precondition.json
	sweep_ok --grid one.grid --target "$LOOPDEV" --size 32m --destructive --out r2 -q --no-ceiling --no-precondition
	assert_file_not_exists r2/precondition.json
	run -0 grep -q 'not preconditioned (--no-precondition)' r2/report.md
}

@test "sweep: bad uses of the new options: one line, exit 2" {
	local -a bad=(
		"--precondition --no-precondition"
		"--no-precondition --precondition"
		"--precondition --rw read"
		"--fixed-runtime=yes"
		"--precondition --hosts hosts.txt"
		"--resume r --precondition"
		"--resume r --fixed-runtime"
	)
	local b
	for b in "${bad[@]}"; do
		# shellcheck disable=SC2086 # word splitting on purpose
		sweep --grid one.grid --target t.swap --dry-run $b
		[ "$status" -eq 2 ] || fail "$b: exit $status, expected 2: $stderr"
		[ "$(grep -c . <<<"$stderr")" -eq 1 ] || fail "$b: not one line: $stderr"
	done
}
