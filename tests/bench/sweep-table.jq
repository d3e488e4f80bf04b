# sweep-table.jq - results.md of make bench-sweep (tests/bench/
# tswap-bench-sweep) from its results.json: per row the exhaustive run and
# each budget run (wall time, pick per direction, same/tied/other, its
# exhaustive GB/s as a fraction of the exhaustive best and of the
# exhaustive pick, wall over budget, on a reference drive the formula's
# verdict per direction), each A/A control run (the grid exhaustively
# again, judged the same way), each busy-row run, then the agreement of
# consecutive budget runs. A row run at several budgets has one
# results.json entry per budget, all against one exhaustive run: its
# exhaustive and control lines are printed once.
def f: if . == null then "-" else tostring end;
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
def name: "\(if .profile then .profile + " " else "" end)\(.row)";
def same_row($a; $b): $a != null and $b != null and $a.row == $b.row and $a.profile == $b.profile;
def kn: if .known then "\(.known) \(.known_fraction | g)" else "-" end;
# line($n; $what): one run's line; . a judged run
def line($n; $what):
	"| \($n) | \($what) | \(.wall_s) | `\(.picks.read.point | f)` | \(.picks.read.match) | \(.picks.read.fraction | f) / \(.picks.read.vs_pick | f) | `\(.picks.write.point | f)` | \(.picks.write.match) | \(.picks.write.fraction | f) / \(.picks.write.vs_pick | f) | \(.over | f) | \(.picks.read | kn) / \(.picks.write | kn) |";
def lowest(s): [s | select(. != null)] | min | f;
.rows as $rows |
"| row | run | wall s | read pick | read vs exhaustive | read fraction of best / of pick | write pick | write vs exhaustive | write fraction of best / of pick | wall / budget | formula read / write |",
"|---|---|---|---|---|---|---|---|---|---|---|",
(.rows | to_entries[] | .key as $i | .value as $r | ($r | name) as $n | $r
 | (if $i > 0 and same_row($r; $rows[$i - 1]) then empty else
   "| \($n) | exhaustive | \(.exhaustive.wall_s) | `\(.exhaustive.picks.read.point | f)` | - | \(.exhaustive.picks.read.fraction | f) / 1 (best \(.exhaustive.picks.read.best_gbs | g) GB/s) | `\(.exhaustive.picks.write.point | f)` | - | \(.exhaustive.picks.write.fraction | f) / 1 (best \(.exhaustive.picks.write.best_gbs | g) GB/s) | - | \(.exhaustive.picks.read | kn) / \(.exhaustive.picks.write | kn) |" end),
   (.budget[] | line($n; "budget \(.budget_s) s #\(.run)")),
   (.busy[]? | line($n; "budget \(.budget_s) s #\(.run), \($r.load) CPU hogs")),
   (if same_row($r; $rows[$i + 1]) then empty else
    (.control[]? | line($n; "exhaustive again #\(.run) (A/A)")) end)),
"",
(.rows[] | "- \(name), budget \(.budget_s) s: consecutive budget runs agree (same pick or a declared tie, both directions) in \(.agree_count) of \(.pairs) pair(s); target 4 of 5. Lowest fraction of the exhaustive best: \(lowest(.budget[].picks[].fraction)) (target >= 0.97; the exhaustive pick's own: \(lowest(.exhaustive.picks[].fraction))), of the exhaustive pick: \(lowest(.budget[].picks[].vs_pick)). The exhaustive pick or tied with it in both directions: \(.match_count) of \(.budget | length) run(s).\(if (.control | length) > 0 then " A/A control (the exhaustive run again): lowest fraction of the first's best \(lowest(.control[].picks[].fraction)), agrees with it in \([.control[] | select(.agree)] | length) of \(.control | length)." else "" end) Within budget + 10%: \(.within_count // 0) of \(.budget | length) (highest wall / budget \([.budget[].over | select(. != null)] | max | f)).\(if .known_count then " In the formula's best set in both directions: \(.known_count) of \(.budget | length) budget run(s), the exhaustive pick: \([.exhaustive.picks[] | select(.point != null) | .known == "best"] | all), A/A: \(.control_known_count) of \(.control | length)." else "" end)\(if (.busy // []) | length > 0 then " Busy row (\(.load) CPU hogs): within budget + 10% in \(.busy_within_count) of \(.busy | length) (highest wall / budget \([.busy[].over | select(. != null)] | max | f))\(if .busy_known_count then ", in the formula's best set in \(.busy_known_count) of \(.busy | length)" else "" end)." else "" end)")
