# pick.jq - The trust flags of a point and the pick among trustworthy
# points, as jq functions (a module: aggregate.jq includes it, jq -L
# sweep/jq). docs/sweep.md "How the pick is made" is the reference.
#
# flags: a point's reasons not to trust it (strings, [] when none):
#   "above ceiling" (GB/s > CACHE_FACTOR x the device ceiling: a cache),
#   "failed" (no ok run), "partial" (some runs failed), "not run",
#   "cv" (CV over repeats above the run's cv_limit, aggregate.jq), "not steady" (fio's steady-state
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
# .thi (the same widened by one tensor op of each run: aggregate.jq; .lo
# and .hi when absent), .ok_runs and the settings: the highest median;
# every candidate whose widened interval overlaps that one's (.thi >=
# top.tlo) is tied with it within noise; the pick is the cheapest (cost)
# of the tied whose median is at least (1 - $tol) x the highest: a cheaper
# config gives up at most $tol of the fastest median (a fraction, 0 to 1;
# state.sh COST_TOL; 0 picks the highest median, 1 the cheapest of the
# whole tie). Adds tie (bool), tied (points, by GB/s), runner_up ({point,
# gbs, lo, hi}: the best other candidate), margin_pct (pick's median over
# the runner-up's, %) and confidence (words). null on an empty array.
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
	| $p + {tie: (($tied | length) > 1),
		tied: [$tied[] | .point],
		runner_up: (if $ru then {point: $ru.point, gbs: $ru.gbs, lo: $ru.lo, hi: $ru.hi} else null end),
		margin_pct: (if $ru then pct($p.gbs; $ru.gbs) else null end),
		confidence: (
		  if $ru == null then "only trustworthy point: nothing to compare it with"
		  elif ($tied | length) > 1 then
			"tie within noise: the min-max intervals of \($tied | length) configs overlap\(if [$tied[] | widened] | any then " (each widened by one tensor op of its runs)" else "" end); picked the cheapest (fewer threads, then less pinned memory, then block submit) of the \($near | length) whose median is within \($tol * 100 | r1)% of the fastest\(if $p.point == $top.point then "" else " (\(pct($p.gbs; $top.gbs) | r1)%)" end)"
		  elif $n < 3 then
			"low confidence: \($n) repeat(s) per point, too few for an interval; its median is \(pct($p.gbs; $ru.gbs) | r1)% above the runner-up (use --repeat 3 or more)"
		  else
			if ($p | widened) or ($ru | widened) then
			"clear: its slowest of \($p.ok_runs) repeats less one tensor op (\($p | tlo | g3) GB/s) beats the runner-up's fastest plus one (\($ru | thi | g3) GB/s); median \(pct($p.gbs; $ru.gbs) | r1)% above it"
			else
			"clear: its slowest of \($p.ok_runs) repeats (\($p.lo | g3) GB/s) beats the runner-up's fastest (\($ru.hi | g3) GB/s); median \(pct($p.gbs; $ru.gbs) | r1)% above it"
			end
		  end)}
	end;
