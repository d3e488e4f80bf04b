# shellcheck shell=bash
# report.sh - the run's verdict and report.md, the comparison with another
# run, and the summary on stdout (one host): thin callers of the Python
# package's report layer (tswap/report).
#
# Owns: thresholds, write_report, write_compare, print_summary,
# run_verdict (exit 3, 4). Reads: RUN/sweep.json, aggregate.json,
# best-aio.json, budget.json, notes.txt, cache-dropped, meta.json, plots/,
# MIN_READ, MIN_WRITE, BUDGET, CV_FLAG.
# Writes: RUN/report.md, compare.md.

# thresholds: a line per --min-*-gbs given, "PASS: ..." or "FAIL: ...",
# from aggregate.json's best points (tswap.report.verdict.thresholds).
thresholds() {
	py thresholds "$RUN/aggregate.json" --min-read "$MIN_READ" --min-write "$MIN_WRITE"
}

# write_report: RUN/report.md (tswap.report.md) with the lines on how the
# points ran that other modules make (steady.sh, bwlog.sh,
# precondition.sh) and the plot links (plot.sh).
write_report() {
	local budget=() steady bwlog pre
	[ -z "$BUDGET" ] || budget=(--budget)
	steady=$(steady_line)
	bwlog=$(bwlog_line)
	pre=$(precondition_line)
	# the plot links as a file: one per PNG, more than an argument holds
	# (128 KiB) on a large grid with many bandwidth plots
	plot_links >"$RUN/plots.md.tmp"
	py report "$RUN" --cvflag "$CV_FLAG" --min-read "$MIN_READ" --min-write "$MIN_WRITE" "${budget[@]}" \
		--steady="$steady" --bwlog="$bwlog" --precondition="$pre" --plots "$RUN/plots.md.tmp" >"$RUN/report.md.tmp"
	rm -f -- "$RUN/plots.md.tmp"
	mv -f "$RUN/report.md.tmp" "$RUN/report.md"
}

write_compare() {
	local other=$1
	[ -f "$other/aggregate.json" ] || die "$EXIT_USAGE" "--compare: $other has no aggregate.json (not a finished tswap-sweep run)"
	py compare "$RUN" "$other" >"$RUN/compare.md.tmp"
	mv -f "$RUN/compare.md.tmp" "$RUN/compare.md"
	cat "$RUN/compare.md"
}

# print_summary: the best points, the ceiling and the output files, on stdout.
print_summary() {
	say ""
	py summary "$RUN"
}

# run_verdict: "FAILED UNTRUSTED": the runs that failed (results.json), and
# true when the run has results but no trustworthy pick
# (tswap.report.verdict.run_verdict); the entry point exits EXIT_UNTRUSTED
# then. Not 0 when a file cannot be read.
run_verdict() {
	py verdict "$RUN"
}
