# shellcheck shell=bash
# report.sh - the run's verdict and report.md, the comparison with another
# run, and the summary on stdout (one host).
#
# Owns: thresholds, write_report (jq/report-md.jq, the sections in
# jq/report.jq, best-aio.json's section too), write_compare
# (jq/compare-*.jq), print_summary (jq/summary.jq), run_verdict (exit 3,
# 4). Reads: RUN/sweep.json, aggregate.json, best-aio.json, notes.txt,
# plots/, MIN_READ, MIN_WRITE.
# Writes: RUN/report.md, compare.md.
# shellcheck disable=SC2016 # `...` is markdown

# thresholds: a line per --min-*-gbs given, "PASS: ..." or "FAIL: ...",
# from aggregate.json's best points.
thresholds() {
	local rw min best ok
	for rw in read write; do
		if [ "$rw" = read ]; then min=$MIN_READ; else min=$MIN_WRITE; fi
		[ -n "$min" ] || continue
		best=$(jq -r --arg rw "$rw" '.best[$rw].gbs // "none"' "$RUN/aggregate.json")
		ok=false
		[ "$best" = none ] || ok=$(jq -n --argjson b "$best" --argjson m "$min" '$b >= $m')
		if [ "$ok" = true ]; then
			printf 'PASS: best %s %.3f GB/s >= %s GB/s\n' "$rw" "$best" "$min"
		else
			printf 'FAIL: best %s %s GB/s < %s GB/s\n' "$rw" "${best/#none/(no successful point)}" "$min"
		fi
	done
}

write_report() {
	local cfg="$RUN/sweep.json" notes='' l dropped=0 head steady budget bwlog pre meta=/dev/null
	if [ -f "$RUN/notes.txt" ]; then notes=$(sort -u "$RUN/notes.txt"); fi
	[ -f "$RUN/cache-dropped" ] && dropped=1
	[ ! -f "$RUN/meta.json" ] || meta="$RUN/meta.json"
	head=$(budget_report_cfg "$cfg")
	l=$(thresholds)
	steady=$(steady_line)
	budget=$(budget_line)
	bwlog=$(bwlog_line)
	pre=$(precondition_line)
	# the plot links as a file: one per PNG, more than an argument holds
	# (128 KiB) on a large grid with many bandwidth plots
	plot_links >"$RUN/plots.md.tmp"
	jq -r -L "$JQ_DIR" --argjson head "$head" --slurpfile meta "$meta" --arg notes "$notes" --argjson dropped "$dropped" \
		--arg steady "$steady" --arg budget "$budget" --arg bwlog "$bwlog" --arg precondition "$pre" \
		--slurpfile best "$RUN/best-aio.json" --rawfile aiotext "$RUN/best-aio.json" --arg thresholds "$l" \
		--argjson cvflag "$CV_FLAG" --rawfile plots "$RUN/plots.md.tmp" -f "$JQ_DIR/report-md.jq" "$RUN/aggregate.json" >"$RUN/report.md.tmp"
	rm -f -- "$RUN/plots.md.tmp"
	mv -f "$RUN/report.md.tmp" "$RUN/report.md"
}

write_compare() {
	local other=$1
	[ -f "$other/aggregate.json" ] || die "$EXIT_USAGE" "--compare: $other has no aggregate.json (not a finished tswap-sweep run)"
	{
		printf '# tswap sweep comparison\n\n'
		printf -- '- A (this run): `%s`\n- B: `%s`\n\n' "$RUN" "$other"
		printf 'GB/s medians per point; ratio = A / B (above 1: A is faster). Points present in one run only are listed with "-".\n\n'
		printf '| point | A GB/s | B GB/s | A / B |\n|---|---|---|---|\n'
		jq -r --slurpfile b "$other/aggregate.json" -f "$JQ_DIR/compare-points.jq" \
			"$RUN/aggregate.json"
		printf '\n| ceiling | A GB/s | B GB/s |\n|---|---|---|\n'
		jq -r --slurpfile b "$other/aggregate.json" -f "$JQ_DIR/compare-ceiling.jq" \
			"$RUN/aggregate.json"
	} >"$RUN/compare.md.tmp"
	mv -f "$RUN/compare.md.tmp" "$RUN/compare.md"
	cat "$RUN/compare.md"
}

# print_summary: the best points, the ceiling and the output files, on stdout.
print_summary() {
	say ""
	jq -r -L "$JQ_DIR" --arg run "$RUN" --slurpfile aio "$RUN/best-aio.json" \
		-f "$JQ_DIR/summary.jq" "$RUN/aggregate.json"
}

# run_verdict: "FAILED UNTRUSTED": the runs that failed (results.json), and
# true when the run has results but no trustworthy pick: every point with
# a result is flagged, or every libaio one (best-aio.json without an aio
# block); the entry point exits EXIT_UNTRUSTED then. jq's status: not 0
# when a file cannot be read.
run_verdict() {
	jq -r -s '"\([.[0][] | select(.status != "ok")] | length) \((.[1].trust as $t | ($t.trusted == 0 and $t.flagged > 0)) or (.[2].trusted == false))"' \
		"$RUN/results.json" "$RUN/aggregate.json" "$RUN/best-aio.json"
}
