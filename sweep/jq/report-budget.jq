# report-budget.jq - report.md's "Budget" section of a --budget run, from
# aggregate.json's budget (budget.sh budget_into_aggregate): per round its
# runtime, ramp, repeats, the points run per direction, what was pruned at
# which GB/s (of that round's one short run), planned and measured time;
# then the time used and the final margins. Nothing without a budget.
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
def r1: . * 10 | round / 10;
select(.budget != null) | .budget as $b
| "## Budget: successive halving",
  "",
  "Budget \($b.seconds) s\(if $b.chosen_by_default then " (chosen by default: the exhaustive run of this grid would take more than an hour; --exhaustive runs every point)" else " (--budget)" end); \($b.used_s | r1) s used when the report was written (runs started at \($b.runs_start_s | r1) s, after the target's preparation). Round 1 runs every point once, short; each later round keeps half of each direction's points (the fastest, then the points tied with it within that run's noise, one tensor-swap op of its runtime + 5%, cheapest first by the pick's cost order, then the others by GB/s) and doubles the runtime; the final round, whose runtime was reserved first, measures the last 2 per direction with repeats and the device ceilings at the same runtime, and the pick uses only its runs (pruned points are never picked; the trust flags judge the final round's runs against those ceilings). Fio start-up was planned at \($b.overhead_estimate_s) s per run and re-planned with the measured cost after each round (docs/sweep.md, Budget).",
  "",
  "| round | runtime s | ramp s | repeats | points run | runs | planned s | took s | start-up s/run | pruned (GB/s in that round) |",
  "|---|---|---|---|---|---|---|---|---|---|",
  ($b.rounds[] | "| \(.round)\(if .final then " (final)" else "" end) | \(.runtime) | \(.ramp) | \(.repeats) | \(.groups | to_entries | map("\(.key) \(.value)") | join(", "))\(if .ceilings > 0 then " + \(.ceilings) ceiling" else "" end) | \(.runs) | \(.planned_s) | \(.wall_s) | \(.overhead_s) | \(if (.pruned | length) == 0 then "-" else (.pruned | map("`\(.point)` \(.gbs | g)\(if .why != "slower" then " (\(.why))" else "" end)") | join(", ")) end) |"),
  "",
  ($b.rounds[] | select(.stopped) | "Stopped in round \(.round): \(.stopped.why).", ""),
  "Final margins:",
  "",
  ($b.final_margins | to_entries[] | .key as $d | .value
   | "- \($d): `\(.point)` \(.gbs | g) GB/s (min-max \(.lo | g)-\(.hi | g)), \(if .runner_up == null then "no runner-up" else "\(if .margin_pct >= 0 then "+" else "" end)\(.margin_pct | r1)% over `\(.runner_up.point)` \(.runner_up.gbs | g) GB/s" end); \(.confidence)"),
  (if ($b.final_margins | length) == 0 then "- none: no trustworthy point in the final round" else empty end),
  ""
