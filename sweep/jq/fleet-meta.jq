# fleet-meta.jq - fleet.json (input) with each host's metadata and the
# grouping of slow hosts by how they differ from the fleet's majority; $metas:
# one meta.json per host, in host order (jq/meta.jq, or {collected: false,
# note} when not collected: fleet-meta.sh fleet_metas). Used by
# fleet-report.sh fleet_verdicts.
#
# Adds to each host: meta (its meta.json), fields (the key fields, flat,
# below: what summary.csv carries and what hosts are compared on). Adds to
# each host differences ([{field, value, majority}], null without
# metadata), and to the fleet meta_majority ({field: value} where more than
# half of the hosts with metadata agree) and slow_groups: the hosts below
# the bar or outliers (verdict FAIL) grouped by each way they differ from
# the majority, largest group first (a host may be in several), then those
# that differ in no recorded field, then those without metadata:
#   {hosts: [LABEL...], difference: {field, value, majority} or null,
#    text: "3 of 3 slow hosts: PCIe x2 instead of x4 (a, b, c)"}
# A field the majority does not agree on (or that no host could read) is
# not compared; the serial number and paths never are (they differ by
# nature).

# the key fields of a meta.json (null where absent)
def fields:
  if .collected == false then {} else {
    model: .device.model, firmware: .device.firmware, capacity_bytes: .device.capacity_bytes,
    logical_block_size: .device.logical_block_size, physical_block_size: .device.physical_block_size,
    rotational: .device.rotational, transport: .device.transport,
    pcie_speed: .pcie.current_link_speed, pcie_width: .pcie.current_link_width,
    pcie_max_speed: .pcie.max_link_speed, pcie_max_width: .pcie.max_link_width,
    numa_node: .numa.device_node,
    scheduler: .queue.scheduler, nr_requests: .queue.nr_requests, max_sectors_kb: .queue.max_sectors_kb,
    poll_queues: .queue.nvme_poll_queues,
    fs_type: .target.filesystem.type, fs_options: .target.filesystem.options,
    kernel: .host.kernel, cpu_model: .host.cpu_model, cpus: .host.cpus, memory_bytes: .host.memory_bytes,
    fio: .versions.fio, aio_max_nr: .host.fs_aio_max_nr, io_uring_disabled: .host.kernel_io_uring_disabled
  } end;

def fname: {model: "model", firmware: "firmware", capacity_bytes: "capacity",
	    logical_block_size: "logical block size", physical_block_size: "physical block size",
	    rotational: "rotational", transport: "transport", pcie_speed: "PCIe link speed",
	    pcie_width: "PCIe", pcie_max_speed: "PCIe max link speed", pcie_max_width: "PCIe max width",
	    numa_node: "NUMA node", scheduler: "scheduler", nr_requests: "nr_requests",
	    max_sectors_kb: "max_sectors_kb", poll_queues: "nvme poll_queues", fs_type: "filesystem",
	    fs_options: "mount options", kernel: "kernel", cpu_model: "CPU", cpus: "CPUs",
	    memory_bytes: "memory", fio: "fio", aio_max_nr: "fs.aio-max-nr",
	    io_uring_disabled: "kernel.io_uring_disabled"}[.] // .;

# show($field): a value as the report writes it
def show($f):
  if . == null then "unknown"
  elif ($f == "pcie_width" or $f == "pcie_max_width") then "x\(.)"
  elif ($f == "capacity_bytes" or $f == "memory_bytes") then "\(. / 1073741824 * 10 | round / 10) GiB"
  elif $f == "logical_block_size" or $f == "physical_block_size" then "\(.) B"
  else tostring end;

[$metas[0][] | fields] as $F
| .hosts |= [to_entries[] | .value + {meta: $metas[0][.key], fields: $F[.key]}]
| ([.hosts[] | select(.meta.collected != false)]) as $withmeta
| ($withmeta | length) as $n
| (if $n == 0 then {} else
     reduce ($withmeta[0].fields | keys_unsorted[]) as $k ({};
       ([$withmeta[] | .fields[$k] | select(. != null)] | group_by(tojson) | max_by(length) // []) as $top
       | if ($top | length) * 2 > $n then .[$k] = $top[0] else . end)
   end) as $maj
| .meta_majority = $maj
| .hosts |= map(. as $h | . + {differences: (if .meta.collected == false then null
    else [$maj | to_entries[] | select($h.fields[.key] != .value) | {field: .key, value: $h.fields[.key], majority: .value}] end)})
| ([.hosts[] | select(.verdict == "FAIL")]) as $slow
| ($slow | length) as $ns
| def text($hosts; $what): "\($hosts | length) of \($ns) slow host\(if $ns == 1 then "" else "s" end): \($what) (\($hosts | join(", ")))";
  .slow_groups = (
    ([$slow[] | .label as $l | .differences[]? | {label: $l, d: .}]
     | group_by(.d | [.field, .value] | tojson)
     | map({hosts: map(.label), difference: .[0].d})
     | sort_by([-(.hosts | length), .difference.field])
     | map(.difference as $d | ($d.field) as $f
	   | . + {text: text(.hosts; "\($f | fname) \($d.value | show($f)) instead of \($d.majority | show($f))")}))
    + ([$slow[] | select(.differences == []) | .label] | if length > 0 then
	 [{hosts: ., difference: null, text: text(.; "no difference from the fleet's majority in the recorded fields")}] else [] end)
    + ([$slow[] | select(.differences == null) | .label] | if length > 0 then
	 [{hosts: ., difference: null, text: text(.; "metadata not collected")}] else [] end))
