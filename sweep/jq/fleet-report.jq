# fleet-report.jq - The fleet's report.md from sweep.json, fleet.json ($fl),
# aggregate.json ($agg), the hosts' aggregates ($hagg) and best-aio.json
# ($aio). Used by fleet-report.sh write_fleet_report.
($fl[0]) as $f | ($agg[0]) as $a | ($hagg[0]) as $ha
| def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
  def p0: if . == null then "-" elif . < 10 then (. * 10 | round / 10 | tostring) else (round | tostring) end;
  def p1: if . == null then "-" else (. * 10 | round / 10 | tostring) end;
  def md: tostring | gsub("\\|"; "\\|") | gsub("\n"; " ");
  def sz: if . >= 1073741824 and . % 1073741824 == 0 then "\(. / 1073741824)G"
	  elif . >= 1048576 and . % 1048576 == 0 then "\(. / 1048576)M"
	  elif . >= 1024 and . % 1024 == 0 then "\(. / 1024)K" else tostring end;
  def flagtext: (.flags // []) | if length == 0 then "-" else join(", ") end;
  def flag($h; $d): [$h.checks[] | select(.status == "fail" and (.name | startswith($d)))] | if length > 0 then " !" else "" end;
"# tswap fleet report",
"",
"- controller: `\(.host)` (runs the fio clients), kernel \(.kernel), \(.fio_version), run started \(.created)",
"- hosts: \($f.hosts | length) from `\(.fleet.hosts_file)`, through fio's client mode (`fio --server` on each host); every point runs on all hosts at once",
"- grid: **\(.grid)**\(if .grid_description != "" then " (\(.grid_description))" else "" end), \($a.points | length) point(s) x \(.repeat) repeat(s), " +
  (if .io_size != "" then "\(.io_size) per point" else "\(.runtime) s per point after a \(.ramp) s ramp" end) + ", \(.size) of each target",
"- the bar: " + ([(if $f.min_read_gbs != null then "read >= \($f.min_read_gbs) GB/s" else empty end),
		  (if $f.min_write_gbs != null then "write >= \($f.min_write_gbs) GB/s" else empty end)]
		 | if length == 0 then "none (no --min-read-gbs/--min-write-gbs)" else join(", ") end)
  + "; outliers: hosts more than \($f.outlier_pct)% below the fleet median",
"- GB/s is 10^9 bytes/s. A host's figure is its best point of that direction (the median over repeats); the fleet median is the median of the hosts' figures",
"- device ceiling (fio's own libaio engine, bs=\(.ceiling_bs), iodepth=\(.ceiling_qd), on each host): " + (if .ceiling then "measured, % of ceiling per host below" else "not measured" end),
"- page caches on the hosts are not dropped (reads use O_DIRECT, and fio invalidates the target's cached pages before each job)",
(if $notes != "" then ($notes | split("\n") | map("- note: " + .) | join("\n")) else empty end),
"",
"## Verdict",
"",
($f.summary as $s
 | ([$f.hosts[] | select(.verdict == "FAIL") | .label]) as $fl
 | ([$f.hosts[] | select(.verdict == "ERROR") | .label]) as $el
 | if $s.error > 0 then "**ERROR**: \($s.error) of \($s.hosts) host(s) with errors (\($el | join(", "))); \($s.fail) below the bar\(if $s.fail > 0 then " (\($fl | join(", ")))" else "" end); \($s.pass) pass."
   elif $s.fail > 0 then "**FAIL**: \($s.fail) of \($s.hosts) host(s) below the bar or outliers (\($fl | join(", "))); \($s.pass) pass."
   else "**PASS**: all \($s.hosts) host(s) pass." end),
"",
"## Hosts",
"",
"! marks a figure below the bar or an outlier. % of ceiling: the host's own fio libaio ceiling.",
"",
.ceiling as $ceil
| "| host | verdict | " + ($f.directions | map("\(.) GB/s | % of fleet median" + (if $ceil then " | % of ceiling" else "" end)) | join(" | ")) + " | failed checks and errors |",
"|---|---|" + ($f.directions | map(if $ceil then "---|---|---|" else "---|---|" end) | join("")) + "---|",
($f.hosts[] | . as $h
 | "| \(.label | md) | \(.verdict) | "
   + ($f.directions | map(. as $d | "\($h.best[$d].gbs | g)\(flag($h; $d)) | \($h.pct_of_median[$d] | p0)\(flag($h; $d))"
				     + (if $ceil then " | \($h.best[$d].pct_ceiling | p1)" else "" end)) | join(" | "))
   + " | " + ([($h.errors[] | "\(.reason) (\(.runs) run(s))"), ($h.checks[] | select(.status == "fail") | "\(.name): \(.message)")] | join("; ") | md) + " |"),
"",
"| host | address | hostname | fio | target | engine | hosts-file options |",
"|---|---|---|---|---|---|---|",
($f.hosts[] | "| \(.label | md) | \(.address | md) | \(.hostname // "-" | md) | \(.fio_version // "-" | md) | `\(.target | md)` | `\(.engine | md)` | \(if (.options | length) > 0 then (.options | map("`\(. | md)`") | join(" ")) else "-" end) |"),
"",
"## Fleet",
"",
"| direction | hosts | median GB/s | min GB/s | max GB/s | spread | CV across hosts | outlier bar (median - \($f.outlier_pct)%) | outliers |",
"|---|---|---|---|---|---|---|---|---|",
($f.directions[] as $d | $f.fleet[$d] as $x
 | "| \($d) | \($x.n) | \($x.median | g) | \($x.min | g)\(if $x.min_host then " (\($x.min_host | md))" else "" end) | \($x.max | g)\(if $x.max_host then " (\($x.max_host | md))" else "" end) | \(if $x.spread_pct == null then "-" else "\($x.spread_pct | p1)%" end) | \(if $x.cv == null then "-" else "\($x.cv * 100 | p1)%" end) | \($x.bar | g) | \(if ($x.outliers | length) > 0 then ($x.outliers | map(md) | join(", ")) else "none" end) |"),
"",
"Spread: (max - min) / median. With fewer than two hosts with a result, nothing is an outlier.",
"",
"## Errors",
"",
([$f.hosts[] | . as $h | .errors[] | "- **\($h.label | md)** (\($h.address)): \(.reason | md) (\(.runs) run(s))"]
 | if length == 0 then "None." else .[] end),
"",
"## Points by host",
"",
"GB/s, the median over repeats; fleet: the median over hosts, the coefficient of variation across hosts, and the flags that keep a point from the pick (docs/sweep.md, How the pick is made).",
"",
(if ($f.hosts | length) <= 8 then
   "| point | fleet median | CV across hosts | flags | " + ($f.hosts | map(.label | md) | join(" | ")) + " |",
   "|---|---|---|---|" + ($f.hosts | map("---|") | join("")),
   ($a.points[] as $p
    | "| \($p.point) | \($p.gbs | g) | \(if $p.cv == null then "-" else "\($p.cv * 100 | p1)%" end) | \($p | flagtext) | "
      + ([$ha[] | ([.points[] | select(.point == $p.point)][0]) | if .gbs == null then "\(.status)" else (.gbs | g) end] | join(" | ")) + " |")
 else
   "| point | fleet median | CV across hosts | flags | min | max | hosts ok |",
   "|---|---|---|---|---|---|---|",
   ($a.points[] as $p
    | ([$ha | to_entries[] | {label: $f.hosts[.key].label, gbs: ([.value.points[] | select(.point == $p.point)][0].gbs)} | select(.gbs != null)]) as $v
    | "| \($p.point) | \($p.gbs | g) | \(if $p.cv == null then "-" else "\($p.cv * 100 | p1)%" end) | \($p | flagtext) | \(if ($v | length) > 0 then ($v | min_by(.gbs) | "\(.gbs | g) (\(.label | md))") else "-" end) | \(if ($v | length) > 0 then ($v | max_by(.gbs) | "\(.gbs | g) (\(.label | md))") else "-" end) | \($v | length)/\($f.hosts | length) |")
 end),
"",
"## Best settings by fleet median",
"",
"| | fleet median GB/s | backend | tensor | block | queue depth | submit | window | threads | ops queued |",
"|---|---|---|---|---|---|---|---|---|---|",
(("read", "write") as $d | $a.best[$d]
 | if . then "| best \($d) | \(.gbs | g) | \(.backend) | \(.tensor | sz) | \(.block | sz) | \(.qd) | \(.submit) | \(.window) | \(.threads) | \(.iodepth) |"
   elif any($a.points[]; .rw == $d and .gbs != null) then "| best \($d) | no trustworthy \($d) point: every one is flagged (Points by host) | | | | | | | | |"
   else "| best \($d) | no \($d) point with a result | | | | | | | | |" end),
"",
(if $aio[0].trusted == false then "No trustworthy libaio point (every one is flagged: above the ceiling, failed or not steady): no DeepSpeed aio config."
 elif ($aio[0] | length) == 0 then "No libaio point with a result: no DeepSpeed aio config."
 else "DeepSpeed aio config (best-aio.json), by fleet median: \($a.best.aio_source.why)", "", "```json", ($aio[0] | tostring), "```" end),
""
