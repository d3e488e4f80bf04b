#!/usr/bin/env bats
# tests/sweep-lib.bats - the sweep's pure functions, with the modules of
# sweep/lib/ sourced directly (no fio, no target, no run directory): fio
# size notation, grid files and their expansion into plan lines, the
# ceiling lines, one run's result.json (tswap.results.result), and the
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
# shellcheck source=../sweep/lib/paths.sh
. "$SWEEP_HOME/lib/paths.sh"
# shellcheck source=../sweep/lib/grid.sh
. "$SWEEP_HOME/lib/grid.sh"
# shellcheck source=../sweep/lib/results.sh
. "$SWEEP_HOME/lib/results.sh"
# shellcheck source=../sweep/lib/ranks.sh
. "$SWEEP_HOME/lib/ranks.sh"
# shellcheck source=../sweep/lib/bwlog.sh
. "$SWEEP_HOME/lib/bwlog.sh"

setup() {
	TMP=$BATS_TEST_TMPDIR
}

# grid_from LINES...: a grid file of LINES, loaded (load_grid).
grid_from() {
	printf '%s\n' "$@" >"$TMP/t.grid"
	load_grid "$TMP/t.grid"
}

@test "size_to_bytes: fio notation, binary units, case and an optional iB/B suffix" {
	assert_equal "$(size_to_bytes 4096)" 4096
	assert_equal "$(size_to_bytes 4k)" 4096
	assert_equal "$(size_to_bytes 1M)" 1048576
	assert_equal "$(size_to_bytes 1MiB)" 1048576
	assert_equal "$(size_to_bytes 2gb)" 2147483648
	assert_equal "$(size_to_bytes 1t)" 1099511627776
	assert_equal "$(size_to_bytes 010m)" 10485760 # not octal
	local bad
	for bad in '' 1.5m -1m 1x m 1m2 '1 m' '$(id)'; do
		run size_to_bytes "$bad"
		assert_failure 1
		assert_output ''
	done
}

@test "bytes_to_size and szname: the shortest exact notation" {
	assert_equal "$(bytes_to_size 1048576)" 1m
	assert_equal "$(bytes_to_size 1073741824)" 1g
	assert_equal "$(bytes_to_size 3221225472)" 3g
	assert_equal "$(bytes_to_size 1572864)" 1536k
	assert_equal "$(bytes_to_size 4097)" 4097
	assert_equal "$(bytes_to_size 512)" 512
	local v
	szname v 67108864
	assert_equal "$v" 64m
	# round trip
	for v in 4k 1m 400m 1g 1536k 12345; do
		assert_equal "$(bytes_to_size "$(size_to_bytes "$v")")" "$v"
	done
}

@test "split_list: commas and blanks separate, empty items dropped" {
	run -0 split_list 'read, write,,io_uring  libaio'
	assert_equal "${lines[*]}" 'read write io_uring libaio'
	run -0 split_list ''
	assert_output ''
}

@test "load_grid: values, DeepSpeed's defaults for keys left out, scalar keys" {
	grid_from '# a comment' 'rw read  # trailing comment' 'qd 8 32' 'runtime 3' 'ceiling off' 'description two  words'
	assert_equal "$G_NAME" t
	assert_equal "${G_RW[*]}" read
	assert_equal "${G_QD[*]}" '8 32'
	assert_equal "$G_RUNTIME" 3
	assert_equal "$G_CEILING" off
	assert_equal "$G_DESC" 'two words'
	# the keys left out: ds_config aio defaults
	assert_equal "${G_BACKEND[*]} ${G_TENSOR[*]} ${G_IODEPTH[*]} ${G_BLOCK[*]}" 'libaio 64m 1 1m'
	assert_equal "${G_WINDOW[*]} ${G_SUBMIT[*]} ${G_THREADS[*]}" 'overlap block 1'
}

@test "load_grid: a bad line exits 2 naming FILE:LINE and the rule" {
	run grid_from 'rw read' 'window sideways'
	assert_failure 2
	assert_output "tswap-sweep: $TMP/t.grid:2: window must be sequential or overlap, not 'sideways'"
	run grid_from 'block 0'
	assert_failure 2
	assert_output --partial 't.grid:1: block: must not be 0'
	run grid_from 'threads 2 x'
	assert_failure 2
	assert_output --partial "threads: not a positive integer: 'x'"
	run grid_from 'speed 11'
	assert_failure 2
	assert_output --partial "unknown grid key 'speed'"
	run grid_from 'runtime 0'
	assert_failure 2
	assert_output --partial 'runtime must be at least 1'
}

@test "load_grid: CRLF lines are read without the \\r; a repeated key, a number past 9 digits and the engine's limits exit 2 (issue 11 item 13)" {
	printf 'rw read\r\ntensor 16m\r\nqd 8 16\r\n' >"$TMP/crlf.grid"
	load_grid "$TMP/crlf.grid"
	assert_equal "${G_TENSOR[*]}" 16m
	assert_equal "${G_QD[*]}" '8 16'
	run grid_from 'qd 8' 'rw read' 'qd 16'
	assert_failure 2
	assert_output --partial "t.grid:3: 'qd' repeated (first on line 1)"
	run grid_from 'qd 99999999999999999999'
	assert_failure 2
	assert_output --partial "(1 to 9 digits)"
	run grid_from 'threads 2048'
	assert_failure 2
	assert_output --partial 'threads: 2048 is above 1024'
	grid_from 'threads 1024' 'backend io_uring' 'qd 32768'
	check_engine_limits
	grid_from 'backend io_uring' 'qd 32769'
	run check_engine_limits
	assert_failure 2
	assert_output --partial 'qd 32769 is above 32768'
	grid_from 'backend libaio' "qd $(($(cat /proc/sys/fs/aio-max-nr) + 1))"
	run check_engine_limits
	assert_failure 2
	assert_output --partial 'fs.aio-max-nr'
}

@test "is_uint and size_to_bytes: numbers that would wrap bash arithmetic are refused" {
	is_uint 999999999
	is_uint 000000000001
	run is_uint 1000000000
	assert_failure
	run size_to_bytes 99999999999999999999
	assert_failure
	run size_to_bytes 8388608t
	assert_failure
	assert_equal "$(size_to_bytes 4194303t)" $((4194303 << 40))
}

@test "expand_grid: the cartesian product as plan lines, sizes in bytes, keys unique" {
	grid_from 'rw read write' 'tensor 4m' 'block 1m 512k' 'qd 8 16' 'window overlap' 'submit block single' 'threads 1'
	run -0 expand_grid
	assert_equal "${#lines[@]}" 16 # 2 rw x 2 block x 2 qd x 2 submit
	assert_equal "${lines[0]}" "$(printf '%s\t' read-libaio-t4m-b1m-q8-block-overlap-p1-d1 tswap read libaio 4194304 1048576 8 block overlap 1)1"
	assert_equal "$(printf '%s\n' "${lines[@]}" | cut -f1 | sort -u | wc -l)" 16
	assert_equal "$(printf '%s\n' "${lines[@]}" | awk -F '\t' 'NF != 11' | wc -l)" 0
}

@test "expand_grid: tensors that do not split into 4096-aligned parts per thread, and unaligned blocks, are left out with a note" {
	grid_from 'rw read' 'tensor 4m' 'threads 1 3' 'block 1m 6000' 'qd 4'
	run --separate-stderr -0 expand_grid
	# threads 3 does not divide 4m; block 6000 is not a multiple of 4096
	assert_equal "${#lines[@]}" 1
	assert_equal "$(cut -f1 <<<"$output")" read-libaio-t4m-b1m-q4-block-overlap-p1-d1
	# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
	assert_equal "$stderr" 'tswap-sweep: left out 3 point(s) whose tensor size is not divisible into 4096-aligned parts per thread, or whose block size is not a multiple of 4096'
}

@test "add_ceilings: one fio libaio line before each direction's first point; plan_writes" {
	grid_from 'rw read write' 'qd 8 16'
	PLAN_TEXT=$(add_ceilings "$(expand_grid)")
	run -0 cut -f1,2,4,5,7 <<<"$PLAN_TEXT"
	assert_equal "${#lines[@]}" 6
	assert_equal "${lines[0]}" "$(printf 'ceiling-read-fio-libaio-bs1m-qd64\tceiling\tfio-libaio\t1048576\t64')"
	assert_equal "${lines[3]}" "$(printf 'ceiling-write-fio-libaio-bs1m-qd64\tceiling\tfio-libaio\t1048576\t64')"
	assert_equal "$(plan_writes)" 1
	PLAN_TEXT=$(grep -v write <<<"$PLAN_TEXT")
	assert_equal "$(plan_writes)" 0
}

@test "ceiling_jobs: as many fio jobs as the most parallel single-handle point has threads; its ceiling splits the queue over them, each on its own slice" {
	grid_from 'rw read write' 'tensor 16m' 'block 1m' 'qd 8' 'threads 1 4'
	run -0 ceiling_jobs "$(expand_grid)"
	assert_output 4
	# 1 thread: one job, the plan line and key as before
	grid_from 'rw read' 'tensor 16m' 'qd 8' 'threads 1'
	run -0 ceiling_jobs "$(expand_grid)"
	assert_output 1
	# never more jobs than blocks in flight
	grid_from 'rw read' 'tensor 16m' 'qd 8' 'threads 8'
	CEILING_QD=4
	run -0 ceiling_jobs "$(expand_grid)"
	assert_output 4
	grid_from 'rw read write' 'tensor 16m' 'block 1m' 'qd 8' 'threads 1 4'
	PLAN_TEXT=$(CEILING_QD=64 CEILING_JOBS=4 add_ceilings "$(expand_grid)")
	# per direction the one-job ceiling and the 4-job one (the faster is
	# the ceiling: aggregate.jq)
	run -0 cut -f1,2,7,10,11 <<<"$(grep ceiling <<<"$PLAN_TEXT")"
	assert_equal "${#lines[@]}" 4
	assert_line --index 0 "$(printf 'ceiling-read-fio-libaio-bs1m-qd64\tceiling\t64\t0\t64')"
	assert_line --index 1 "$(printf 'ceiling-read-fio-libaio-bs1m-qd64-j4\tceiling\t64\t4\t64')"
	assert_line --index 3 "$(printf 'ceiling-write-fio-libaio-bs1m-qd64-j4\tceiling\t64\t4\t64')"
	# the job: 4 jobs of iodepth 16, each on a quarter of the sweep's size
	# shellcheck source=../sweep/lib/jobs.sh
	. "$SWEEP_HOME/lib/jobs.sh"
	# shellcheck source=../sweep/lib/steady.sh
	. "$SWEEP_HOME/lib/steady.sh"
	# shellcheck source=../sweep/lib/bwlog.sh
	. "$SWEEP_HOME/lib/bwlog.sh"
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

@test "ceiling_depth: as many 1m blocks as the deepest point keeps in flight, at least 64, capped by fs.aio-max-nr over the jobs" {
	# quick-like: 16m tensors, 2 queued: 32 MiB in flight -> the minimum, 64
	grid_from 'rw read' 'tensor 16m' 'iodepth 2' 'block 1m 4m' 'qd 8 32'
	run -0 ceiling_depth "$(expand_grid)"
	assert_output 64
	# deepspeed: 400m tensors, 8 threads x 128 x 8m caps at the tensor: 400
	grid_from 'rw read write' 'tensor 400m' 'iodepth 1' 'block 1m 8m' 'qd 32 128' 'threads 1 8'
	run -0 ceiling_depth "$(expand_grid)"
	assert_output 400
	# ops queued do not add (a worker runs one operation at a time): 64 x
	# 2m queued is 2 MiB in flight; 4 threads x 64 x 1m of a 512m tensor, 256
	grid_from 'rw read' 'tensor 2m' 'iodepth 64' 'block 1m' 'qd 2'
	run -0 ceiling_depth "$(expand_grid)"
	assert_output 64
	grid_from 'rw read' 'tensor 512m' 'iodepth 4' 'block 1m' 'qd 64' 'threads 4'
	run -0 ceiling_depth "$(expand_grid)"
	assert_output 256
	PLAN_TEXT=$(CEILING_QD=256 add_ceilings "$(expand_grid)")
	assert_equal "$(head -n 1 <<<"$PLAN_TEXT" | cut -f1,5,7)" "$(printf 'ceiling-read-fio-libaio-bs1m-qd256\t1048576\t256')"
	# above what fs.aio-max-nr gives 2 ranks x 2 jobs: capped, said once
	local aiomax
	read -r aiomax </proc/sys/fs/aio-max-nr
	grid_from 'rw readwrite' 'ranks 2' 'tensor 64g' 'iodepth 1' 'block 64m' 'qd 64' 'threads 64'
	run --separate-stderr -0 ceiling_depth "$(expand_grid)"
	local want=$((aiomax / 4))
	((want < 4096)) || want=4096
	assert_output "$want"
	[[ $stderr == *"device ceiling: the deepest point keeps 64g in flight"*"iodepth $want"* ]] || fail "no cap note: $stderr"
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
