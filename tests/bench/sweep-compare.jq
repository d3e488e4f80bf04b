# sweep-compare.jq - make bench-sweep's comparison of budget runs with the
# exhaustive run of the same grid (tests/bench/tswap-bench-sweep). jq -n
# with $ex: [aggregate.json of the exhaustive run]; $bu: the budget runs'
# aggregate.json, in run order; $aa: the control runs' aggregate.json
# (the grid exhaustively again, after the budget runs: the A/A control);
# $bz: the busy row's budget runs (beside $load CPU hogs); $kn: [] or, on
# a reference drive, [tests/drive/expect.jq of the exhaustive run] (the
# known answer); $walls: {exhaustive: s, budget: [s...], control: [s...],
# busy: [s...]}.
# Per direction (read, write): the exhaustive pick and the highest median
# among its trustworthy points (the "exhaustive best"); per budget run its
# pick, whether it is the exhaustive pick ("same"), one of its tied configs
# ("tied") or neither ("other"), and its GB/s in the exhaustive run as a
# fraction of the exhaustive best (target >= 0.97) and of the exhaustive
# pick (vs_pick: when the exhaustive run resolves a tie by the cost order
# its own pick sits below its best median, and a budget run that finds
# that pick scores its fraction, not 1); on a reference drive also where
# the formula puts the pick (known: "best", its best set within 3%;
# "below", more than 10% under it; "between") and its formula GB/s as a
# fraction of the formula's best (known_fraction); its wall time over its
# budget (over: target <= 1.10). Per pair of consecutive budget runs
# whether they agree: the same pick, or one's pick in the other's tied
# list, in both directions (target: 4 of 5). Each control run is judged
# as a budget run is, and whether it agrees with the first exhaustive
# run: how far the metric itself reproduces on this target (a control
# that scores below 0.97 says the target's noise is wider than the
# fraction target).
def dirs: ["read", "write"];
def best_gbs($a; $d): [$a.points[] | select(.rw == $d and .trusted) | .gbs] | max;
def gbs_of($a; $p): [$a.points[] | select(.point == $p) | .gbs] | first;
def r3: . * 1000 | round / 1000;
def agree($a; $b; $d): ($a.best[$d]) as $x | ($b.best[$d]) as $y
	| if $x == null or $y == null then false
	  else $x.point == $y.point or ($x.point | IN($y.tied[]?)) or ($y.point | IN($x.tied[]?)) end;
$ex[0] as $e | $kn[0] as $k
# known($d; $p): the formula's verdict on pick $p of direction $d
| def known($d; $p):
	if $k == null or $p == null or $k.best[$d] == null then {}
	else ($k.best[$d]) as $s
	| {known: (if $p | IN($s.set[]) then "best" elif $p | IN($s.below[]) then "below" else "between" end),
	   known_fraction: ([$k.points[] | select(.point == $p) | .expected_gbs] | first // 0 | . / $s.gbs | r3)} end;
# judge($i; $w): one run's aggregate (.) against the exhaustive run $e
def judge($i; $w): . as $b
	| {run: ($i + 1), wall_s: $w, budget_s: $b.budget.seconds?,
	   over: (if $b.budget.seconds? then $w / $b.budget.seconds | r3 else null end),
	   picks: (dirs | map(. as $d | $b.best[$d].point? as $p
		| {key: $d, value: ({point: $p,
			match: (if $p == null or $e.best[$d] == null then "none"
				elif $p == $e.best[$d].point then "same"
				elif ($p | IN($e.best[$d].tied[]?)) then "tied" else "other" end),
			fraction: (if $p == null or best_gbs($e; $d) == null then null
				   else (gbs_of($e; $p) // 0) / best_gbs($e; $d) | r3 end),
			vs_pick: (if $p == null or $e.best[$d] == null then null
				  else (gbs_of($e; $p) // 0) / $e.best[$d].gbs | r3 end)} + known($d; $p))})
		| from_entries)};
def in_best: [.picks[] | select(.point != null) | .known == "best"] | all;
{exhaustive: {wall_s: $walls.exhaustive,
		picks: (dirs | map(. as $d | {key: ., value: ({point: $e.best[.].point?, gbs: $e.best[.].gbs?,
			best_gbs: best_gbs($e; .), tied: ($e.best[.].tied? // []),
			fraction: (if $e.best[.] == null then null else $e.best[.].gbs / best_gbs($e; .) | r3 end)}
			+ known($d; $e.best[$d].point?))})
			| from_entries)},
   budget: [range(0; $bu | length) as $i | $bu[$i] | judge($i; $walls.budget[$i])],
   control: [range(0; $aa | length) as $i | $aa[$i] | judge($i; $walls.control[$i])
	| . + {agree: ([dirs[] as $d | agree($e; $aa[$i]; $d)] | all)}],
   load: $load,
   busy: [range(0; $bz | length) as $i | $bz[$i] | judge($i; $walls.busy[$i])],
   agreement: [range(1; $bu | length) as $i
	| {runs: [$i, $i + 1], agree: ([dirs[] as $d | agree($bu[$i - 1]; $bu[$i]; $d)] | all)}]}
| . + {agree_count: ([.agreement[] | select(.agree)] | length), pairs: (.agreement | length),
	 # budget runs whose pick is the exhaustive pick or tied with it, in
	 # both directions
	 match_count: ([.budget[] | select([.picks[].match | IN("same", "tied")] | all)] | length),
	 # runs within budget + 10%
	 within_count: ([.budget[] | select(.over != null and .over <= 1.1)] | length),
	 busy_within_count: ([.busy[] | select(.over != null and .over <= 1.1)] | length)}
| if $k == null then . else
	. + {known_count: ([.budget[] | select(in_best)] | length),
	     busy_known_count: ([.busy[] | select(in_best)] | length),
	     control_known_count: ([.control[] | select(in_best)] | length),
	     best_set: ($k.best | map_values({gbs, set, below}))} end
