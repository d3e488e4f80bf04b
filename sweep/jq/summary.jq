# summary.jq - The summary on stdout: best read, best write, ceiling
# (aggregate.json). Used by report.sh print_summary.
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
"best read:  \(.best.read.gbs | g) GB/s\(if .best.read then " (\(.best.read.point))" else "" end)",
"best write: \(.best.write.gbs | g) GB/s\(if .best.write then " (\(.best.write.point))" else "" end)",
(.best.aio_source | select(. != null) | "pick:       \(.point) (best-aio.json): \(.confidence)"),
(if .best.aio_source == null and (.trust.flagged // 0) > 0 then "pick:       none: every point with a result is flagged (report.md, Warnings)" else empty end),
"ceiling:    " + (if .ceiling == {} then "not measured" else "read \(.ceiling.read | g) GB/s, write \(.ceiling.write | g) GB/s" end)
