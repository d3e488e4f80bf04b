# summary-csv.jq - summary.csv rows (one per tswap run and repeat) from
# results.json; $agg: aggregate.json (the ceiling). Used by results.sh
# write_csv.
($agg[0].ceiling) as $c
| def r(n): if . == null then "" else (. * n | round / n) end;
.[] | select(.kind == "tswap")
| [.point, .repeat, .status, .rw, .backend, .tensor, .block, .qd, .submit,
   .window, .threads, .iodepth, (.gbs | r(10000)), (.ops_per_s | r(100)),
   (.clat_p50_us | r(10)), (.clat_p99_us | r(10)), (.clat_p999_us | r(10)),
   (.usr_cpu | r(100)), (.sys_cpu | r(100)), (.submit_per_gb | r(10)),
   ((if (.ranks // 1) == 1 then .rw else "\(.rw)-n\(.ranks)" end) as $ck
    | if $c[$ck] and .gbs then (100 * .gbs / $c[$ck] | r(10)) else null | r(1) end),
   .error] | @csv
