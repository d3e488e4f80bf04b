# compare-points.jq - compare.md: GB/s per point of this run
# (aggregate.json) against $b (the other run). Used by report.sh
# write_compare.
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
([.points[] | {key: .point, value: .gbs}] | from_entries) as $A
| ([$b[0].points[] | {key: .point, value: .gbs}] | from_entries) as $B
| (($A | keys) + ($B | keys) | unique)[] as $k
| "| \($k) | \($A[$k] | g) | \($B[$k] | g) | \(if $A[$k] and $B[$k] and $B[$k] > 0 then ($A[$k] / $B[$k] * 1000 | round / 1000 | tostring) else "-" end) |"
