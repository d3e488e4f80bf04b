# ds-summary.jq - results.json of tests/bench/tswap-bench-deepspeed from its
# runs.jsonl (slurped) and meta.json ($meta).  Per row: each side's median
# GB/s and CPU s/GB, and the paired ratios A/B (pair n: A's run n over B's
# run n) with their median and a distribution-free 95% confidence interval
# for that median: the order statistics r(k), r(n+1-k) where k is the
# largest with P(Binomial(n, 1/2) < k) <= 0.025 (none for n < 6).

def median: sort | if length == 0 then null
	elif length % 2 == 1 then .[length / 2 | floor]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;

# k of the interval for n pairs (0: no interval at this n).
def ci_k($n):
	[foreach range(0; $n + 1) as $i ({c: 0, p: pow(0.5; $n)};
		{c: (.c + .p), p: (.p * ($n - $i) / ($i + 1))}; .c)]
	| [range(0; $n) as $j | select(.[$j] <= 0.025) | $j + 1] | max // 0;

def ratio_stats:
	(map(select(. != null)) | sort) as $r | ($r | length) as $n | ci_k($n) as $k
	| {n: $n, median: ($r | median),
	   ci95: (if $k > 0 then [$r[$k - 1], $r[$n - $k]] else null end)};

def cpu_per_gb($null):
	if (.bytes - $null.bytes) > 0 and $null != null
	then ((.cpu_ms - $null.cpu_ms) / 1000) / ((.bytes - $null.bytes) / 1e9)
	else null end;

def per_gb($n): if .bytes > 0 then $n / (.bytes / 1e9) else null end;

{meta: $meta[0],
 rows: (group_by(.row) | map(
	. as $all | $all[0].row as $row
	| ([$all[] | select(.kind == "timed") | .side] | unique) as $sides
	| (if ($sides | index("ds2")) then "ds2" else "tswap" end) as $a
	| [$a, "ds"] as $ab
	| ($ab | map(. as $s | [$all[] | select(.kind == "null" and .side == $s)][0])) as $nulls
	| ($ab | to_entries | map(.key as $i | .value as $s
		| [$all[] | select(.kind == "timed" and .side == $s)
		   | .cpu_s_per_gb = cpu_per_gb($nulls[$i])] | sort_by(.run))) as $runs
	| ($ab | map(. as $s | [$all[] | select(.kind == "shape" and .side == $s)][0]
		| if . == null then null else
		  {submits_per_gb: per_gb(.submits), waits_per_gb: per_gb(.waits), hist: .hist,
		   bytes: .bytes} end)) as $shape
	| {row: $row, a: $a, b: "ds",
	   bytes_ok: ([$all[] | select(.kind == "bytes") | .ok][0] // "not checked"),
	   gbs: {a: ($runs[0] | map(.gbs) | median), b: ($runs[1] | map(.gbs) | median)},
	   # KiB per device request of the timed runs (none on tmpfs).
	   req_kib: ($runs | map(map(select((.dev_reqs // 0) > 0) | .dev_sectors / 2 / .dev_reqs)
		| median) | {a: .[0], b: .[1]}),
	   cpu_s_per_gb: {a: ($runs[0] | map(.cpu_s_per_gb) | median),
			  b: ($runs[1] | map(.cpu_s_per_gb) | median)},
	   ratio_gbs: ([range(0; [$runs[0], $runs[1]] | map(length) | min) as $i
			| if $runs[1][$i].gbs > 0 then $runs[0][$i].gbs / $runs[1][$i].gbs else null end]
			| ratio_stats),
	   ratio_cpu: ([range(0; [$runs[0], $runs[1]] | map(length) | min) as $i
			| if ($runs[1][$i].cpu_s_per_gb // 0) > 0 and $runs[0][$i].cpu_s_per_gb != null
			  then $runs[0][$i].cpu_s_per_gb / $runs[1][$i].cpu_s_per_gb else null end]
			| ratio_stats),
	   shape: {a: $shape[0], b: $shape[1],
		   same: ($shape[0] != null and $shape[1] != null
			  and $shape[0].hist == $shape[1].hist
			  and $shape[0].submits_per_gb == $shape[1].submits_per_gb
			  and ((($shape[0].waits_per_gb - $shape[1].waits_per_gb) | fabs)
			       <= 0.01 * $shape[1].waits_per_gb))}}))}
