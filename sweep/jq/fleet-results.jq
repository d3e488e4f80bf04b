# fleet-results.jq - Each host's aggregate (input, jq -s) as one run per
# host and point, for the fleet's aggregate.json; $plan: the plan. Used by
# fleet-report.sh collect_fleet.
[to_entries[] | .key as $i | .value as $a
 | ($a.points | map({key: .point, value: .}) | from_entries) as $P
 | $plan[0][] | . as $p
 | (if $p.kind == "ceiling" then {gbs: $a.ceiling[$p.rw]} else ($P[$p.point] // {}) end) as $x
 | $p + {runkey: "\($p.point).h\($i + 1)", repeat: ($i + 1),
	 status: (if $x.gbs != null then "ok" else "error" end),
	 error: (($x.errors // []) | unique | join("; ")),
	 gbs: $x.gbs, ops_per_s: $x.ops_per_s, clat_p50_us: $x.clat_p50_us,
	 clat_p99_us: $x.clat_p99_us, clat_p999_us: $x.clat_p999_us,
	 submit_per_gb: $x.submit_per_gb}]
