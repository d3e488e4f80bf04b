# meta-report.jq - report.md's "What was measured" section from meta.json
# (jq/meta.jq). Used by report.sh write_report.
def v: if . == null then "-" else tostring end;
def gib: if . == null then "-" else "\(. / 1073741824 * 10 | round / 10) GiB" end;
"## What was measured",
"",
"| | |",
"|---|---|",
"| target | `\(.target.path)` (\(.target.kind)) |",
(if .target.filesystem then
   (if .target.filesystem.note then "| filesystem | \(.target.filesystem.note) |"
    else "| filesystem | \(.target.filesystem.type) on `\(.target.filesystem.source)`, mounted at `\(.target.filesystem.mountpoint)` (\(.target.filesystem.options)) |" end)
 else empty end),
(if .device.note then "| device | \(.device.note) |"
 else "| device | `\(.device.path)` (\(.device.type) of \(.device.disk)): model \(.device.model | v), firmware \(.device.firmware | v), serial sha256 \(.device.serial_sha256_12 | v), \(.device.capacity_bytes | gib), \(if .device.rotational then "rotational" else "non-rotational" end), transport \(.device.transport | v) |",
      "| block sizes | logical \(.device.logical_block_size) B, physical \(.device.physical_block_size) B |" end),
(if .queue then "| queue | scheduler \(.queue.scheduler | v), nr_requests \(.queue.nr_requests | v), max_sectors_kb \(.queue.max_sectors_kb | v) (hw \(.queue.max_hw_sectors_kb | v)), io_poll \(.queue.io_poll | v), nvme poll_queues \(.queue.nvme_poll_queues | v) |" else empty end),
(if .pcie.current_link_speed then
   "| PCIe | \(.pcie.address): \(.pcie.current_link_speed) x\(.pcie.current_link_width) of max \(.pcie.max_link_speed) x\(.pcie.max_link_width)\(if .pcie.downgraded then " **(below the maximum)**" else "" end) |"
 else "| PCIe | \(.pcie.note) |" end),
"| NUMA | device node \(.numa.device_node | v)\(if .numa.note then " (\(.numa.note))" else "" end); CPUs allowed \(.numa.cpus_allowed | v); nodes online \(.numa.online_nodes | v) |",
(if .nvme.note then "| NVMe | \(.nvme.note) |"
 else "| NVMe | \(.nvme.model) firmware \(.nvme.firmware), MDTS \(.nvme.mdts | v) |" end),
"| host | `\(.host.name)`, kernel \(.host.kernel), \(.host.cpu_model | v) x \(.host.cpus | v) CPUs, \(.host.memory_bytes | gib) memory, fs.aio-max-nr \(.host.fs_aio_max_nr | v), kernel.io_uring_disabled \(.host.kernel_io_uring_disabled | v) |",
"| versions | tswap \(.versions.tswap), \(.versions.fio | v), engine `\(.versions.engine | v)` |",
"",
"All of it is in meta.json (also sweep.json and aggregate.json, key `meta`).",
""
