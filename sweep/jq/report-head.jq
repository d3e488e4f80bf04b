# report-head.jq - report.md's header (after the title and the pick lines
# of report-pick.jq) and best-settings table from sweep.json; $agg:
# aggregate.json. Used by report.sh write_report.
($agg[0]) as $a
| def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
  def p1: if . == null then "-" else (. * 10 | round / 10 | tostring) end;
  def sz: if . >= 1073741824 and . % 1073741824 == 0 then "\(. / 1073741824)G"
	  elif . >= 1048576 and . % 1048576 == 0 then "\(. / 1048576)M"
	  elif . >= 1024 and . % 1024 == 0 then "\(. / 1024)K" else tostring end;
  def pc: (.pct_ceiling | p1) + (if .above_ceiling then " (above the ceiling: see Warnings)" else "" end);
  def row: "| \(.backend) | \(.tensor | sz) | \(.block | sz) | \(.qd) | \(.submit) | \(.window) | \(.threads) | \(.iodepth) |";
"- host: `\(.host)`, kernel \(.kernel), \(.fio_version), run started \(.created)",
"- target: `\(.target)` (\(.target_kind)), \(.size) used",
"- grid: **\(.grid)**\(if .grid_description != "" then " (\(.grid_description))" else "" end), \($a.points | length) points x \(.repeat) repeat(s), " +
  (if .io_size != "" then "\(.io_size) per point" else "\(.runtime) s per point after a \(.ramp) s ramp" end),
"- GB/s is 10^9 bytes/s, the median over repeats; op/s counts tensor-swap operations (fio IOPS at bs = tensor size)",
"- device ceiling (fio's own libaio engine, bs=\(.ceiling_bs), iodepth=\(.ceiling_qd)\(if (.ceiling_jobs // 1) > 1 then " in 1 job and split over \(.ceiling_jobs) jobs (as many as the most parallel point has threads), the faster" else "" end): as many bytes in flight as the deepest point, same target): " +
  (if .ceiling then "read \($a.ceiling.read | g) GB/s, write \($a.ceiling.write | g) GB/s" else "not measured (--no-ceiling)" end),
(if $dropped == 1 then "- page cache: dropped (sync; echo 3 > /proc/sys/vm/drop_caches) before every read point" else empty end),
(if $notes != "" then ($notes | split("\n") | map("- note: " + .) | join("\n")) else empty end),
"",
"## Best settings",
"",
"| | GB/s | % of ceiling | backend | tensor | block | queue depth | submit | window | threads | ops queued |",
"|---|---|---|---|---|---|---|---|---|---|---|",
(if $a.best.read then "| best read | \($a.best.read.gbs | g) | \($a.best.read | pc) \($a.best.read | row)" else "| best read | no trustworthy read point (none succeeded, or all are flagged: Warnings) | | | | | | | | | |" end),
(if $a.best.write then "| best write | \($a.best.write.gbs | g) | \($a.best.write | pc) \($a.best.write | row)" else "| best write | no trustworthy write point (none succeeded, or all are flagged: Warnings) | | | | | | | | | |" end),
(if $a.best.combined then "| best combined | \($a.best.combined.sum_gbs | g) = \($a.best.combined.read_gbs | g) read + \($a.best.combined.write_gbs | g) write | - \($a.best.combined | row)" else "| best combined | needs a read and a write of the same settings | | | | | | | | | |" end),
"",
"Best combined ranks settings by the **sum** of read and write GB/s, as DeepSpeed's ds_nvme_tune does; a job that mostly reads (inference weight streaming) should take the best read instead.",
""
