# shellcheck shell=bash
# bwlog.sh - bandwidth over time: fio's own bandwidth log per point, the
# "drops during the run" check.
#
# Each point's job has write_bw_log=bw and log_avg_msec=BWLOG_MSEC: fio
# writes POINTDIR/bw_bw.N.log for its job N, one line per BWLOG_MSEC of the
# measured runtime (after ramp_time): "msec, KiB/s, direction, bs, offset"
# (fio HOWTO "Log File Formats"; the value is the mean over the interval).
# A point of several handles has one log per handle; their bandwidths are
# summed per interval.
#
# A run whose last third (by time) averages more than DROP_PCT % below its
# first third "drops during the run" (an SLC-cache cliff, thermal
# throttling): a warning in the report and results, not a reason to distrust
# the point (tswap.stats.pick flags are the blockers).
#
# Owns: bwlog_line, bwlog_series, bwlog_summary (the job's options:
# tswap.plan.jobs bwlog_options; the plots: python3 -m tswap plots,
# tswap.report.plots bw_plot).
# Reads: BWLOG_MSEC, DROP_PCT, BWLOG_MIN_SAMPLES, DIR/bw_bw.*.log.

# bwlog_line: the report's line on the bandwidth logs.
bwlog_line() {
	printf -- '- bandwidth over time: fio write_bw_log with log_avg_msec=%s (points/POINT.rN/bw_bw.N.log); a run whose last third averages more than %s%% below its first third "drops during the run" (Warnings, plots/bw-POINT.png): a warning, not a reason to distrust the point\n' \
		"$BWLOG_MSEC" "$DROP_PCT"
}

# bwlog_series DIR: "SECONDS GB/s" lines of DIR's bandwidth logs, summed
# over the jobs per BWLOG_MSEC interval, in time order; nothing without logs.
bwlog_series() {
	bwlog_py series "$1"
}

# bwlog_summary DIR: JSON of DIR's bandwidth over time: {samples,
# first_third_gbs, last_third_gbs, drop_pct (% of the first third's mean
# lost by the last third's; negative: faster at the end), drops (drop_pct
# above DROP_PCT)}; null without a log or with fewer than
# BWLOG_MIN_SAMPLES samples. result_json computes the same summary into
# result.json's bw_log (tswap.results.bwlog); this is the one for a
# directory of logs alone (tests/sweep-steady.bats).
bwlog_summary() {
	bwlog_py summary "$1"
}

# bwlog_py MODE DIR...: python3 -m tswap bwlog over the DIRs' logs
# (tswap.results.bwlog; bwlog_summary also runs with only state.sh and
# bwlog.sh loaded: the package is found next to this module).
bwlog_py() {
	local -a lim=(--ms "$BWLOG_MSEC" --min "$BWLOG_MIN_SAMPLES" --lim "$DROP_PCT")
	if declare -F py >/dev/null; then
		py bwlog "$@" "${lim[@]}"
	else
		# shellcheck source=sweep/lib/util.sh
		. "${BASH_SOURCE[0]%/*}/util.sh"
		SWEEP_HOME=${BASH_SOURCE[0]%/*}/.. py bwlog "$@" "${lim[@]}"
	fi
}
