# plot-threads.jq - Best read and write GB/s per thread count
# (aggregate.json). Used by plot.sh write_plots.
[.points[] | select(.gbs != null)] as $p
| ($p | map(.threads) | unique)[] as $t
| "\($t) \([$p[] | select(.threads == $t and .rw == "read") | .gbs] | max // "-") \([$p[] | select(.threads == $t and .rw == "write") | .gbs] | max // "-")"
