# budget-prune.jq - The end of a pruning round of a --budget run: which
# points go on. Input: the round's result.json objects (jq -s). $plan: the
# plan (plan.jq); $keep: {CKEY: N}, the points each group keeps (groups
# not in $keep keep all); $noise: the relative noise of one run beyond
# its op count (a fraction, state.sh CV_FLAG).
#
# A pruning round has one short run per point, so its GB/s has no
# interval of repeats. Its band is what one run can tell apart: fio
# counts whole tensor-swap operations (bs = the tensor), so a run that
# completed n of them per handle is uncertain by one of them, 1/n, plus
# $noise: GB/s x (1 +- (handles / ops + $noise)). On the deepspeed grid
# (400 MiB tensors) a 1 s run completes about 6 per handle: +-22%.
#
# Order within a group, kept first: the fastest point (the best of the
# round always goes on); then the points whose band overlaps the
# fastest's (tied with it within the round's noise), cheapest first by
# the pick's cost order (pick.jq cost: fewer threads, less pinned
# memory, block submit), as the pick resolves a tie; then the others by
# GB/s; a failed point last. So when the round cannot tell its points
# apart, the cheapest reaches the final round beside the fastest, as the
# exhaustive run's tie-break would choose it; when it can, GB/s decides.
# Nothing else: the trust flags (above the ceiling, CV, not steady) judge
# the final round's runs (pick.jq) against ceilings measured in that
# round; a pruning round has no ceiling.
# Output: {kept: [POINT], pruned: [{point, ckey, gbs, why}]}, why one of
# "slower" (outside the fastest's band), "tied, costlier" (inside it, cut
# by the cost order), "failed". Used by budget.sh.
include "pick";
def ops: if .status != "ok" or (.tensor // 0) <= 0 or .handles == null then null
	else ([.handles[].bytes // 0] | add) / .tensor end;
def band: (.ops) as $n | (.nh // 1) as $h
	| (if $n == null then 0 elif $n <= 0 then 1 else $h / $n end) + $noise;
(reduce $plan[0][] as $p ({}; .[$p.point] = $p)) as $P
| [.[] | . as $r | $P[$r.point] as $p | select($p != null and $p.kind == "tswap")
   | $p + {gbs: (if $r.status == "ok" then $r.gbs else null end),
	   ops: ($r | ops), nh: ([$r.handles // [] | length, 1] | max)}]
| group_by(.ckey)
| map([.[] | select(.gbs != null)] as $ok
      | [.[] | select(.gbs == null)] as $failed
      | ($ok | sort_by([-.gbs] + cost)) as $s
      | ($s[0] // null) as $top
      | (if $top == null then null else $top.gbs * (1 - ($top | band)) end) as $lo
      | [$s[1:][] | . + {tied: (.gbs * (1 + band) >= $lo)}] as $rest
      | ([$top | select(. != null)] + ($rest | map(select(.tied)) | sort_by(cost))
	 + ($rest | map(select(.tied | not))) + $failed) as $order
      | ($keep[.[0].ckey] // length) as $k
      | {kept: [$order[:$k][] | .point],
	 pruned: [$order[$k:][] | {point, ckey, gbs,
		  why: (if .gbs == null then "failed" elif .tied then "tied, costlier" else "slower" end)}]})
| {kept: (map(.kept[]) | sort), pruned: (map(.pruned[]) | sort_by([.ckey, -(.gbs // 0)]))}
