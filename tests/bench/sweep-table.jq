# sweep-table.jq - results.md of make bench-sweep (tests/bench/
# tswap-bench-sweep) from its results.json: per row the exhaustive run and
# each budget run (wall time, pick per direction, same/tied/other, its
# exhaustive GB/s as a fraction of the exhaustive best and of the
# exhaustive pick), each A/A control run (the grid exhaustively again,
# judged the same way), then the agreement of consecutive
# budget runs. A row run at several budgets has one results.json entry per
# budget, all against one exhaustive run: its line is printed once.
def f: if . == null then "-" else tostring end;
.rows as $rows |
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
"| row | run | wall s | read pick | read vs exhaustive | read fraction of best / of pick | write pick | write vs exhaustive | write fraction of best / of pick |",
"|---|---|---|---|---|---|---|---|---|",
(.rows | to_entries[] | .key as $i | .value as $r | $r
 | (if $i > 0 and $r.row == $rows[$i - 1].row then empty else
   "| \(.row) | exhaustive | \(.exhaustive.wall_s) | `\(.exhaustive.picks.read.point | f)` | - | \(.exhaustive.picks.read.fraction | f) / 1 (best \(.exhaustive.picks.read.best_gbs | g) GB/s) | `\(.exhaustive.picks.write.point | f)` | - | \(.exhaustive.picks.write.fraction | f) / 1 (best \(.exhaustive.picks.write.best_gbs | g) GB/s) |" end),
   (.budget[] | "| \($r.row) | budget \(.budget_s) s #\(.run) | \(.wall_s) | `\(.picks.read.point | f)` | \(.picks.read.match) | \(.picks.read.fraction | f) / \(.picks.read.vs_pick | f) | `\(.picks.write.point | f)` | \(.picks.write.match) | \(.picks.write.fraction | f) / \(.picks.write.vs_pick | f) |"),
   (if $rows[$i + 1].row == $r.row then empty else
    (.control[]? | "| \($r.row) | exhaustive again #\(.run) (A/A) | \(.wall_s) | `\(.picks.read.point | f)` | \(.picks.read.match) | \(.picks.read.fraction | f) / \(.picks.read.vs_pick | f) | `\(.picks.write.point | f)` | \(.picks.write.match) | \(.picks.write.fraction | f) / \(.picks.write.vs_pick | f) |") end)),
"",
(.rows[] | "- \(.row), budget \(.budget_s) s: consecutive budget runs agree (same pick or a declared tie, both directions) in \(.agree_count) of \(.pairs) pair(s); target 4 of 5. Lowest fraction of the exhaustive best: \([.budget[].picks[].fraction | select(. != null)] | min | f) (target >= 0.97; the exhaustive pick's own: \([.exhaustive.picks[].fraction | select(. != null)] | min | f)), of the exhaustive pick: \([.budget[].picks[].vs_pick | select(. != null)] | min | f). The exhaustive pick or tied with it in both directions: \(.match_count) of \(.budget | length) run(s).\(if (.control | length) > 0 then " A/A control (the exhaustive run again): lowest fraction of the first's best \([.control[].picks[].fraction | select(. != null)] | min | f), agrees with it in \([.control[] | select(.agree)] | length) of \(.control | length)." else "" end)")
