# report-md.jq - report.md, whole, in one jq run (report.sh write_report;
# the sections are jq/report.jq's defs). Input: aggregate.json. $head:
# sweep.json as the report heads it (budget.sh budget_report_cfg); $meta:
# meta.json, slurped ([] without it); $notes, $dropped (1: the page cache
# was dropped); the lines of "How the points ran" that the shell makes:
# $steady, $budget, $bwlog, $precondition ("" when it has none);
# best-aio.json: $best (slurped) and $aiotext (the file's text): what
# the aio section says of it is made below ($trusted, "false" when no
# libaio point is trustworthy; $n, its length; $why; $aio, its text);
# $thresholds (the PASS/FAIL lines, "" without a threshold); $cvflag;
# $plots (plot.sh plot_links' text, each link ending in a blank line; ""
# without plots).
include "report";
def text: if type == "string" then . else tojson end | sub("\n+$"; "");
. as $agg
| $best[0] as $b
| ($b.trusted | tojson) as $trusted
| ($b | length | tostring) as $n
| (if $b.trusted != false and ($b | length) != 0 then $agg.best.aio_source.why | text
   elif $b.trusted == false then $b.reason | text
   else "" end) as $why
| ($aiotext | sub("\n+$"; "")) as $aio
|
"# tswap sweep report",
"",
report_pick,
($head | report_head([$agg]; $notes; $dropped)),
"## How the points ran",
"",
($steady, $budget, $bwlog, $precondition | select(. != "")),
"",
($meta[0] // empty | meta_report),
report_budget,
"## DeepSpeed aio config (best-aio.json)",
"",
(if $trusted == "false" then "No trustworthy libaio point: no config. \($why).", ""
 elif $n == "0" then "No successful libaio point: no config.", ""
 else "\($why). Paste into the ds_config (see docs/deepspeed.md):", "", "```json\n\($aio)\n```", "", report_other_backend end),
(if $thresholds != "" then "## Thresholds", "", ($thresholds | split("\n") | map("- " + .) | join("\n")), "" else empty end),
"## Warnings",
"",
report_warnings($cvflag),
"",
"## All points",
"",
"Sorted by direction, then GB/s (median, with the min-max over repeats). Flagged points are never picked (docs/sweep.md). CV: coefficient of variation over repeats (! above the point's limit: 5%, or twice the median CV of the run's other points when that is more, at most 20%). % of ceiling: ! more than 10% above it. Latencies are fio completion latencies of whole tensor operations.",
"",
"| point | GB/s | CV % | % of ceiling | op/s | p50 ms | p99 ms | p99.9 ms | io_submit per GB | status |",
"|---|---|---|---|---|---|---|---|---|---|",
report_points,
report_ranks,
"",
"## Plots",
"",
$plots + "Files: summary.csv (one row per point and repeat), results.json, aggregate.json, best-aio.json, points/POINT.rN/ (job.fio, run.sh, fio.json, fio.stderr, stats.json)."
