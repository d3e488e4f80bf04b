# fleet-meta-report.jq - report.md's "What each host is" section from
# fleet.json (input): each host's device, link, queue, filesystem and host
# (jq/fleet-meta.jq's fields), and the slow hosts grouped by how they
# differ from the fleet's majority. Used by fleet-report.sh
# write_fleet_report.
def v: if . == null then "-" else tostring end;
def md: tostring | gsub("\\|"; "\\|") | gsub("\n"; " ");
def gib: if . == null then "-" else "\(. / 1073741824 * 10 | round / 10) GiB" end;
"## What each host is",
"",
"Read on each host by the target probe (fio exec_prerun, no SSH); all of it is in fleet.json (hosts[].meta, as meta.json of a local run) and in preflight/ID/meta.json. **bold**: differs from the fleet's majority.",
"",
"| host | device | model / firmware | capacity | block sizes | PCIe (max) | NUMA | scheduler, nr_requests, max_sectors_kb | filesystem | kernel | CPUs, memory | fio |",
"|---|---|---|---|---|---|---|---|---|---|---|---|",
(.hosts[] | . as $h | .fields as $f | .meta as $m
 | ([.differences[]?.field]) as $d
 | def b($k; s): if ($d | index($k)) then "**\(s)**" else s end;
 if $m.collected == false then "| \(.label | md) | \($m.note | md) | | | | | | | | | | |"
 else
   "| \(.label | md) | `\($m.device.path // "-" | md)`\(if $m.device.note then " (\($m.device.note | md))" else "" end)"
   + " | \(b("model"; $f.model | v | md)) / \(b("firmware"; $f.firmware | v | md))"
   + " | \(b("capacity_bytes"; $f.capacity_bytes | gib))"
   + " | \(b("logical_block_size"; $f.logical_block_size | v))/\(b("physical_block_size"; $f.physical_block_size | v)) B"
   + " | \(if $f.pcie_speed then "\(b("pcie_speed"; $f.pcie_speed)) \(b("pcie_width"; "x\($f.pcie_width)")) (\($f.pcie_max_speed | v) x\($f.pcie_max_width | v))" else ($m.pcie.note // "-" | md) end)"
   + " | \(b("numa_node"; $f.numa_node | v))"
   + " | \(b("scheduler"; $f.scheduler | v)), \(b("nr_requests"; $f.nr_requests | v)), \(b("max_sectors_kb"; $f.max_sectors_kb | v))"
   + " | \(if $f.fs_type then "\(b("fs_type"; $f.fs_type)) on `\($m.target.filesystem.source | v | md)`" else ($m.target.filesystem.note // "block device" | md) end)"
   + " | \(b("kernel"; $f.kernel | v | md))"
   + " | \(b("cpus"; $f.cpus | v)) x \(b("cpu_model"; $f.cpu_model | v | md)), \(b("memory_bytes"; $f.memory_bytes | gib))"
   + " | \(b("fio"; $f.fio | v | md)) |"
 end),
"",
"### Slow hosts, by how they differ from the fleet",
"",
(if (.slow_groups | length) == 0 then "No host is below the bar or an outlier."
 else "Hosts below the bar or outliers, grouped by each recorded field in which they differ from the majority of the hosts with metadata (a field without a majority is not compared):", "",
      (.slow_groups[] | "- \(.text | md)") end),
""
