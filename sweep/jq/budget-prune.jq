# budget-prune.jq - The end of a pruning round of a --budget run: which
# points go on. Input: the round's result.json objects (jq -s). $plan: the
# plan (plan.jq); $keep: {CKEY: N}, the points each group keeps (groups
# not in $keep keep all).
# Order within a group, best first: a point with a result before a failed
# one, then GB/s, then the pick's cost order (pick.jq cost: fewer threads,
# less pinned memory, block submit). Nothing else: the trust flags (above
# the ceiling, CV, not steady) judge the final round's runs, where the
# pick is made (pick.jq), against ceilings measured in that round; a
# pruning round has no ceiling, and its one short run is noise-prone.
# Output: {kept: [POINT], pruned: [{point, ckey, gbs, why}]}. Used by
# budget.sh.
include "pick";
(reduce $plan[0][] as $p ({}; .[$p.point] = $p)) as $P
| [.[] | . as $r | $P[$r.point] as $p | select($p != null and $p.kind == "tswap")
   | $p + {gbs: (if $r.status == "ok" then $r.gbs else null end)}]
| group_by(.ckey)
| map(sort_by([(if .gbs == null then 1 else 0 end), -(.gbs // 0), (if .gbs == null then [] else cost end)])
      | ($keep[.[0].ckey] // length) as $k
      | {kept: [.[:$k][] | .point],
	 pruned: [.[$k:][] | {point, ckey, gbs,
		  why: (if .gbs == null then "failed" else "slower" end)}]})
| {kept: (map(.kept[]) | sort), pruned: (map(.pruned[]) | sort_by([.ckey, -(.gbs // 0)]))}
