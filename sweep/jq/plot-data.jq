# plot-data.jq - The data of every plot of a run's aggregate.json, in one
# jq run (jq -j; plot.sh write_plots): NUL-terminated records, each a
# header line and then the lines of the plot's data file:
#   "heat\tRW\tWINDOW\tSUBMIT\tBLOCKS\tQDS" per direction (read, write) and
#     window/submit pair of its points; BLOCKS and QDS the direction's block
#     sizes and queue depths (bytes, space-separated, ascending); a line per
#     block x queue depth: block index, qd index, best GB/s over threads,
#     backends and tensor sizes, label colour (white on the palette's dark
#     half, below 0.55 of the map's best; else black);
#   "threads": "THREADS READ WRITE", the best GB/s per thread count ("-":
#     none);
#   "latency\tRW" per direction (read, write, readwrite) with a point that
#     has GB/s and a p99: block 0, every such point by GB/s, "GB/s p99_ms
#     class pick label"; two blank lines; block 1, the Pareto front by
#     GB/s, "GB/s p99_ms label". p99: fio's completion latency percentile,
#     median over repeats. class: "front" (a trusted point no other trusted
#     point beats: as many GB/s or more at the same p99 or less, better in
#     one), "beaten" (trusted, not on the front) or "flagged" (never
#     picked). pick: 1 for best.RW. label: the parts of the point's name
#     that differ between the direction's points;
#   "bw\tPOINT\tWHY" for the best read, write and readwrite points and every
#     point that drops during the run, no data (bwlog.sh write_bw_plots
#     draws them from the points' bandwidth logs).
include "fixed";

def record($head; $lines): "\($head)\n\([$lines[] | "\(.)\n"] | add // "")\u0000";

def heat_lines($rw; $w; $s):
	[.points[] | select(.rw == $rw)] as $all
	| ($all | map(.block) | unique) as $bs | ($all | map(.qd) | unique) as $qs
	| [$all[] | select(.window == $w and .submit == $s and .gbs != null)]
	| [group_by([.block, .qd])[] | max_by(.gbs)]
	| (map(.gbs) | max) as $m
	| .[]
	| "\(. as $p | $bs | index($p.block)) \(. as $p | $qs | index($p.qd)) \(.gbs) \(if .gbs < 0.55 * $m then 16777215 else 0 end)";

def threads_lines:
	[.points[] | select(.gbs != null)] as $p
	| ($p | map(.threads) | unique)[] as $t
	| "\($t) \([$p[] | select(.threads == $t and .rw == "read") | .gbs] | max // "-") \([$p[] | select(.threads == $t and .rw == "write") | .gbs] | max // "-")";

def beats($a; $b): $a.gbs >= $b.gbs and $a.p99 <= $b.p99 and ($a.gbs > $b.gbs or $a.p99 < $b.p99);
def latency_lines($rw):
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
	  (.[] | select(.class == "front") | "\(.gbs | fixed(6)) \(.p99 | fixed(3)) \(.label)");

(.points // []) as $p
| (("read", "write") as $rw
   | [$p[] | select(.rw == $rw)] as $d
   | ($d | map(.block) | unique | map(tostring) | join(" ")) as $blocks
   | ($d | map(.qd) | unique | map(tostring) | join(" ")) as $qds
   | ($d | map([.window, .submit]) | unique[]) as [$w, $s]
   | record("heat\t\($rw)\t\($w)\t\($s)\t\($blocks)\t\($qds)"; [heat_lines($rw; $w; $s)])),
  record("threads"; [threads_lines]),
  (("read", "write", "readwrite") as $l
   | select(any($p[]; .rw == $l and .gbs != null and .clat_p99_us != null))
   | record("latency\t\($l)"; [latency_lines($l)])),
  (([.best.read, .best.write, .best.readwrite | select(. != null) | [.point, "best \(.rw)"]]
    + [$p[] | select(.drops == true) | [.point, "drops \(.drop_pct | round)% during the run"]])
   | unique_by(.[0])[] | record("bw\t\(.[0])\t\(.[1])"; []))
