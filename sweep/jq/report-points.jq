# report-points.jq - report.md's table of all points from aggregate.json.
# Used by report.sh write_report.
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
def p1: if . == null then "-" else (. * 10 | round / 10 | tostring) end;
def ms: if . == null then "-" else (. / 1000 * 100 | round / 100 | tostring) end;
.points | sort_by([.rw, -(.gbs // -1)])[]
| "| \(.point) | \(.gbs | g)\(if (.ok_runs // 0) > 1 then " (\(.lo | g)-\(.hi | g))" else "" end) | \(if .cv == null then "-" else (.cv * 100 | p1) + (if .cv_flag then " !" else "" end) end) | \(.pct_ceiling | p1)\(if .above_ceiling then " !" else "" end) | \(.ops_per_s | p1) | \(.clat_p50_us | ms) | \(.clat_p99_us | ms) | \(.clat_p999_us | ms) | \(.submit_per_gb | p1) | \(.status)\(if (.flags // []) != [] and .gbs != null then ", flagged: \(.flags | join(", "))" else "" end) |"
