# aggregate.jq - Per-point medians, min-max intervals and CV over the runs
# (input: an array of result.json), the ceiling per direction, % of ceiling,
# the flags that make a point untrustworthy, and the picks: best read,
# write, combined, readwrite and libaio (best-aio), each from trustworthy
# points only, with its runner-up, margin, ties and a confidence statement
# (pick.jq, docs/sweep.md "How the pick is made"). $plan: the plan, a
# run's plan.json ({points: [...]}) or its points (plan.jq); $meta: the
# run's meta.json, set as .meta when given (empty: none). Ceilings are
# keyed by ckey (rw, or rw-nN for N ranks); points
# of several handles also get the medians of slowest_rank_gbs, read_gbs,
# write_gbs and per-target GB/s. The best picks compare points of the
# smallest rank count; readwrite points give best.readwrite (by combined
# GB/s) and, when present, best-aio's source. $costtol: the pick's cost
# tolerance (pick.jq pick). Used by results.sh
# aggregate_json (jq -L sweep/jq).
include "pick";
# median: of the values that are known (a fleet's ceiling rows have no
# latencies: fleet-results.jq); null when none is.
def median: map(select(. != null)) | sort | if length == 0 then null
	elif length % 2 == 1 then .[length / 2 | floor]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def cv: if length < 2 then null else
	(add / length) as $m
	| if $m == 0 then null else
	  ((map((. - $m) * (. - $m)) | add) / (length - 1) | sqrt) / $m end end;
# opq: a run's GB/s resolution: fio counts whole tensor-swap operations (bs
# = the tensor), so a run that completed n per handle resolves its GB/s to
# 1/n of it (at most 1); 0 without the byte counts.
def opq: ([.handles // [] | .[].bytes // 0] | add // 0) as $b
	| if (.tensor // 0) <= 0 or $b <= 0 then 0
	  else [([(.handles | length), 1] | max) * .tensor / $b, 1] | min end;
(reduce .[] as $x ({}; .[$x.point] += [$x])) as $by
| [$plan[0] | if type == "object" then .points[] else .[] end | . as $p
   | ($by[$p.point] // []) as $r
   | [$r[] | select(.status == "ok")] as $ok
   | $p + {runs: ($r | length), ok_runs: ($ok | length),
	   status: (if ($ok | length) > 0 and ($ok | length) == ($r | length) then "ok"
		    elif ($ok | length) > 0 then "partial"
		    elif ($r | length) == 0 then "not run" else "error" end),
	   errors: [$r[] | select(.status != "ok") | .error],
	   gbs: ($ok | map(.gbs) | median), cv: ($ok | map(.gbs) | cv),
	   lo: ($ok | map(.gbs) | min), hi: ($ok | map(.gbs) | max),
	   # the interval the pick's tie test uses: the min-max widened by
	   # one tensor op of each run either side (opq): 3 repeats of a
	   # few ops each can miss the count's own step
	   tlo: ($ok | map(.gbs * (1 - opq)) | min), thi: ($ok | map(.gbs * (1 + opq)) | max),
	   opq: ($ok | map(opq) | max),
	   # fio's steady-state detection: true when every ok run attained
	   # it, false when one did not, null in fixed-runtime mode
	   steady: ($ok | map(.steady) | if any(. == false) then false
		    elif length > 0 and all(. == true) then true else null end),
	   steady_s: ($ok | map(.steady_s | select(. != null)) | max),
	   # repeats fio did not find steady but whose last window was
	   # steady within one op (result.jq within_one_op)
	   steady_op_runs: ($ok | map(select((.steady_op_jobs // 0) > 0)) | length),
	   # bandwidth over time (bwlog.sh): some ok run's last third is
	   # more than DROP_PCT % below its first; a warning, not a flag
	   drops: ($ok | map(.drops) | if any(. == true) then true
		   elif any(. == false) then false else null end),
	   drop_pct: ($ok | map(.drop_pct | select(. != null)) | max),
	   ops_per_s: ($ok | map(.ops_per_s) | median),
	   clat_p50_us: ($ok | map(.clat_p50_us) | median),
	   clat_p99_us: ($ok | map(.clat_p99_us) | median),
	   clat_p999_us: ($ok | map(.clat_p999_us) | median),
	   submit_per_gb: ($ok | map(.submit_per_gb | select(. != null)) | median)}
	   + (if $p.ranks > 1 or $p.rw == "readwrite" then
		{slowest_rank_gbs: ($ok | map(.slowest_rank_gbs // empty) | median),
		 read_gbs: ($ok | map(.read_gbs // empty) | median),
		 write_gbs: ($ok | map(.write_gbs // empty) | median),
		 targets: ([$ok[] | .targets // [] | .[]] | group_by(.target)
			   | map({target: .[0].target, gbs: (map(.gbs) | median)}))}
	      else {} end)]
| . as $pts
# The CV limit of a point: a point is "not repeatable" when its CV is above
# $cvflag and above $cvrel x the median CV of the run's other points (less
# repeatable than the machine), or above $cvmax (not a measurement). When
# every point is as noisy (a virtualized host), flagging them all would
# leave no answer: their min-max intervals overlap instead, and the pick
# says tie within noise; a run whose points vary by more than $cvmax (a
# busy host) has no answer (docs/sweep.md). The others' median: the sorted CVs without one copy of
# the point's own (its index by bsearch), so each point costs O(log n).
| ([$pts[] | select(.kind == "tswap") | .cv | select(. != null)] | sort) as $cvs
| ($cvs | length) as $ncv
| def others_median($x):
	($cvs | bsearch($x)) as $k
	| ($ncv - 1) as $m
	| def r($j): if $j < $k then $cvs[$j] else $cvs[$j + 1] end;
	  if $m <= 0 then null
	  elif $m % 2 == 1 then r(($m - 1) / 2)
	  else (r($m / 2 - 1) + r($m / 2)) / 2 end;
  # ... and at least one tensor op of its runs (opq): repeats of n whole
  # ops each cannot agree closer than 1/n
  def cv_limit: [([$cvflag, (.opq // 0)] + (if .cv == null then [] else [others_median(.cv) | select(. != null) | $cvrel * .] end)) | max, $cvmax] | min;
# the ceiling of a pick group: its fastest ceiling point (one fio job, and
# with several, CEILING_JOBS jobs: grid.sh add_ceilings)
{ceiling: ([$pts[] | select(.kind == "ceiling" and .gbs != null) | {key: (.ckey // .rw), value: .gbs}]
	   | group_by(.key) | map({key: .[0].key, value: (map(.value) | max)}) | from_entries)}
| . as $c
| {ceiling: $c.ceiling, cv_median: ($cvs | median),
   points: [$pts[] | select(.kind == "tswap")
	    | (.ckey // .rw) as $ck
	    | cv_limit as $lim
	    | . + {pct_ceiling: (if $c.ceiling[$ck] and .gbs then 100 * .gbs / $c.ceiling[$ck] else null end),
		   cv_limit: $lim,
		   cv_flag: ((.cv // 0) > $lim),
		   above_ceiling: (if $c.ceiling[$ck] and .gbs then .gbs > $cache * $c.ceiling[$ck] else false end)}
	    # fleet-wide medians: the CV is the spread between hosts (judged
	    # by the fleet verdicts as outliers), not repeatability
	    | . + {flags: (flags - (if $cvtrust then [] else ["cv"] end))}
	    | . + {trusted: (.gbs != null and (.flags | length) == 0)}]}
| . as $a
| ($a.points | map(select(.trusted))) as $trusted
# per-handle settings are compared at one rank count: the smallest
| ($trusted | map(.ranks // 1) | min // 1) as $r0
| ($trusted | map(select((.ranks // 1) == $r0))) as $good
# only: a pick with no other trustworthy candidate says how many points of
# its direction are flagged
| def only: if . != null and .confidence == "only" then
	  .rw as $rw | ([$a.points[] | select(.rw == $rw and .gbs != null and (.trusted | not))] | length) as $k
	  | if $k > 0 then .verdict += " (\($k) other \($rw) point(s) flagged: Warnings)" else . end
	  else . end;
  def best(f): ($good | map(select(f)) | pick($costtol) | only) // null;
  def cfg: {backend, tensor, block, qd, submit, window, threads, iodepth};
  # the write of the same settings, by a key (a scan per read is
  # quadratic: seconds per thousand points)
(reduce ($good[] | select(.rw == "write")) as $w ({}; .[$w | cfg | tojson] = $w)) as $W
| ([$good[] | select(.rw == "read") | . as $r
    | $W[$r | cfg | tojson] | select(. != null) as $w
    | ($r | cfg) + {point: ($r.point | sub("^read-"; "")), ok_runs: ([$r.ok_runs, $w.ok_runs] | min),
		    read_gbs: $r.gbs, write_gbs: $w.gbs, sum_gbs: ($r.gbs + $w.gbs),
		    gbs: ($r.gbs + $w.gbs), lo: ($r.lo + $w.lo), hi: ($r.hi + $w.hi),
		    tlo: ($r.tlo + $w.tlo), thi: ($r.thi + $w.thi)}]) as $pairs
| ($pairs | pick($costtol)) as $combined
| ($pairs | map(select(.backend == "libaio"))
   | pick($costtol) | if . then del(.read_gbs, .write_gbs) + {why: "Best libaio read + write GB/s (sum)"} else null end) as $aio_both
# without a pair, the faster of the best libaio read and the best libaio
# write, each picked (and judged) within its direction
| ($good | map(select(.backend == "libaio" and .rw != "readwrite")) | group_by(.rw)
   | map(pick($costtol) | only) | max_by(.gbs)
   | if . then cfg + {point, gbs, lo, hi, tie, tied, runner_up, margin_pct, confidence, verdict, why: "Best libaio \(.rw) GB/s"} else null end) as $aio_one
| ($good | map(select(.backend == "libaio" and .rw == "readwrite")) | pick($costtol)
   | if . then cfg + {point, gbs, lo, hi, tie, tied, runner_up, margin_pct, confidence, verdict, why: "Best libaio readwrite GB/s (a read and a write handle at once, combined)"} else null end) as $aio_mixed
| $a + {trust: {trusted: ($trusted | length), flagged: ([$a.points[] | select(.gbs != null and (.trusted | not))] | length),
		libaio_with_result: ([$a.points[] | select(.backend == "libaio" and .gbs != null)] | length)},
	best: {read: best(.rw == "read"), write: best(.rw == "write"),
	       combined: $combined, readwrite: best(.rw == "readwrite"),
	       aio_source: ($aio_mixed // $aio_both // $aio_one)}}
| if $meta == [] then . else .meta = $meta[0] end
