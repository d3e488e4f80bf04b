# plot-latency.jq - Latency against throughput of one direction ($rw) of
# aggregate.json, for plot.sh write_latency_plots. Block 0, every point
# with a result by GB/s: "GB/s p99_ms class pick label"; two blank lines;
# block 1, the front by GB/s: "GB/s p99_ms label". p99: fio's completion
# latency percentile, median over repeats. class: "front" (a trusted point
# no other trusted point beats: as many GB/s or more at the same p99 or
# less, better in one), "beaten" (trusted, not on the front) or
# "flagged" (never picked). pick: 1 for best.<rw>. label: the parts of the
# point's name that differ between the direction's points.
include "fixed";
def beats($a; $b): $a.gbs >= $b.gbs and $a.p99 <= $b.p99 and ($a.gbs > $b.gbs or $a.p99 < $b.p99);
(.best[$rw].point // null) as $pick
| [.points[] | select(.rw == $rw and .gbs != null and .clat_p99_us != null)
   | {point, gbs, p99: (.clat_p99_us / 1000), trusted: (.trusted == true), parts: (.point | split("-"))}] as $all
| ($all | map(.parts) | if length > 0 then reduce .[1:][] as $p (.[0]; . - (. - $p)) else [] end) as $common
| [$all[] | select(.trusted)] as $t
| [$all[] | . as $p
   | . + {class: (if ($p.trusted | not) then "flagged" elif any($t[]; beats(.; $p)) then "beaten" else "front" end),
	  label: ((.parts - $common) | join("-") | if . == "" then "-" else . end)}]
| sort_by(.gbs, .p99, .point)
| (.[] | "\(.gbs | fixed(6)) \(.p99 | fixed(3)) \(.class) \(if .point == $pick then 1 else 0 end) \(.label)"),
  "", "",
  (.[] | select(.class == "front") | "\(.gbs | fixed(6)) \(.p99 | fixed(3)) \(.label)")
