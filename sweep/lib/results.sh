# shellcheck shell=bash
# results.sh - results: one run's result.json, the aggregation over
# repeats, the ceiling and the best pick, summary.csv and best-aio.json.
#
# Owns: result_json (tswap.results.result), collect, aggregate_json (medians, CV,
# % of ceiling, cache and CV flags, the best read/write/combined points and
# the libaio point best-aio.json comes from: tswap.stats.aggregate), plan_json
# (tswap.plan.points), write_csv (tswap.report.csv; a fleet's: its jq),
# write_best_aio (tswap.report.best_aio, DeepSpeed's aio keys; a
# checkpoint run's best-checkpoint.json: tswap.plan.checkpoint). Reads:
# POINTDIR/fio.stdout, stats.json, bw_bw.*.log; RUN/points/*/result.json, RUN/plan.json,
# CV_FLAG, CACHE_FACTOR, BWLOG_MSEC, BWLOG_MIN_SAMPLES, DROP_PCT.
# Writes: POINTDIR/fio.json, result.json, progress.txt; RUN/results.json,
# aggregate.json, summary.csv, best-aio.json.

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

# collect [DEPTH SORT]: RUN/results.json, every result.json DEPTH levels
# below RUN/points (2: KEY.rN/; a fleet's 3: KEY.rN/HOST/) sorted by SORT
# (a jq path), then (one host) aggregate.json.
collect() {
	local depth=${1:-2} all
	# points x hosts files: too many for one command line on a big grid
	all=$(find "$RUN/points" -mindepth "$depth" -maxdepth "$depth" -name result.json ! -path '*/.tmp-*' -exec cat -- {} + 2>/dev/null)
	jq -s "sort_by(${2:-.runkey})" <<<"$all" >"$RUN/results.json.tmp"
	mv -f "$RUN/results.json.tmp" "$RUN/results.json"
	[ "$depth" = 3 ] && return 0
	# aggregate.json carries the run's meta too, so one file says what
	# was measured and how fast
	aggregate_json "$RUN/results.json" per-run "$RUN/plan.json" "$RUN/meta.json" >"$RUN/aggregate.json.tmp"
	mv -f "$RUN/aggregate.json.tmp" "$RUN/aggregate.json"
}

# aggregate_json RESULTS [per-run|across-hosts [PLAN.JSON [META.JSON [ARGS...]]]]:
# per-point medians over the runs in RESULTS (a JSON array of result.json
# objects), CV, ceiling, flags, picks; on stdout, with META.JSON as .meta
# when that file exists. across-hosts (the fleet-wide aggregate): the CV is
# between hosts, so it does not flag a point. ARGS: more options of the
# aggregate stage (--link-meta FILE: a fleet's hosts' links).
aggregate_json() {
	local plan=- meta='' text=''
	local -a across=()
	[ "${2:-}" != across-hosts ] || across=(--across-hosts)
	if [ -n "${3:-}" ]; then plan=$3; else text=$(plan_json ""); fi
	[ -z "${4:-}" ] || [ ! -f "$4" ] || meta=$4
	py aggregate "$1" "$plan" ${meta:+"$meta"} --cvflag "$CV_FLAG" --cvrel "$CV_REL" --cvmax "$CV_MAX" \
		--cache "$CACHE_FACTOR" --costtol "$COST_TOL" "${across[@]}" "${@:5}" <<<"$text"
}

# plan_json [PLAN.JSON]: the points of a run's plan.json (pipeline.sh) as a
# JSON array; without it, those of PLAN_TEXT (tswap.plan.points).
plan_json() {
	if [ -n "${1:-}" ]; then
		jq .points "$1"
	else
		py plan <<<"$PLAN_TEXT"
	fi
}

# write_csv: one host's summary.csv (tswap.report.csv; a fleet's:
# fleet-report.sh write_csv_fleet).
write_csv() {
	py summary-csv "$RUN/results.json" "$RUN/aggregate.json" >"$RUN/summary.csv.tmp"
	mv -f "$RUN/summary.csv.tmp" "$RUN/summary.csv"
}

# write_best_aio: best-aio.json, with the aio keys DeepSpeed DS_VERSION
# reads (the newest releases' when empty; tswap.report.best_aio).
write_best_aio() {
	py best-aio "$RUN/aggregate.json" --ds-version "$DS_VERSION" >"$RUN/best-aio.json.tmp"
	mv -f "$RUN/best-aio.json.tmp" "$RUN/best-aio.json"
	# a checkpoint run (--workload checkpoint): best-checkpoint.json too
	[[ $'\n'$PLAN_TEXT == *$'\tcheckpoint\t'* ]] || return 0
	py best-checkpoint "$RUN/aggregate.json" --ds-version "$DS_VERSION" >"$RUN/best-checkpoint.json.tmp"
	mv -f "$RUN/best-checkpoint.json.tmp" "$RUN/best-checkpoint.json"
}
