# summary.jq - The summary on stdout: best read, best write (or why none),
# the pick and its verdict, ceiling (aggregate.json), then the output files
# of run directory $run and best-aio.json's aio block ($aio: the file,
# slurped). Used by report.sh print_summary (jq -L sweep/jq).
include "pick";
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
(. as $a | "read", "write" | . as $d
 | "best \($d):\(if $d == "read" then "  " else " " end)"
   + if $a.best[$d] then "\($a.best[$d].gbs | g) GB/s (\($a.best[$d].point))"
     else "\($a | none_why($d) // "-" | if . == "-" then . else "none: \(.)" end)" end),
(.best.aio_source | select(. != null) | "pick:       \(.point) (best-aio.json): \(.verdict)"),
(if .best.aio_source == null and (.trust.flagged // 0) > 0 then "pick:       none: every point with a result is flagged (report.md, Warnings)" else empty end),
"ceiling:    " + (if .ceiling == {} then "not measured" else "read \(.ceiling.read | g) GB/s, write \(.ceiling.write | g) GB/s" end),
"report:     \($run)/report.md",
"csv:        \($run)/summary.csv",
"best-aio:   \($run)/best-aio.json \($aio[0].aio // "no trustworthy point: no aio block" | tojson)"
