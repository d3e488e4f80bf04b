# budget-plan.jq - The rounds of a --budget run (successive halving,
# docs/sweep.md "Budget"), fitted into the seconds left. jq -n with:
#   $groups   {CKEY: N}: the tswap points per pick group (a direction at
#             one rank count: rw, or rw-nN), for a new plan; or null with
#   $shape    the rounds still to run (a re-plan after a round: the
#             .rounds of an earlier plan, minus the ones run)
#   $ceilings ceiling runs, run once in the first round
#   $left     seconds for the fio runs (budget - time spent - reserve)
#   $ramp     the grid's ramp (s): the final round's; earlier rounds ramp
#             min($ramp, 1) s, as they only rank points
#   $over     seconds per run beyond ramp + runtime (fio start-up, job
#             file, drop_caches, result.json: estimated, then measured)
#   $tmax     the longest runtime of a round (s): the grid's or --runtime
#   $reps     the final round's repeats (default 3: a min-max interval)
#   $first    rounds already run (0 for a new plan)
# Output: {rounds: [{final, groups, ceilings, repeats, ramp, runtime, runs,
# planned_s}], planned_s, min_s, fits}. fits is false when not even every
# point once at 1 s fits: min_s is that cost (the refusal says it).
#
# Halving: a group of N points keeps ceil(N/2) per round until 2 or fewer
# are left; those 2 (the pick and its runner-up) are the final round,
# measured with $reps repeats. A group already down to its final size sits
# out the later pruning rounds. When the whole schedule does not fit at
# 1 s per run: drop the second round (the round before prunes harder),
# again, then fewer final repeats (3, 2, 1), then one round of every point
# once (no pruning).
def halving: if . <= 2 then [.] else [.] + (((. + 1) / 2 | floor) | halving) end;
def rramp($r; $n): if $r.final and $n > 1 then $ramp else ([$ramp, 1] | min) end;
def runs($r; $reps): ($r.groups | add // 0) * (if $r.final then $reps else 1 end) + $r.ceilings;
def mincost($s; $reps): [$s[] | runs(.; $reps) * (1 + rramp(.; $s | length) + $over)] | add // 0;
def shape:
	[$groups | to_entries[] | {key, s: (.value | halving)}] as $g
	| ($g | map(.s | length) | max) as $R
	| [range(0; $R) as $k
	   | {final: ($k == $R - 1),
	      groups: ([$g[] | if $k == $R - 1 then {key, value: .s[-1]}
			 elif $k < (.s | length) - 1 then {key, value: .s[$k]} else empty end] | from_entries),
	      ceilings: (if $k == 0 then $ceilings else 0 end)}];
# once: one round of every point of the shape once (the first round's
# points: the largest count per group), the last resort and the minimum
def once($s): [$s[0] + {final: true, groups: ([$s[].groups | to_entries[]] | group_by(.key)
	| map({key: .[0].key, value: (map(.value) | max)}) | from_entries)}];
# fit: the shape and final repeats that fit $left at 1 s per run, or null
def fit($s; $reps):
	if mincost($s; $reps) <= $left then {s: $s, reps: $reps}
	elif ($s | length) > 2 then fit($s[:1] + $s[2:]; $reps)
	elif $reps > 1 then fit($s; $reps - 1)
	elif ($s | length) == 2 then
		fit(once($s); 1)
	else null end;
# distribute: successive halving's resource rule: as the points halve,
# the runtime doubles (round i of the run: x * 2^i s, whole seconds from 1
# to $tmax), so each round costs about the same; x as large as fits $left;
# what the rounding leaves goes to the final round. $first: rounds run
# before this plan (a re-plan continues the doubling).
def times($s; $x): [range(0; $s | length) as $i | [[($x * pow(2; $i + $first) | floor), $tmax] | min, 1] | max];
def cost($s; $reps; $t): [range(0; $s | length) as $i
	| runs($s[$i]; $reps) * ($t[$i] + rramp($s[$i]; $s | length) + $over)] | add // 0;
def distribute($s; $reps):
	($s | length) as $n
	| ([range(1; $tmax * 8 + 1) | . / 8 | select(cost($s; $reps; times($s; .)) <= $left)] | max // 0.125) as $x
	| times($s; $x) as $t0
	| (cost($s[:-1]; $reps; $t0[:-1])) as $before
	| runs($s[-1]; $reps) as $kf
	| ($t0[:-1] + [if $kf == 0 then $t0[-1] else
		[[(($left - $before) / $kf - rramp($s[-1]; $n) - $over | floor), $tmax] | min, $t0[-1]] | max end]) as $t
	| [range(0; $n) as $i | $s[$i] + {repeats: (if $s[$i].final then $reps else 1 end),
		ramp: rramp($s[$i]; $n), runtime: $t[$i], runs: runs($s[$i]; $reps),
		planned_s: (runs($s[$i]; $reps) * ($t[$i] + rramp($s[$i]; $n) + $over) * 10 | round / 10)}];
(if $groups != null then shape else $shape end) as $s0
| (mincost(once($s0); 1) * 10 | ceil / 10) as $min
| fit($s0; $reps) as $f
| if $f == null then {fits: false, min_s: $min, rounds: [], planned_s: 0}
  else distribute($f.s; $f.reps) as $r
	| {fits: true, min_s: $min, rounds: $r, planned_s: ([$r[].planned_s] | add * 10 | round / 10)}
  end
