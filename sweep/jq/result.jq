# result.jq - One run of a point: fio JSON ($fio), tswap_stats ($stats) and
# the plan line (--arg/--argjson) into result.json. Used by results.sh
# result_json.
($fio[0] // null) as $f
| ($stats[0] // null) as $st
| (if $f then [$f.jobs[] | .[$rw]] else [] end) as $d
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
   else
	{status: "error",
	 error: (if $err != "" then $err
		 elif ($joberr // 0) != 0 then "fio job error \($joberr)"
		 else "no I/O was done" end)}
   end)
