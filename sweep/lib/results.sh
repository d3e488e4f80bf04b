# shellcheck shell=bash
# results.sh - a fleet point's result.json, and the plan's points as JSON
# (the run's outputs from the results: tswap.cli.finish, pipeline.sh
# finish_run). A point on this host writes its own (tswap.executor.local
# run_point: tswap.cli.result write_result in-process).
#
# Owns: result_json (tswap.results.result), plan_json (tswap.plan.points).
# Reads: POINTDIR/fio.stdout, stats.json, bw_bw.*.log; PLAN_TEXT,
# BWLOG_MSEC, BWLOG_MIN_SAMPLES, DROP_PCT.
# Writes: POINTDIR/fio.json, result.json, progress.txt.

# result_json DIR RUNKEY REPEAT FIO_RC WALL PLANLINE: DIR/result.json and
# DIR/progress.txt (its progress line: "GB/s<TAB>op/s  p99 ms", or
# "ERROR: text") from what fio and the engine left in DIR (fio.stdout,
# fio.stderr, stats.json or the ranks' stats.job*.json, bw_bw.*.log); fio's
# JSON becomes DIR/fio.json (tswap.results.result; python3 -m tswap result
# --help says which file is read how).
result_json() {
	local targets
	targets=$(targets_json)
	py result "$1" --runkey "$2" --repeat "$3" --rc "$4" --wall "$5" --line "$6" --targets "$targets" \
		--bwlog-ms "$BWLOG_MSEC" --bwlog-min "$BWLOG_MIN_SAMPLES" --drop-pct "$DROP_PCT"
}

# plan_json: the points of PLAN_TEXT as a JSON array (tswap.plan.points).
plan_json() {
	py plan <<<"$PLAN_TEXT"
}
