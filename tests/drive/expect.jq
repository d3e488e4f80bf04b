# expect.jq - the GB/s a reference drive allows per point, by formula
# (tests/drive/README.md): GB/s = min(bps cap, iops cap x bytes per bio),
# the caps of the drive's profile for the point's direction, bytes per bio
# from its iocbs split as the block layer splits them (refdrive.jq).
#
#   jq -L tests/drive --slurpfile state STATE.json [--arg phase post] \
#      [--argjson tie 0.03] [--argjson below 0.10] -f tests/drive/expect.jq IN
#
# IN: one point {rw, tensor, block, threads} (block 0 or absent: fio's
# libaio, one iocb of tensor bytes), an array of them, or a sweep's
# aggregate.json. For aggregate.json: {ceiling: {rw: expected}, points:
# [each tswap point with expected_*], best: {rw: {gbs, set, below,
# between}}}: set, the points within $tie of the fastest expected GB/s
# (the sweep's own cost tolerance, 3%); below, those more than $below
# under it (a sweep must not call them tied with the best); between, the
# rest (a grid for tests should have none). $phase: "pre" (default) or
# "post" the write cliff.
include "refdrive";
($state[0]) as $s
| ($ARGS.named.phase // "pre") as $ph
| ($ARGS.named.tie // 0.03) as $tie
| ($ARGS.named.below // 0.10) as $below
| def one: expect($s; $ph);
  def sets: group_by(.rw) | map(
	(map(.expected_gbs) | max) as $m
	| {key: .[0].rw, value: {gbs: $m,
	   set: [.[] | select(.expected_gbs >= (1 - $tie) * $m) | .point],
	   below: [.[] | select(.expected_gbs < (1 - $below) * $m) | .point],
	   between: [.[] | select(.expected_gbs < (1 - $tie) * $m and .expected_gbs >= (1 - $below) * $m) | .point]}})
	| from_entries;
if type == "object" and has("points") then
	[.points[] | select(.kind == "tswap" and (.ranks // 1) == 1 and (.rw == "read" or .rw == "write")) | one] as $p
	| {ceiling: (.ceiling | with_entries(select(.key == "read" or .key == "write")
		| .value = ({rw: .key, tensor: 1048576} | one | .expected_gbs))),
	   points: $p, best: ($p | sets)}
elif type == "array" then map(one)
else one end
