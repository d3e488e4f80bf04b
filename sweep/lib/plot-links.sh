# shellcheck shell=bash
# plot-links.sh - the reports' links to the plots (report.sh write_report,
# fleet-report.sh write_fleet_report). The plots themselves: python3 -m
# tswap plots (tswap.report.plots), from pipeline.sh finish_run.
#
# Owns: plot_links, png_link. Reads: RUN/plots/*.png.

# plot_links: a Markdown image line for every PNG in RUN/plots, the
# latency ones first and a line on how to read them (the reports' Plots
# section).
plot_links() {
	local png lat=0
	for png in "$RUN"/plots/latency-*.png; do
		[ -f "$png" ] || continue
		png_link "$png"
		lat=1
	done
	[ "$lat" = 0 ] || printf 'latency-DIR: p99 completion latency (median over repeats) against GB/s per point; the line joins the Pareto front, the trusted points no other trusted point beats on both; hollow: flagged; circled: the best DIR point.\n\n'
	for png in "$RUN"/plots/*.png; do
		[ -f "$png" ] || continue
		[[ ${png##*/} != latency-* ]] || continue
		png_link "$png"
	done
}

# png_link PNG: its Markdown image line.
png_link() {
	local png=${1##*/}
	printf '![%s](plots/%s)\n\n' "${png%.png}" "$png"
}
