# result.jq - One run of a point (jq -n -R; results.sh result_json): fio's
# JSON ($fiotext: the text; not an object with a jobs array, as when a
# killed fio left it half written, counts as absent: "fio gave no JSON"),
# tswap_stats ($stats: the file's text; likewise absent unless an object),
# fio's exit status ($rc) and last stderr lines ($errtail: ": TEXT", or
# empty), and the plan line (--arg/--argjson) into result.json, then
# its progress line (progress_line, below). $ranks:
# the point's ranks; $targets: the targets (rank R uses target R mod their
# number).
# A point of several handles (ranks, readwrite: one fio job each, job name
# KEY.rankR[.read|.write]) also gets handles (per job), slowest_rank_gbs,
# read_gbs, write_gbs and targets (GB/s per target). The input lines: the
# point's bandwidth logs; bw_log is their summary (bwlog-defs.jq, with
# $ms, $min, $lim as in bwlog.sh; null without). steady: fio's
# steadystate object of every job says attained (true), some job's does not
# (false), no job has one (null: fixed runtime); steady_s: the measured
# seconds (after ramp_time) until fio declared steady state and ended the
# job (its job_runtime; the longest job), null unless steady; gbs is then
# the steady window's mean when every job attained it. A job fio
# did not find steady is steady within one op (steady_op_jobs counts them)
# when its last window's slope is no more than a one-unit step across the
# window makes (within_one_op, below). Used by results.sh result_json.
# within_one_op: a steadystate object's last window (.data.iops: the
# last ss_dur one-second samples, in I/O units a second) shows no trend
# finer than one unit. fio's samples count whole I/O units, and one unit
# is one tensor-swap op (bs = the tensor): 400 MiB at 2.5 GB/s is 6 a
# second, so a steady rate of 5.6 a second samples as 6,6,6,5,5, whose
# least-squares slope (-0.3 unit/s) is 5.3% of the mean, and bw_slope:2%
# calls it changing. The window is steady within one op when |slope| (units
# a second) is at most the slope of a one-unit step at the worst place in
# the window (0.3 for 5 samples, 0.15 for 10): a trend fio could only see
# by counting fractions of an op. A trend of more than one unit across
# the window (8,7,6,5,4: slope 1) stays not steady.
include "bwlog-defs";
def within_one_op:
	(.data.iops // []) as $y | ($y | length) as $n
	| if $n < 3 or $n != (.duration // $n) then false else
	  (($n - 1) / 2) as $xm
	  | ([range(0; $n) | (. - $xm) * (. - $xm)] | add) as $sxx
	  | ($y | add / $n) as $ym
	  | ([range(0; $n) | (. - $xm) * ($y[.] - $ym)] | add / $sxx) as $slope
	  | ([range(1; $n) as $k | [range($k; $n) | . - $xm] | add / $sxx] | max) as $step
	  | ($slope | fabs) <= $step + 1e-9 end;
# progress_line: a result's progress text, one line: "GB/s<TAB>op/s  p99"
# or "ERROR: error" (results.sh result_json writes it to progress.txt).
def progress_line:
	if .status == "ok"
	then "\(.gbs * 1000 | round / 1000) GB/s\t\(.ops_per_s * 10 | round / 10) op/s  p99 \(.clat_p99_us / 1000 * 100 | round / 100) ms"
	else "ERROR: \(.error)" | gsub("[\n\t]"; " ") end;
($fiotext | try fromjson catch null
 | if type == "object" and (.jobs | type) == "array" then . else null end) as $f
| (if $f == null then "fio gave no JSON (exit \($rc))" elif $rc != 0 then "fio exited \($rc)" else "" end
   | if . != "" then . + $errtail else . end) as $err
| ([inputs] | bw_summary_text($ms; $min; $lim) | fromjson) as $bwlog
| ($stats | try fromjson catch null | if type == "object" then . else null end) as $st
# each job's own direction (a readwrite point has read and write jobs)
| def jrw: (.["job options"].rw // $rw) | if . == "read" or . == "write" then . else $rw end;
(if $f then [$f.jobs[] | .[jrw]] else [] end) as $d
| (if $f then ([$f.jobs[] | .error] | max) else null end) as $joberr
| def sum(f): reduce .[] as $x (0; . + ($x | f // 0));
  def pct(p): ($d | map(.clat_ns.percentile[p] // 0) | max) / 1000;
  def wcpu(k): if $st and ($st.elapsed_s // 0) > 0
	       then 100 * ($st["worker_cpu_\(k)_s"] // 0) / $st.elapsed_s else 0 end;
{runkey: $runkey, point: $point, repeat: $repeat, kind: $kind, rw: $rw,
 backend: $backend, tensor: $tensor, block: $block, qd: $qd, submit: $submit,
 window: $window, threads: $threads, iodepth: $iodepth, fio_rc: $rc, wall_s: $wall}
+ (if $err == "" and $f and ($joberr // 0) == 0 and ($d | sum(.io_bytes)) > 0 then
	{status: "ok", error: "",
	 # a job fio ended on a steady window: that window's mean
	 # (steadystate.data.bw_mean, B/s), not the run's, which keeps a
	 # drop before it (a write cliff); otherwise the whole run
	 gbs: (if ($f.jobs | all(.steadystate.attained == 1 and .steadystate.data.bw_mean != null))
	       then ($f.jobs | map(.steadystate.data.bw_mean) | add) / 1e9
	       else ($d | sum(.bw_bytes)) / 1e9 end),
	 ops_per_s: ($d | sum(.iops)),
	 clat_p50_us: pct("50.000000"), clat_p99_us: pct("99.000000"),
	 clat_p999_us: pct("99.900000"),
	 # fio counts its job thread only (RUSAGE_THREAD); add the
	 # engine workers from tswap_stats, as % of the job's time
	 usr_cpu: (($f.jobs | map(.usr_cpu) | add / length) + wcpu("usr")),
	 sys_cpu: (($f.jobs | map(.sys_cpu) | add / length) + wcpu("sys")),
	 submit_calls: ($st.submit_calls // null),
	 stats_bytes: ($st.bytes // null),
	 submit_per_gb: (if $st and ($st.bytes // 0) > 0
			 then $st.submit_calls / ($st.bytes / 1e9) else null end),
	 tswap_version: ($st.tswap_version // null),
	 fio_version: ($f["fio version"] // null)}
	+ ([$f.jobs[] | .steadystate // empty] as $ss
	   | (if ($ss | length) == 0 then null else ($ss | all(.attained == 1 or within_one_op)) end) as $steady
	   | {steady: $steady,
	      steady_s: (if $steady == true then ([$f.jobs[] | .job_runtime // 0] | max) / 1000 else null end),
	      steady_criterion: ($ss[0].ss // null),
	      steady_op_jobs: (if $steady == null then null else [$ss[] | select(.attained != 1 and within_one_op)] | length end)})
	+ ($bwlog as $b
	   | {bw_log: $b, drops: (if $b then $b.drops else null end),
	      drop_pct: (if $b then $b.drop_pct else null end)})
	+ ([$f.jobs[] | jrw as $jr
	    | {job: .jobname,
	       rank: ((.jobname | capture("\\.rank(?<r>[0-9]+)(\\.(read|write))?$") | .r | tonumber) // 0),
	       rw: $jr, gbs: (.[$jr].bw_bytes / 1e9), bytes: .[$jr].io_bytes,
	       runtime_ms: .job_runtime}
	    | . + {target: $targets[.rank % ($targets | length)]}] as $h
	   | {ranks: $ranks, handles: $h,
	      slowest_rank_gbs: ($h | group_by(.rank) | map(map(.gbs) | add) | min),
	      read_gbs: ($h | map(select(.rw == "read") | .gbs) | add // 0),
	      write_gbs: ($h | map(select(.rw == "write") | .gbs) | add // 0),
	      targets: ($h | group_by(.target) | map({target: .[0].target, gbs: (map(.gbs) | add)}))})
   else
	{status: "error",
	 error: (if $err != "" then $err
		 elif ($joberr // 0) != 0 then "fio job error \($joberr)"
		 else "no I/O was done" end)}
   end)
# then its progress line, raw (jq -r): the last line of the output
| ., progress_line
