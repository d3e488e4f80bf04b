# sweep-compare.jq - make bench-sweep's comparison of budget runs with the
# exhaustive run of the same grid (tests/bench/tswap-bench-sweep). jq -n
# with $ex: [aggregate.json of the exhaustive run]; $bu: the budget runs'
# aggregate.json, in run order; $aa: the control runs' aggregate.json
# (the grid exhaustively again, after the budget runs: the A/A control);
# $walls: {exhaustive: s, budget: [s...], control: [s...]}.
# Per direction (read, write): the exhaustive pick and the highest median
# among its trustworthy points (the "exhaustive best"); per budget run its
# pick, whether it is the exhaustive pick ("same"), one of its tied configs
# ("tied") or neither ("other"), and its GB/s in the exhaustive run as a
# fraction of the exhaustive best (target >= 0.97) and of the exhaustive
# pick (vs_pick: when the exhaustive run resolves a tie by the cost order
# its own pick sits below its best median, and a budget run that finds
# that pick scores its fraction, not 1); per pair of
# consecutive budget runs whether they agree: the same pick, or one's pick
# in the other's tied list, in both directions (target: 4 of 5). Each
# control run is judged as a budget run is, and whether it agrees with the
# first exhaustive run: how far the metric itself reproduces on this
# target (a control that scores below 0.97 says the target's noise is
# wider than the fraction target).
def dirs: ["read", "write"];
def best_gbs($a; $d): [$a.points[] | select(.rw == $d and .trusted) | .gbs] | max;
def gbs_of($a; $p): [$a.points[] | select(.point == $p) | .gbs] | first;
def agree($a; $b; $d): ($a.best[$d]) as $x | ($b.best[$d]) as $y
	| if $x == null or $y == null then false
	  else $x.point == $y.point or ($x.point | IN($y.tied[]?)) or ($y.point | IN($x.tied[]?)) end;
$ex[0] as $e
# judge($i; $w): one run's aggregate (.) against the exhaustive run $e
| def judge($i; $w): . as $b
	| {run: ($i + 1), wall_s: $w, budget_s: $b.budget.seconds?,
	   picks: (dirs | map(. as $d | $b.best[$d].point? as $p
		| {key: $d, value: {point: $p,
			match: (if $p == null or $e.best[$d] == null then "none"
				elif $p == $e.best[$d].point then "same"
				elif ($p | IN($e.best[$d].tied[]?)) then "tied" else "other" end),
			fraction: (if $p == null or best_gbs($e; $d) == null then null
				   else ((gbs_of($e; $p) // 0) / best_gbs($e; $d) * 1000 | round / 1000) end),
			vs_pick: (if $p == null or $e.best[$d] == null then null
				  else ((gbs_of($e; $p) // 0) / $e.best[$d].gbs * 1000 | round / 1000) end)}})
		| from_entries)};
{exhaustive: {wall_s: $walls.exhaustive,
		picks: (dirs | map({key: ., value: {point: $e.best[.].point?, gbs: $e.best[.].gbs?,
			best_gbs: best_gbs($e; .), tied: ($e.best[.].tied? // []),
			fraction: (if $e.best[.] == null then null else ($e.best[.].gbs / best_gbs($e; .) * 1000 | round / 1000) end)}})
			| from_entries)},
   budget: [range(0; $bu | length) as $i | $bu[$i] | judge($i; $walls.budget[$i])],
   control: [range(0; $aa | length) as $i | $aa[$i] | judge($i; $walls.control[$i])
	| . + {agree: ([dirs[] as $d | agree($e; $aa[$i]; $d)] | all)}],
   agreement: [range(1; $bu | length) as $i
	| {runs: [$i, $i + 1], agree: ([dirs[] as $d | agree($bu[$i - 1]; $bu[$i]; $d)] | all)}]}
| . + {agree_count: ([.agreement[] | select(.agree)] | length), pairs: (.agreement | length),
	 # budget runs whose pick is the exhaustive pick or tied with it, in
	 # both directions
	 match_count: ([.budget[] | select([.picks[].match | IN("same", "tied")] | all)] | length)}
