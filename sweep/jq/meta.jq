# meta.jq - meta.json: what was measured, from the JSON of lsblk -J ($blk),
# findmnt -J ($fs), nvme id-ctrl -o json ($nvme, null without nvme-cli or
# an NVMe device), lscpu -J ($lscpu), sysfs values ($sysfs, strings, "" when
# absent) and --arg strings. Used by meta.sh meta_from_kv, which passes the
# collector's text: $fs_text, $blk_text, $nvme_text, $lscpu_text (text
# that is not one JSON object counts as absent: {}, $nvme null) and
# $sysfs_lines ("name<TAB>value" a line).
#
# Every field is present; a value that could not be read is null and a
# "note" next to it says why (not an NVMe device, no PCIe link, ...).
# Units: bytes, KiB where the sysfs name says _kb; link speeds as sysfs
# spells them ("16.0 GT/s PCIe").
def object_or($absent): if . == "" then $absent
	else (try fromjson catch $absent) | if type == "object" then . else $absent end end;
($fs_text | object_or({})) as $fs
| ($blk_text | object_or({})) as $blk
| ($nvme_text | object_or(null)) as $nvme
| ($lscpu_text | object_or({})) as $lscpu
| ([$sysfs_lines | split("\n")[] | select(length > 0) | split("\t") | {(.[0]): (.[1] // "")}] | add // {}) as $sysfs
| def num: if . == null or . == "" then null else (tonumber? // null) end;
def str: if . == null or . == "" then null else . end;
def lscpu($f): [$lscpu.lscpu[]? | select(.field == $f) | .data][0] // null;
($blk.blockdevices[0] // null) as $b
| ($fs.filesystems[0] // null) as $m
| ($sysfs["pci.address"] | str) as $pci
| {
  target: {
    path: $target,
    kind: $kind,
    filesystem: (if $kind == "block" then null
		 elif $m == null then {note: "findmnt found no filesystem"}
		 else {mountpoint: $m.target, type: $m.fstype, options: $m.options, source: $m.source} end)
  },
  device: (if $b == null then
	     {note: (if $kind == "block" then "lsblk could not read \($dev)"
		     else "the filesystem is not on a block device (\($m.source // "unknown"))" end)}
	   else {
	     path: $b.path, name: $b.kname, type: $b.type,
	     disk: (if $b.type == "part" then $b.pkname else $b.kname end),
	     model: ($nvme.mn // $b.model | str | if . then gsub("^\\s+|\\s+$"; "") else . end),
	     firmware: ($nvme.fr // $b.rev | str | if . then gsub("^\\s+|\\s+$"; "") else . end),
	     serial_sha256_12: ($serial_hash | str),
	     capacity_bytes: $b.size,
	     logical_block_size: $b["log-sec"], physical_block_size: $b["phy-sec"],
	     rotational: $b.rota, transport: $b.tran
	   } end),
  queue: (if $b == null then null else {
	    scheduler: $b.sched, nr_requests: $b["rq-size"],
	    max_sectors_kb: ($sysfs["queue.max_sectors_kb"] | num),
	    max_hw_sectors_kb: ($sysfs["queue.max_hw_sectors_kb"] | num),
	    io_poll: ($sysfs["queue.io_poll"] | num),
	    dma_alignment: ($sysfs["queue.dma_alignment"] | num),
	    nvme_poll_queues: ($sysfs.poll_queues | num)
	  } end),
  pcie: (if $pci == null then
	   {note: (if $b == null then "no block device" else "no PCI device above \($b.kname) (loop, virtual or non-PCI device)" end)}
	 else {
	   address: $pci,
	   current_link_speed: ($sysfs["pci.current_link_speed"] | str),
	   current_link_width: ($sysfs["pci.current_link_width"] | num),
	   max_link_speed: ($sysfs["pci.max_link_speed"] | str),
	   max_link_width: ($sysfs["pci.max_link_width"] | num)
	 } + (if ($sysfs["pci.current_link_speed"] | str) == null
	      then {note: "\($pci) has no PCIe link attributes (conventional PCI, e.g. a virtio disk)"}
	      else {downgraded: (($sysfs["pci.current_link_speed"] != $sysfs["pci.max_link_speed"])
				 or ($sysfs["pci.current_link_width"] != $sysfs["pci.max_link_width"]))} end)
	 end),
  numa: ({
    device_node: ($sysfs["pci.numa_node"] | num | if . == null or . < 0 then null else . end),
    cpus_allowed: ($cpus_allowed | str),
    online_nodes: ($online_nodes | str)
  } + (if ($sysfs["pci.numa_node"] | num) == null or ($sysfs["pci.numa_node"] | num) < 0
       then {note: "the device has no NUMA node (single node, or no PCI device)"} else {} end)),
  nvme: (if $nvme == null then
	   {note: (if ($b.kname // "" | test("^nvme")) then "nvme-cli is not installed (nvme id-ctrl)" else "not an NVMe device" end)}
	 else {model: ($nvme.mn | gsub("^\\s+|\\s+$"; "")), firmware: ($nvme.fr | gsub("^\\s+|\\s+$"; "")),
	       serial_sha256_12: ($serial_hash | str), vid: $nvme.vid, mdts: $nvme.mdts,
	       nn: $nvme.nn, sqes: $nvme.sqes, cqes: $nvme.cqes} end),
  host: {
    name: $host, kernel: $kernel,
    cpu_model: lscpu("Model name:"), cpus: (lscpu("CPU(s):") | num),
    numa_nodes: (lscpu("NUMA node(s):") | num),
    memory_bytes: ($memtotal | num),
    fs_aio_max_nr: ($aio_max_nr | num),
    kernel_io_uring_disabled: ($io_uring_disabled | num)
  },
  versions: {tswap: $tswap, fio: ($fio | str), engine: ($engine | str), nvme_cli: ($nvme_cli | str)}
}
