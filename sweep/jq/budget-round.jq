# budget-round.jq - A round of a --budget run against its plan: what it
# used, and the start-up per run measured for the re-plan (budget.sh
# run_budget; docs/sweep.md "Budget"). jq -n with:
#   $spec   the round as planned (budget-plan.jq's .rounds[0])
#   $n      the round's number
#   $wall   the round's wall seconds (its runs, the sweep's work around
#           each, and any preconditioning)
#   $pre    of $wall, the seconds spent preconditioning, per run (once
#           per run directory, precondition.sh: not a cost per run)
#   $ran    fio runs made
#   $reps   repeats made: the final round drops a repeat that no longer
#           fits the time left (budget-pass.jq)
#   $allc, $allw  seconds of each run, and fio's own of it
#   $pass   the final round's check of the repeat it dropped
#           (budget-pass.jq), or null
# Output: the round's record for budget.json: the spec, then
# repeats_planned, runs_planned, wall_s, precondition_s, overhead_s (per
# run beyond ramp + runtime: fio's start-up, the tensor op that ends
# after ramp or runtime, the layout, the sweep's job file, drop_caches
# and result stages: what the rounds after it are re-planned with),
# once (every point once: no pruning), sweep_s (the sweep's own work per run: a run's seconds beyond fio's;
# the outputs' reserve, budget.sh budget_reserve) and dropped (the
# repeat the final round dropped, when it did).
def r1: . * 10 | round / 10;
($pre | add // 0) as $pre
| ([(($wall - $pre) / ([$ran, 1] | max)) - $spec.runtime - $spec.ramp, 0.1] | max * 100 | round / 100) as $over
| {round: $n, final: $spec.final, runtime: $spec.runtime, ramp: $spec.ramp,
   repeats: $reps, repeats_planned: $spec.repeats, groups: $spec.groups, ceilings: $spec.ceilings,
   runs: $ran, runs_planned: $spec.runs, planned_s: $spec.planned_s,
   planned_overhead_s: $spec.overhead_s, wall_s: ($wall | r1), precondition_s: ($pre | r1),
   overhead_s: (if $ran == 0 then $spec.overhead_s else $over end),
   sweep_s: ([range(0; $allc | length) | $allc[.] - $allw[.]] | (add // 0) / ([length, 1] | max) * 100 | round / 100)}
  + (if $spec.once then {once: true} else {} end)
  + (if $spec.became_final then {became_final: $spec.became_final} else {} end)
  + (if $pass == null then {} else {dropped: ($pass | del(.why))} end)
