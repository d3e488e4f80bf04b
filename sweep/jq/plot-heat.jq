# plot-heat.jq - Heat-map data of one direction, window and submit mode:
# block index, qd index, best GB/s (aggregate.json). Used by plot.sh
# write_plots.
[.points[] | select(.rw == $rw)] as $all
| ($all | map(.block) | unique) as $bs | ($all | map(.qd) | unique) as $qs
| [$all[] | select(.window == $w and .submit == $s and .gbs != null)]
| group_by([.block, .qd])[]
| max_by(.gbs)
| "\(. as $p | $bs | index($p.block)) \(. as $p | $qs | index($p.qd)) \(.gbs)"
