# sweep-table.jq - results.md of make bench-sweep (tests/bench/
# tswap-bench-sweep) from its results.json: per row the exhaustive run and
# each budget run (wall time, pick per direction, same/tied/other, the
# fraction of the exhaustive best), then the agreement of consecutive
# budget runs. A row run at several budgets has one results.json entry per
# budget, all against one exhaustive run: its line is printed once.
def f: if . == null then "-" else tostring end;
.rows as $rows |
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
"| row | run | wall s | read pick | read vs exhaustive | read fraction | write pick | write vs exhaustive | write fraction |",
"|---|---|---|---|---|---|---|---|---|",
(.rows | to_entries[] | .key as $i | .value as $r | $r
 | (if $i > 0 and $r.row == $rows[$i - 1].row then empty else
   "| \(.row) | exhaustive | \(.exhaustive.wall_s) | `\(.exhaustive.picks.read.point | f)` | - | 1 (\(.exhaustive.picks.read.best_gbs | g) GB/s best) | `\(.exhaustive.picks.write.point | f)` | - | 1 (\(.exhaustive.picks.write.best_gbs | g) GB/s best) |" end),
   (.budget[] | "| \($r.row) | budget \(.budget_s) s #\(.run) | \(.wall_s) | `\(.picks.read.point | f)` | \(.picks.read.match) | \(.picks.read.fraction | f) | `\(.picks.write.point | f)` | \(.picks.write.match) | \(.picks.write.fraction | f) |")),
"",
(.rows[] | "- \(.row), budget \(.budget_s) s: consecutive budget runs agree (same pick or a declared tie, both directions) in \(.agree_count) of \(.pairs) pair(s); target 4 of 5. Lowest fraction of the exhaustive best: \([.budget[].picks[].fraction | select(. != null)] | min | f) (target >= 0.97).")
