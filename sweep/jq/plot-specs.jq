# plot-specs.jq - Which plots a run's aggregate.json has data for, a line
# each (plot.sh write_plots, one jq run for them all): "heat<TAB>RW<TAB>
# WINDOW<TAB>SUBMIT<TAB>BLOCKS<TAB>QDS" per direction (read, write) and
# window/submit pair of its points, BLOCKS and QDS the direction's block
# sizes and queue depths (bytes, space-separated, ascending); then
# "latency<TAB>RW" per direction (read, write, readwrite) with a point that
# has GB/s and a p99.
(.points // []) as $p
| ("read", "write") as $rw
| [$p[] | select(.rw == $rw)] as $d
| ($d | map(.block) | unique | map(tostring) | join(" ")) as $blocks
| ($d | map(.qd) | unique | map(tostring) | join(" ")) as $qds
| ($d | map("\(.window)\t\(.submit)") | unique[] | "heat\t\($rw)\t\(.)\t\($blocks)\t\($qds)"),
  (select($rw == "write")
   | ("read", "write", "readwrite") as $l
   | select(any($p[]; .rw == $l and .gbs != null and .clat_p99_us != null)) | "latency\t\($l)")
