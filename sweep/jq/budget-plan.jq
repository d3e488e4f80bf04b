# budget-plan.jq - The rounds of a --budget run (successive halving,
# docs/sweep.md "Budget"), fitted into the seconds left. jq -n with:
#   $groups   {CKEY: N}: the tswap points per pick group (a direction at
#             one rank count: rw, or rw-nN), for a new plan; or null with
#   $shape    the rounds still to run (a re-plan after a round: the
#             .rounds of an earlier plan, minus the ones run)
#   $ceilings ceiling runs, run once in the final round (at its runtime
#             and ramp: the ceiling its runs are judged against)
#   $left     seconds for the fio runs (budget - time spent - reserve)
#   $ramp     the grid's ramp (s): the final round's; earlier rounds ramp
#             min($ramp, 1) s, as they only rank points
#   $over     seconds per run beyond ramp + runtime (fio start-up, job
#             file, drop_caches, result.json: estimated, then measured)
#   $tmax     the longest runtime of a round (s): the grid's or --runtime
#   $reps     the final round's repeats (default 3: a min-max interval)
#   $floor    the final round's runtime floor (s, BUDGET_FINAL_MIN); the
#             floor is min($floor, $tmax)
#   $first    rounds already run (0 for a new plan)
# Output: {rounds: [{final, groups, ceilings, repeats, ramp, runtime, runs,
# overhead_s, planned_s}], planned_s, min_s, floor_s, final_floor,
# overhead_s ($over), min_runs, min_ramp, below_floor, fits}.
# below_floor: the final round has less than its floor or fewer than $reps
# repeats, or there is no pruning (one round of every point once).
# fits is false when not even every point once at 1 s fits: min_s is that
# cost (the refusal says it), min_runs and min_ramp its runs and ramp; floor_s is the cost of the first round at
# 1 s and the final round at its floor with $reps repeats, the least that
# gives the final round its floor.
#
# Halving: a group of N points keeps ceil(N/2) per round until 2 or fewer
# are left; those 2 (the pick and its runner-up) are the final round,
# measured with $reps repeats. A group already down to its final size sits
# out the later pruning rounds.
#
# The final round is reserved first: the pick is made from its runs only,
# so its runtime is the longest from $tmax down to the floor for which it
# and the first round at 1 s fit $left. The pruning rounds get what is
# left: the second round is dropped (the round before prunes harder),
# again, until they fit at 1 s per run; then their runtimes double from
# round to round, at most the final round's. Only when not even the floor
# fits does the old rule apply (below_floor): the whole schedule at 1 s
# per run, dropping rounds, then fewer final repeats (3, 2, 1), then one
# round of every point once (no pruning; a final round left alone: its
# points once, ramped like a pruning round), the final runtime from what
# is left.
def halving: if . <= 2 then [.] else [.] + (((. + 1) / 2 | floor) | halving) end;
# the final round ramps like an exhaustive point; a pruning round, or the
# one round of once (no pruning: all points at 1 s), ramps at most 1 s
def rramp($r): if $r.final and ($r.once | not) then $ramp else ([$ramp, 1] | min) end;
def runs($r; $reps): ($r.groups | add // 0) * (if $r.final then $reps else 1 end) + $r.ceilings;
def rcost($r; $reps; $t): runs($r; $reps) * ($t + rramp($r) + $over);
def mincost($s; $reps): [$s[] | rcost(.; $reps; 1)] | add // 0;
def shape:
	[$groups | to_entries[] | {key, s: (.value | halving)}] as $g
	| ($g | map(.s | length) | max) as $R
	| [range(0; $R) as $k
	   | {final: ($k == $R - 1),
	      groups: ([$g[] | if $k == $R - 1 then {key, value: .s[-1]}
			 elif $k < (.s | length) - 1 then {key, value: .s[$k]} else empty end] | from_entries),
	      ceilings: (if $k == $R - 1 then $ceilings else 0 end)}];
# once: one round of every point of the shape once (the first round's
# points: the largest count per group), the last resort and the minimum
def once($s): [$s[0] + {final: true, once: true, ceilings: ([$s[].ceilings] | add), groups: ([$s[].groups | to_entries[]] | group_by(.key)
	| map({key: .[0].key, value: (map(.value) | max)}) | from_entries)}];
# fit: the shape and final repeats that fit $left at 1 s per run, or null
def fit($s; $reps):
	if mincost($s; $reps) <= $left then {s: $s, reps: $reps}
	elif ($s | length) > 2 then fit($s[:1] + $s[2:]; $reps)
	elif $reps > 1 then fit($s; $reps - 1)
	elif ($s | length) <= 2 and (($s[0].once // false) | not) then
		fit(once($s); 1)
	else null end;
# fitpre: the pruning rounds $p that fit $l at 1 s per run (the second
# dropped, again), or null
def fitpre($p; $l):
	if mincost($p; 1) <= $l then $p
	elif ($p | length) > 1 then fitpre($p[:1] + $p[2:]; $l)
	else null end;
# lastok($a; $b; ok): the last of range($a; $b) for which ok holds, by
# bisection (ok holds up to some value, not after: costs grow with the
# runtime), or null; a scan would spin for a runtime of days
def lastok($a; $b; ok):
	(($b - $a) | ceil) as $n
	| if $n < 1 or ($a | ok | not) then null
	  else [0, $n - 1] | until(.[0] >= .[1]; ((.[0] + .[1] + 1) / 2 | floor) as $m
		| if ($a + $m | ok) then [$m, .[1]] else [.[0], $m - 1] end) | $a + .[0] end;
# distribute: successive halving's resource rule: as the points halve,
# the runtime doubles (round i of the run: x * 2^i s, whole seconds from 1
# to $cap), so each round costs about the same; x as large as fits $l.
# $first: rounds run before this plan (a re-plan continues the doubling).
def times($s; $x; $cap): [range(0; $s | length) as $i | [[($x * pow(2; $i + $first) | floor), $cap] | min, 1] | max];
def cost($s; $reps; $t): [range(0; $s | length) as $i | rcost($s[$i]; $reps; $t[$i])] | add // 0;
def bestx($s; $reps; $l; $cap):
	(lastok(1; $cap * 8 + 1; cost($s; $reps; times($s; . / 8; $cap)) <= $l) // 1) / 8;
def spec($s; $reps; $t): [range(0; $s | length) as $i | $s[$i] + {repeats: (if $s[$i].final then $reps else 1 end),
	ramp: rramp($s[$i]), runtime: $t[$i], runs: runs($s[$i]; $reps), overhead_s: $over,
	planned_s: (rcost($s[$i]; $reps; $t[$i]) * 10 | round / 10)}];
# the old rule (below the floor): what the rounding of the pruning rounds
# leaves goes to the final round
def distribute($s; $reps):
	($s | length) as $n
	| times($s; bestx($s; $reps; $left; $tmax); $tmax) as $t0
	| (cost($s[:-1]; $reps; $t0[:-1])) as $before
	| runs($s[-1]; $reps) as $kf
	| ($t0[:-1] + [if $kf == 0 then $t0[-1] else
		[[(($left - $before) / $kf - rramp($s[-1]) - $over | floor), $tmax] | min, $t0[-1]] | max end]) as $t
	| spec($s; $reps; $t);
# reserve: the final round at the longest runtime from $tmax down to the
# floor that leaves the first round its 1 s, then the pruning rounds in
# what is left; null when not even the floor fits
def reserve($s; $fl):
	$s[-1] as $fin | $s[:-1] as $pre
	| mincost($pre[:1]; 1) as $pmin
	| lastok($fl; $tmax + 1; rcost($fin; $reps; .) + $pmin <= $left) as $tf
	| if $tf == null then null
	  else ($left - rcost($fin; $reps; $tf)) as $lp
	  | (if ($pre | length) == 0 then [] else fitpre($pre; $lp) end) as $p
	  | (if ($p | length) == 0 then [] else times($p; bestx($p; 1; $lp; $tf); $tf) end) as $t
	  | spec($p + [$fin]; $reps; $t + [$tf])
	  end;
(if $groups != null then shape else $shape end) as $s0
| ([$floor, $tmax] | min) as $fl
| (mincost(once($s0); 1) * 10 | ceil / 10) as $min
| ((mincost($s0[:-1][:1]; 1) + rcost($s0[-1]; $reps; $fl)) * 10 | ceil / 10) as $fmin
| reserve($s0; $fl) as $res
| (if $res != null then {s: $res, below: false}
   else fit($s0; $reps) as $f
	| if $f == null then null else distribute($f.s; $f.reps) as $r
	  | {s: $r, below: ($r[-1].runtime < $fl or $r[-1].repeats < $reps or ($r[-1].once // false))} end
   end) as $p
| {min_s: $min, min_runs: runs(once($s0)[0]; 1), min_ramp: rramp(once($s0)[0]), floor_s: $fmin, final_floor: $fl, overhead_s: $over}
  + if $p == null then {fits: false, below_floor: true, rounds: [], planned_s: 0}
    else {fits: true, below_floor: $p.below, rounds: $p.s, planned_s: ([$p.s[].planned_s] | add * 10 | round / 10)}
    end
