# plot-heat.jq - Heat-map data of one direction, window and submit mode:
# block index, qd index, best GB/s (aggregate.json), label colour (white
# on the palette's dark half, below 0.55 of the map's best; else black).
# Used by plot.sh write_plots.
[.points[] | select(.rw == $rw)] as $all
| ($all | map(.block) | unique) as $bs | ($all | map(.qd) | unique) as $qs
| [$all[] | select(.window == $w and .submit == $s and .gbs != null)]
| [group_by([.block, .qd])[] | max_by(.gbs)]
| (map(.gbs) | max) as $m
| .[]
| "\(. as $p | $bs | index($p.block)) \(. as $p | $qs | index($p.qd)) \(.gbs) \(if .gbs < 0.55 * $m then 16777215 else 0 end)"
