# shellcheck shell=bash
# tests/bench/lib/report.bash - tswap-bench's report: results.json from
# runs.jsonl and meta.json (summary.jq: medians, ratios, targets met), the
# table on stdout, its summary lines, and results.md.  Sourced by
# tests/bench/tswap-bench, never run.
#
# Reads: OUT, RUNS_JSONL, SCRIPT_DIR.  Writes: OUT/results.json,
# OUT/results.md.

# summarize: results.json from runs.jsonl and meta.json.
summarize() {
	jq -s --slurpfile meta "$OUT/meta.json" -f "$SCRIPT_DIR/lib/summary.jq" "$RUNS_JSONL" \
		>"$OUT/results.json"
}

# The table, as TSV rows, for the terminal and markdown.
table_tsv() {
	jq -r '
	def f2: if . == null then "-" else (. * 100 | round / 100 | tostring) end;
	def f3: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
	def f0: if . == null then "-" else (. | round | tostring) end;
	def sz: if . == null then "?"
		elif . % 1073741824 == 0 then "\(. / 1073741824)g"
		elif . % 1048576 == 0 then "\(. / 1048576)m"
		elif . % 1024 == 0 then "\(. / 1024)k" else tostring end;
	def geo: "\(.side) \(.bs | sz)x\(.iodepth)";
	def verdict: if (.targets | length) == 0 then "-"
		elif all(.targets[]; .met) then "ok"
		else [.targets[] | select(.met | not) | .name
			| if startswith("GB/s") then "GB/s" elif startswith("CPU") then "CPU"
			  else "x1.5" end] | "MISS " + join(",") end;
	.rows[] | [.target, .row, "\(.a | geo) / \(.b | geo)",
		(.a.gbs | f2), (.b.gbs | f2), (.ratio.gbs | f2),
		(.a.cpu_s_per_gb | f3), (.b.cpu_s_per_gb | f3), (.ratio.cpu_s_per_gb | f2),
		(.a.syscalls_per_gb | f0), (.b.syscalls_per_gb | f0), (.ratio.syscalls_per_gb | f2),
		verdict] | @tsv' "$OUT/results.json"
}

readonly HEADER=(target row "A / B (bs x iodepth)" "GB/s A" "GB/s B" "A/B" "CPU s/GB A" "CPU s/GB B" "A/B"
	"syscalls/GB A" "syscalls/GB B" "A/B" "targets")

print_table() {
	local fmt='%-6s %-31s %-27s %7s %7s %5s %10s %10s %5s %9s %9s %5s %s\n'
	# shellcheck disable=SC2059 # the format is the constant above
	printf "$fmt" "${HEADER[@]}"
	local -a f
	while IFS=$'\t' read -r -a f; do
		# shellcheck disable=SC2059
		printf "$fmt" "${f[@]}"
	done < <(table_tsv)
}

summary_lines() {
	jq -r '
	(if .disk != null then
		"disk: best tswap \(.disk.best_tswap.gbs * 100 | round / 100) GB/s (\(.disk.best_tswap.row)) vs best fio \(.disk.best_fio.gbs * 100 | round / 100) GB/s (\(.disk.best_fio.row)): \(.disk.ratio * 100 | round / 100)x (target >= 0.95: \(if .disk.met then "met" else "MISSED" end))"
	else empty end),
	(if .noise.gbs_spread_median != null then
		"noise: GB/s of one side varies by \(.noise.gbs_spread_median * 100 | round)% (max - min) / median between its runs (median over rows)"
	else empty end),
	(if .noise.other_cpus_median != null then
		"other processes used \(.noise.other_cpus_median * 100 | round / 100) CPUs during the runs (median; \(.noise.other_cpus_max * 100 | round / 100) in the worst row) of \(.meta.cpus)"
	else empty end),
	"targets: \(.summary.met) met, \(.summary.missed | length) missed",
	(.summary.missed[] | "  missed: " + .)' "$OUT/results.json"
}

md_row() { # md_row CELL...: one markdown table row
	local c line='|'
	for c in "$@"; do line+=" $c |"; done
	say "$line"
}

write_markdown() {
	{
		say "# tswap-bench $(jq -r .meta.started "$OUT/results.json")"
		say
		jq -r '.meta | "- host: \(.host), \(.cpus) CPUs; \(.fio); tswap \(.tswap)",
			"- \(.runs) runs per side, alternating A B A B, \(.runtime_s) s each (time based); size \(.size); tswap tensor \(.tensor), tswap iodepth \(.tswap_iodepth)",
			"- syscalls counted with: \(.counter); load average before \(.load_before), after \(.load_after)",
			(.targets | to_entries[] | "- target \(.key): \(.value)")' "$OUT/results.json"
		say
		say "A = tswap (tswap2 = tswap_threads=2), B = fio's engine (tswap1 = tswap_threads=1); medians; CPU = usr+sys of the whole fio process, setup excluded."
		say
		md_row "${HEADER[@]}"
		say "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"
		local -a f
		while IFS=$'\t' read -r -a f; do
			md_row "${f[@]}"
		done < <(table_tsv)
		say
		summary_lines
	} >"$OUT/results.md"
}
