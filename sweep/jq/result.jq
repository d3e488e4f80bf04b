# result.jq - One run of a point: fio JSON ($fio), tswap_stats ($stats) and
# the plan line (--arg/--argjson) into result.json. $ranks: the point's
# ranks; $targets: the targets (rank R uses target R mod their number).
# A point of several handles (ranks, readwrite: one fio job each, job name
# KEY.rankR[.read|.write]) also gets handles (per job), slowest_rank_gbs,
# read_gbs, write_gbs and targets (GB/s per target). $bwlog: bwlog.sh
# bwlog_summary of the point's bandwidth logs (null without). steady: fio's
# steadystate object of every job says attained (true), some job's does not
# (false), no job has one (null: fixed runtime); steady_s: the measured
# seconds (after ramp_time) until fio declared steady state and ended the
# job (its job_runtime; the longest job), null unless steady. Used by
# results.sh result_json.
($fio[0] // null) as $f
| ($stats[0] // null) as $st
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
	 gbs: (($d | sum(.bw_bytes)) / 1e9),
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
	   | (if ($ss | length) == 0 then null else ($ss | all(.attained == 1)) end) as $steady
	   | {steady: $steady,
	      steady_s: (if $steady == true then ([$f.jobs[] | .job_runtime // 0] | max) / 1000 else null end),
	      steady_criterion: ($ss[0].ss // null)})
	+ (($bwlog[0] // null) as $b
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
