# fleet-csv.jq - The fleet's summary.csv rows from results.json; $fl:
# fleet.json (each host's ceiling and metadata fields); $meta: the names of
# the metadata columns, comma-separated (fields of jq/fleet-meta.jq, and
# metadata_note: why they are empty). Used by fleet-report.sh write_csv_fleet.
($fl[0].hosts) as $H
| def r(n): if . == null then "" else (. * n | round / n) end;
($meta | split(",")) as $M
| .[] | select(.kind == "tswap") | ($H[.host_index].ceiling // {}) as $c | $H[.host_index] as $h
| [.host, .address, .point, .repeat, .status, .rw, .backend, .tensor, .block, .qd, .submit,
   .window, .threads, .iodepth, (.gbs | r(10000)), (.ops_per_s | r(100)),
   (.clat_p50_us | r(10)), (.clat_p99_us | r(10)), (.clat_p999_us | r(10)),
   (.usr_cpu | r(100)), (.sys_cpu | r(100)), (.submit_per_gb | r(10)),
   (if $c[.rw] and .gbs then (100 * .gbs / $c[.rw] | r(10)) else null | r(1) end),
   .error]
  + [$M[] | if . == "metadata_note" then ($h.meta.note // null) else ($h.fields[.] // null) end] | @csv
