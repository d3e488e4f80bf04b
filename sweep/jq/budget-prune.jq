# budget-prune.jq - The end of a pruning round of a --budget run: which
# points go on. Input: the round's result.json objects (jq -s). $plan: the
# plan (plan.jq); $keep: {CKEY: N}, the points each group keeps (groups
# not in $keep keep all); $ceiling: {CKEY: GB/s} of the ceiling runs
# (may be {}); $cache: CACHE_FACTOR.
# Order within a group, best first: a point with a result before a failed
# one, one within $cache x its ceiling before one above it (a cache: it
# would be flagged, never picked), then GB/s, then the pick's cost order
# (pick.jq cost: fewer threads, less pinned memory, block submit).
# Output: {kept: [POINT], pruned: [{point, ckey, gbs, why}]}. Used by
# budget.sh.
include "pick";
(reduce $plan[0][] as $p ({}; .[$p.point] = $p)) as $P
| [.[] | . as $r | $P[$r.point] as $p | select($p != null and $p.kind == "tswap")
   | $p + {gbs: (if $r.status == "ok" then $r.gbs else null end)}
   | . + {above: (.gbs != null and $ceiling[.ckey] != null and .gbs > $cache * $ceiling[.ckey])}]
| group_by(.ckey)
| map(sort_by([(if .gbs == null then 1 else 0 end), (if .above then 1 else 0 end), -(.gbs // 0), (if .gbs == null then [] else cost end)])
      | ($keep[.[0].ckey] // length) as $k
      | {kept: [.[:$k][] | .point],
	 pruned: [.[$k:][] | {point, ckey, gbs,
		  why: (if .gbs == null then "failed" elif .above then "above the ceiling" else "slower" end)}]})
| {kept: (map(.kept[]) | sort), pruned: (map(.pruned[]) | sort_by([.ckey, -(.gbs // 0)]))}
