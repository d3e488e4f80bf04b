# budget-check.jq - A --budget run's checks while a round runs (budget.sh
# run_budget), from the seconds each run of the round took so far (fio,
# its start-up, the sweep's work around it: a busy machine or a slow
# point shows here), against the seconds left for runs. jq -n with:
#   $what   "repeat": the final round's next repeat ($n runs) fits, or
#           the round ends with $ndone of its $reps repeats;
#           "round": a pruning round, $n runs still to run in it, and
#           after it at least the minimum of the rounds $later (every
#           point of them once at 1 s, ramp min($ramp, 1), and the
#           ceilings) fit, or the round becomes the final round;
#           "next": the next run of any round ends by the budget (its
#           seconds as this round's runs took so far, or before the
#           first: the round's runtime + ramp + $later.over), or the run
#           stops there (budget-run.sh budget_stop)
#   $costs  seconds of each run of this round so far (the tswap points)
#   $allc, $allw  of every run of it (the ceilings too), the seconds it
#           took and fio's own: the sweep's work per run, their
#           difference, times $k is the least reserve for the outputs
#   $budget, $t0, $now, $reserve  the budget, the script's start and now
#           ($EPOCHREALTIME), the outputs' reserve: the seconds left for
#           runs, whole, as budget.sh budget_left
#   $rt, $rramp  this round's runtime and ramp; $ramp the grid's
#   $later  for "round": the rounds after it; for "next": {over: the
#           start-up per run measured so far (s), all: the runs of every
#           point once and the ceilings, start: the seconds before the
#           runs began}
# Output: {fits, need_s, per_run_s, left_s, why}: why, when it does not
# fit, in words for stderr and the report's notes; for "next" also
# once_budget_s, the budget that runs every point once at per_run_s.
def mean: (add // 0) / ([length, 1] | max);
([range(0; $allc | length) | $allc[.] - $allw[.]] | mean) as $sweep
| ([$reserve, $k * $sweep | ceil] | max) as $res
| ($budget - ($now - $t0) - $res | trunc + 0) as $left
| (if $what == "next" then (if ($allc | length) > 0 then $allc | mean else $rt + $rramp + $later.over end)
   else $costs | mean end) as $per
| ([$per - $rt - $rramp, 0.1] | max) as $over
| (if $what == "repeat" or $what == "next" then $per * $n
   else ([$later[].groups | to_entries[]] | group_by(.key) | map(map(.value) | max) | add // 0) as $pts
	| ([$later[].ceilings] | add // 0) as $ceil
	| $per * $n + ($pts + $ceil) * (1 + ([$ramp, 1] | min) + $over)
   end) as $need
| {fits: ($need <= $left), need_s: ($need * 10 | ceil / 10), per_run_s: ($per * 100 | round / 100), left_s: $left}
| if $what == "next" then . + {once_budget_s: ($later.start + $later.all * $per + $res | ceil)} else . end
| . + {why: (if .fits then null
	elif $what == "next" then "the next run needs about \(.need_s) s (as this round's runs took), \(.left_s) s are left for runs: the run stops here, and the points not run are not picked; about \(.once_budget_s) s would run every point once on this machine now"
	elif $what == "repeat" then "the final round ends after \($ndone) of its \($reps) repeat(s): one more needs about \(.need_s) s (\($n) run(s) at \(.per_run_s) s each, as this round ran), \($left) s are left for runs"
	else "this round becomes the final round (its points once, then the ceilings; no pruning, no repeats): with \($n) run(s) of it still to run at \(.per_run_s) s each, as it ran, the rounds after it need at least \(.need_s) s in all, \($left) s are left for runs" end)}
