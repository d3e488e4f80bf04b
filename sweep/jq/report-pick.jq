# report-pick.jq - report.md's first lines: the pick best-aio.json comes
# from, its median and min-max interval and its verdict (pick.jq: won by
# N% outside the noise, or tied and the cheapest), then the best read and
# write with theirs, or why a direction has none and what to do; or that
# no point is trustworthy. Input: aggregate.json. Used by report.sh
# write_report (jq -L sweep/jq).
include "pick";
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
def r1: . * 10 | round / 10;
def sz: if . >= 1073741824 and . % 1073741824 == 0 then "\(. / 1073741824)G"
	elif . >= 1048576 and . % 1048576 == 0 then "\(. / 1048576)M"
	elif . >= 1024 and . % 1024 == 0 then "\(. / 1024)K" else tostring end;
def cfgtext: "\(.backend), block \(.block | sz), queue depth \(.qd), \(.submit) submit, \(.window) window, \(.threads) thread(s), tensor \(.tensor | sz)";
def ival: "\(.gbs | g) GB/s (min-max \(.lo | g)-\(.hi | g))";
.best as $b
| if $b.aio_source then
	($b.aio_source | "**Pick** (best-aio.json): \(cfgtext); \(.why): \(ival)", "- verdict: \(.verdict)")
  elif (.trust.trusted // 0) == 0 and (.trust.flagged // 0) > 0 then
	"**No trustworthy pick**: every point with a result is flagged (Warnings: above the ceiling, failed, CV or not steady); best-aio.json has no aio block and the sweep exits 4. Rerun on an idle machine, with more repeats (--repeat) or a longer runtime."
  elif (.trust.libaio_with_result // 0) > 0 then
	"**No trustworthy libaio pick**: every libaio point with a result is flagged (Warnings); best-aio.json has no aio block and the sweep exits 4."
  else "**No pick**: no libaio point with a result, so no DeepSpeed aio config." end,
# a budget run whose final round ran shorter than fio's steady-state
# window (budget.sh budget_plan): its pick ranks the first seconds
(.budget // null | select(. != null and .steady_window_s != null and (.rounds[-1].runtime // 0) < .steady_window_s)
 | "- caution: the budget's final round ran \(.rounds[-1].runtime) s per run, fixed: shorter than fio's steady-state window (\(.steady_window_s) s), so the pick ranks each point's first seconds (such as a write cache's burst) and no point could be flagged not steady\(if .steady_budget_s then "; --budget \(.steady_budget_s) gives the final round the window" else "" end)"),
(. as $agg | "read", "write" | . as $d
 | if $b[$d] then "- best \($d): \($b[$d] | ival): \($b[$d].verdict)"
   else ($agg | none_why($d) | select(. != null) | "- best \($d): none: \(.)") end),
""
