# pick.jq - The trust flags of a point and the pick among trustworthy
# points, as jq functions (a module: report.jq and summary.jq include it, jq -L
# sweep/jq). docs/sweep.md "How the pick is made" is the reference.
#
# flags: a point's reasons not to trust it (strings, [] when none):
#   "above ceiling" (GB/s > CACHE_FACTOR x the device ceiling: a cache),
#   "failed" (no ok run), "partial" (some runs failed), "not run",
#   "cv" (CV over repeats above the run's cv_limit, tswap.stats.aggregate), "not steady" (fio's steady-state
#   detection did not attain within the runtime in some run).
def flags:
	[ (if .above_ceiling then "above ceiling" else empty end),
	  (if .status == "error" then "failed" elif .status == "partial" then "partial"
	   elif .status == "not run" then "not run" else empty end),
	  (if .cv_flag then "cv" else empty end),
	  (if .steady == false then "not steady" else empty end) ];

# cost: the cost order among tied configs, cheapest first: fewer intra-op
# threads, then less pinned memory per thread (queue depth x block size
# bytes: DeepSpeed pins queue_depth buffers of block_size), then block
# submit before single submit (fewer io_submit calls), then GB/s.
def cost: [.threads, .qd * .block, (if .submit == "block" then 0 else 1 end), -.gbs];

def pct(a; b): if b == null or b == 0 then null else 100 * (a - b) / b end;
def r1: . * 10 | round / 10;
def g3: . * 1000 | round / 1000;

# pick($tol): over an array of trustworthy candidates, each with .point,
# .gbs (median), .lo and .hi (min and max over the ok repeats), .tlo and
# .thi (the same widened by one tensor op of each run: tswap.stats.aggregate; .lo
# and .hi when absent), .ok_runs and the settings: the highest median;
# every candidate whose widened interval overlaps that one's (.thi >=
# top.tlo) is tied with it within noise; the pick is the cheapest (cost)
# of the tied whose median is at least (1 - $tol) x the highest: a cheaper
# config gives up at most $tol of the fastest median (a fraction, 0 to 1;
# state.sh COST_TOL; 0 picks the highest median, 1 the cheapest of the
# whole tie). Adds tie (bool), tied (points, by GB/s), runner_up ({point,
# gbs, lo, hi}: the best other candidate), margin_pct (pick's median over
# the runner-up's, %), confidence ("clear", "tie", "low": under 3 repeats,
# "only": no other candidate) and verdict: one sentence that says either
# that the pick won, by how much, outside the noise, or which configs tie
# and that the pick is the cheapest of them, never both (the report's,
# stdout's and best-aio.json's). null on an empty array.
def names: if length <= 1 then (.[0] // "")
	else (.[:-1] | join(", ")) + " and " + .[-1] end;
def pick($tol):
	if length == 0 then null else
	sort_by(-.gbs) as $s
	| $s[0] as $top
	| def tlo: .tlo // .lo; def thi: .thi // .hi;
	  def widened: tlo < .lo or thi > .hi;
	[$s[] | select(thi >= ($top | tlo))] as $tied
	| [$tied[] | select(.gbs >= (1 - $tol) * $top.gbs)] as $near
	| ($near | sort_by(cost) | .[0]) as $p
	| ([$s[] | select(.point != $p.point)] | .[0]) as $ru
	| ([$p.ok_runs, ($ru.ok_runs // $p.ok_runs)] | min) as $n
	| (if $ru == null then "only" elif ($tied | length) > 1 then "tie" elif $n < 3 then "low" else "clear" end) as $c
	| $p + {tie: (($tied | length) > 1),
		tied: [$tied[] | .point],
		runner_up: (if $ru then {point: $ru.point, gbs: $ru.gbs, lo: $ru.lo, hi: $ru.hi} else null end),
		margin_pct: (if $ru then pct($p.gbs; $ru.gbs) else null end),
		confidence: $c,
		verdict: (
		  if $c == "only" then
			"\($p.point) is the only trustworthy point: nothing to compare it with"
		  elif $c == "tie" then
			"\([$p.point] + [$tied[] | .point | select(. != $p.point)] | names) tie within noise\(if [$tied[] | widened] | any then " (min-max intervals widened by one tensor op)" else "" end); \($p.point) is the cheapest of \(if ($near | length) == ($tied | length) then "them" else "the \($near | length) within \($tol * 100 | r1)% of the fastest median" end)"
		  elif $c == "low" then
			"\($p.point) leads the runner-up \($ru.point) by \(pct($p.gbs; $ru.gbs) | r1)% on \($n) repeat(s) per point: too few to tell a win from a tie (use --repeat 3 or more)"
		  else
			"\($p.point) is the best: \(pct($p.gbs; $ru.gbs) | r1)% above the runner-up \($ru.point), outside the noise (its slowest of \($p.ok_runs) repeats\(if ($p | widened) or ($ru | widened) then " less one tensor op, \($p | tlo | g3) GB/s, beats the runner-up's fastest plus one, \($ru | thi | g3) GB/s" else ", \($p.lo | g3) GB/s, beats the runner-up's fastest, \($ru.hi | g3) GB/s" end))"
		  end)}
	end;

# none_why($d): over aggregate.json's .points, why direction $d ("read",
# "write") has no pick, with what to do, in one line; null when it has
# points of neither kind. Counts the flags of its points with a result.
def none_why($d):
	[(.points // [])[] | select(.rw == $d)] as $all
	| [$all[] | select(.gbs != null)] as $r
	| if ($all | length) == 0 then null
	  elif ($r | length) == 0 and all($all[]; .status == "not run") then
		"no \($d) point ran" + (if any($all[]; .errors == ["the budget ran out before it ran"]) then ": the budget ran out first (Budget)" else "" end)
	  elif ($r | length) == 0 then "no \($d) point succeeded: see their errors (report.md, points/*/result.json)"
	  else
	    ([$r[] | .flags[]] | group_by(.) | map({f: .[0], n: length}) | sort_by(-.n)) as $c
	    | "all \($r | length) \($d) points with a result are flagged (\($c | map("\(.n) \(.f)") | join(", "))): "
	      + ({"cv": "not repeatable; rerun with a longer --runtime (10 s or more) on an idle machine",
		  "above ceiling": "a cache is serving them; use a target larger than memory, or a block device",
		  "not steady": "fio's steady state did not attain; rerun with a longer --runtime",
		  "failed": "see their errors (report.md, points/*/result.json)", "partial": "some runs failed; see their errors (report.md, points/*/result.json)",
		  "not run": "rerun with --resume"}[$c[0].f] // "see Warnings")
	  end;
