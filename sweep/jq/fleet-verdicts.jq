# fleet-verdicts.jq - fleet.json: each host's figures and checks (run,
# DIR_min_gbs, DIR_vs_fleet), the fleet's median, spread and outliers. Used
# by fleet-report.sh fleet_verdicts.
def median: sort | if length == 0 then null
	elif length % 2 == 1 then .[length / 2 | floor]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def cv: if length < 2 then null else (add / length) as $m
	| if $m == 0 then null else ((map((. - $m) * (. - $m)) | add) / (length - 1) | sqrt) / $m end end;
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
def pct: if . < 10 then (. * 10 | round / 10) else round end | tostring;
def chk($name; $status; $msg): {name: $name, status: $status, message: $msg};
([$plan[0][] | select(.kind == "tswap") | .rw] | unique) as $dirs
| ($cfg[0].fleet.hosts) as $H
| [range(0; $H | length) as $i
   | $H[$i] as $h | $aggs[0][$i] as $a | $res[0][$i] as $r | $pre[$i] as $p
   | $h + {hostname: ($p.hostname // null), fio_version: ($p.fio_version // null),
	   runs: ($r | length), ok_runs: ([$r[] | select(.status == "ok")] | length),
	   # "not run: R (at POINT)" is R, said once per host
	   errors: ([$r[] | select(.status != "ok")
		     | .error | sub("^not run: "; "") | sub("^preflight: "; "") | sub(" [(]at [^)]*[)]$"; "")]
		    | reduce .[] as $e ([]; if any(.[]; .reason == $e) then map(if .reason == $e then .runs += 1 else . end)
					    else . + [{reason: $e, runs: 1}] end)),
	   wall_s: ([$r[] | .wall_s // 0] | add // 0 | . * 1000 | round / 1000),
	   ceiling: $a.ceiling,
	   best: (reduce $dirs[] as $d ({};
		  .[$d] = ([$a.points[] | select(.rw == $d and .gbs != null)] | max_by(.gbs)
			   | if . then {point, gbs, pct_ceiling} else null end)))}] as $hosts
| (reduce $dirs[] as $d ({};
     ([$hosts[] | .best[$d].gbs // empty]) as $v
     | ($v | median) as $m
     | .[$d] = {n: ($v | length), median: $m, min: ($v | min), max: ($v | max), cv: ($v | cv),
		spread_pct: (if $m and $m > 0 then 100 * (($v | max) - ($v | min)) / $m else null end),
		bar: (if $m then $m * (1 - $out / 100) else null end),
		min_host: ([$hosts[] | select(.best[$d].gbs != null)] | min_by(.best[$d].gbs) | .label),
		max_host: ([$hosts[] | select(.best[$d].gbs != null)] | max_by(.best[$d].gbs) | .label)}
     | .[$d] += {outliers: (.[$d] as $f | if $f.n < 2 then [] else
		  [$hosts[] | select(.best[$d].gbs != null and .best[$d].gbs < $f.bar) | .label] end)})) as $fleet
| [$hosts[] | . as $h
   | (if ($h.errors | length) > 0 then " (\($h.errors[0].reason))" else "" end) as $why
   | ([chk("run"; (if $h.runs > 0 and $h.ok_runs == $h.runs then "pass" else "error" end);
	  (if $h.runs == 0 then "no run recorded"
	   elif $h.ok_runs == $h.runs then "all \($h.runs) runs ok"
	   else "\($h.runs - $h.ok_runs) of \($h.runs) runs failed: "
		+ ($h.errors | map("\(.reason) (\(.runs) run(s))") | join("; ")) end))]
      + [$dirs[] as $d | ($h.best[$d].gbs) as $v
	 | ((if $d == "read" then $minr else $minw end) as $min
	    | if $min == "" then empty else ($min | tonumber) as $m
	      | chk("\($d)_min_gbs";
		    (if $v == null then "error" elif $v >= $m then "pass" else "fail" end);
		    (if $v == null then "no successful \($d) point\($why)"
		     elif $v >= $m then "best \($d) \($v | g) GB/s >= \($min) GB/s"
		     else "best \($d) \($v | g) GB/s < \($min) GB/s" end)) end),
	   ($fleet[$d] as $f
	    | chk("\($d)_vs_fleet";
		  (if $v == null then "error" elif $f.n < 2 then "pass" elif $v < $f.bar then "fail" else "pass" end);
		  (if $v == null then "no successful \($d) point\($why)"
		   elif $f.n < 2 then "\($v | g) GB/s; only one host has a \($d) result: nothing to compare with"
		   else "\($v | g) GB/s is \(100 * $v / $f.median | pct)% of the fleet median \($f.median | g) GB/s"
			+ (if $v < $f.bar then ": more than \($out)% below it (outlier)" else "" end) end)))]) as $checks
   | $h + {checks: $checks,
	   verdict: (if any($checks[]; .status == "error") then "ERROR"
		     elif any($checks[]; .status == "fail") then "FAIL" else "PASS" end),
	   pct_of_median: (reduce $dirs[] as $d ({};
		  .[$d] = (if $h.best[$d].gbs != null and ($fleet[$d].median // 0) > 0
			   then 100 * $h.best[$d].gbs / $fleet[$d].median else null end)))}] as $judged
| {directions: $dirs, outlier_pct: $out,
   min_read_gbs: (if $minr == "" then null else ($minr | tonumber) end),
   min_write_gbs: (if $minw == "" then null else ($minw | tonumber) end),
   fleet: $fleet, hosts: $judged,
   summary: {hosts: ($judged | length),
	     pass: ([$judged[] | select(.verdict == "PASS")] | length),
	     fail: ([$judged[] | select(.verdict == "FAIL")] | length),
	     error: ([$judged[] | select(.verdict == "ERROR")] | length)}}
