# check.jq - tswap-check's checks of a target's storage stack, from
# lib/meta-collect.sh's "key<TAB>value" lines (raw input, jq -R -n) and the
# aio settings to check against: $bs (block_size, bytes), $qd (queue_depth),
# $threads (intra_op_parallelism), $backend (libaio|io_uring), $target,
# $sysroot ("" for /). Used by tswap-check; the table and JUnit are
# check-table.jq and check-junit.jq.
#
# Output: {target, settings, sysroot, stack, verdict, counts, checks: [{id,
# verdict, value, expected, advice, source}]}; stack: kind, device, disk,
# filesystem, mountpoint, host, kernel, model, firmware, pcie_link,
# numa_node (what fleet-check.jq compares hosts on). verdict: ok, warn, fail, or
# n/a (the check does not apply to this stack: no PCIe link, not NVMe, not
# NVMe-oF, libaio backend); the object's verdict is its worst check's.
# Sizes in fio notation (1m = 1 MiB); values as sysfs spells them.
def kv: reduce (inputs | select(test("\t")) | index("\t") as $i | [.[:$i], .[$i + 1:]]) as $p
	({}; .[$p[0]] = $p[1]);
def str: if . == null or . == "" then null else . end;
def num: str | if . == null then null else (tonumber? // null) end;
# a cpulist ("0-3,8") as CPU numbers
def cpus: str | if . == null then [] else
	[split(",")[] | select(length > 0) | split("-") | map(tonumber)
	 | if length == 2 then range(.[0]; .[1] + 1) else .[0] end] end;
def ranges: reduce .[] as $c ([]; if length > 0 and .[-1][1] == $c - 1 then .[-1][1] = $c else . + [[$c, $c]] end)
	| map(if .[0] == .[1] then "\(.[0])" else "\(.[0])-\(.[1])" end) | join(",");
def sz: if . == null then null
	elif . >= 1073741824 and . % 1073741824 == 0 then "\(. / 1073741824)g"
	elif . >= 1048576 and . % 1048576 == 0 then "\(. / 1048576)m"
	elif . >= 1024 and . % 1024 == 0 then "\(. / 1024)k" else "\(.)" end;
def ceil_div($a; $b): ($a + $b - 1) / $b | floor;
def chk($id; $verdict; $value; $expected; $advice; $source):
	{id: $id, verdict: $verdict, value: ($value | if . == null then null else tostring end),
	 expected: $expected, advice: $advice, source: $source};
def gts: str | if . == null then null else (capture("^(?<n>[0-9.]+) *GT/s").n | tonumber?) end;
def trimmed: if type == "string" then gsub("^\\s+|\\s+$"; "") | str else null end;
def json: str | if . == null then null else (fromjson? // null) end;
def selected: str | if . == null then null
	elif test("\\[") then capture("\\[(?<s>[^]]*)\\]").s else gsub("\\s+"; "") end;

kv as $k
| ($k.disk | str) as $disk
| (($disk // "") | test("^nvme")) as $nvme
| ($k.kind // "file") as $kind
| ([$k | to_entries[] | select(.key | test("^nvmf\\.path\\."))
    | (.key | capture("^nvmf\\.path\\.(?<c>[^.]+)\\.(?<a>.+)$")) + {v: .value}]
   | group_by(.c) | map(reduce .[] as $e ({ctrl: .[0].c}; .[$e.a] = $e.v))) as $paths
| ([$paths[] | select(.transport != "pcie" and (.transport | str) != null)] | length > 0) as $fabrics
| ($k.fs | str | if . == null then null else (fromjson? // null) | .filesystems[0]? end) as $fs
| (ceil_div($bs / 1024; ($k["queue.max_sectors_kb"] | num) // ($bs / 1024))) as $pieces
| "sysfs: drivers/pci/pci-sysfs.c" as $pcisrc
| [
  # 1-2: the PCIe link (PCIe Base Spec: Link Status against Link Capabilities)
  (($k["pci.address"] | str) as $a
   | ($k["pci.current_link_width"] | num) as $cw | ($k["pci.max_link_width"] | num) as $mw
   | ($k["pci.current_link_speed"] | str) as $cs | ($k["pci.max_link_speed"] | str) as $ms
   | "PCIe Base Spec, Link Status/Link Capabilities registers (kernel \($pcisrc): current_link_*, max_link_*)" as $src
   | if $a == null then
       chk("pcie.link_width"; "n/a"; null; null; "no PCI device above \($disk // "the target") (NVMe-oF, loop or virtual device)"; $src),
       chk("pcie.link_speed"; "n/a"; null; null; "no PCI device above \($disk // "the target")"; $src)
     elif $cw == null or $mw == null or ($cs | gts) == null or ($ms | gts) == null then
       chk("pcie.link_width"; "n/a"; null; null; "\($a) has no PCIe link attributes (conventional PCI, e.g. a virtio disk)"; $src),
       chk("pcie.link_speed"; "n/a"; null; null; "\($a) has no PCIe link attributes (conventional PCI, e.g. a virtio disk)"; $src)
     else
       (if $cw < $mw then
          chk("pcie.link_width"; "fail"; "x\($cw)"; "x\($mw)";
              "\($a) trained at x\($cw) of x\($mw): the link carries \($cw)/\($mw) of its bandwidth; reseat the drive, check the slot's wired lanes and bifurcation (lspci -vv: LnkSta)"; $src)
        else chk("pcie.link_width"; "ok"; "x\($cw)"; "x\($mw)"; "full width"; $src) end),
       (if ($cs | gts) < ($ms | gts) then
          chk("pcie.link_speed"; "warn"; $cs; $ms;
              "\($a) runs at \($cs) of \($ms): the slot, a riser or the firmware's PCIe generation setting limits it (lspci -vv: LnkSta, and the root port's LnkCap)"; $src)
        else chk("pcie.link_speed"; "ok"; $cs; $ms; "full speed"; $src) end)
     end),

  # 3: NUMA: the device's node against the CPUs this process may run on
  (($k["pci.numa_node"] | num) as $node
   | ($k.cpus_allowed | cpus) as $allowed | ($k["numa.cpulist"] | cpus) as $local
   | ($allowed - $local) as $remote
   | "kernel sysfs: /sys/bus/pci/devices/*/numa_node, /sys/devices/system/node/node*/cpulist; Documentation/admin-guide/mm/numa_memory_policy.rst" as $src
   | if $node == null or $node < 0 then
       chk("numa.node"; "n/a"; null; null; "the device has no NUMA node (one node, or no PCI device)"; $src)
     elif ($local | length) == 0 then
       chk("numa.node"; "n/a"; "node \($node)"; null; "node \($node) lists no CPUs"; $src)
     elif ($remote | length) == 0 then
       chk("numa.node"; "ok"; "node \($node); CPUs \($allowed | ranges)"; "CPUs of node \($node) (\($local | ranges))"; "every CPU this process may use is on the device's node"; $src)
     else
       chk("numa.node"; "warn"; "node \($node); CPUs \($allowed | ranges)"; "CPUs of node \($node) (\($local | ranges))";
           (if ($allowed - $remote | length) == 0 then "remote: no allowed CPU is on node \($node)" else "partly remote: CPUs \($remote | ranges) are off node \($node)" end)
           + "; run the job under numactl --cpunodebind=\($node) --membind=\($node)"; $src)
     end),

  # 4: the I/O scheduler
  (($k["queue.scheduler"] | selected) as $s
   | "kernel Documentation/block/switching-sched.rst; blk-mq gives multi-queue devices (NVMe) none by default" as $src
   | if $disk == null or $s == null then chk("queue.scheduler"; "n/a"; null; "none"; "no block device queue"; $src)
     elif ($nvme | not) then chk("queue.scheduler"; "n/a"; $s; "none"; "\($disk) is not an NVMe device"; $src)
     elif $s == "none" then chk("queue.scheduler"; "ok"; $s; "none"; "no scheduler between the aio queue and the drive"; $src)
     else chk("queue.scheduler"; "warn"; $s; "none";
              "\($s) costs CPU per request on NVMe: echo none > /sys/block/\($disk)/queue/scheduler (and a udev rule to keep it)"; $src)
     end),

  # 5: max_sectors_kb against the aio block
  (($k["queue.max_sectors_kb"] | num) as $m | ($k["queue.max_hw_sectors_kb"] | num) as $hw
   | "kernel Documentation/ABI/stable/sysfs-block (max_sectors_kb, max_hw_sectors_kb); DeepSpeed csrc/aio/common/deepspeed_aio_common.cpp _do_io_submit_block: one iocb per block_size" as $src
   | if $m == null then chk("queue.max_sectors_kb"; "n/a"; null; null; "no block device queue"; $src)
     elif $bs <= $m * 1024 then
       chk("queue.max_sectors_kb"; "ok"; $m; ">= \($bs / 1024) (block \($bs | sz))"; "a \($bs | sz) block is one request"; $src)
     elif $hw != null and $bs <= $hw * 1024 then
       chk("queue.max_sectors_kb"; "warn"; $m; ">= \($bs / 1024) (block \($bs | sz))";
           "a \($bs | sz) block is split into \($pieces) requests: echo \($bs / 1024) > /sys/block/\($disk)/queue/max_sectors_kb (the device allows \($hw))"; $src)
     else
       chk("queue.max_sectors_kb"; "warn"; $m; ">= \($bs / 1024) (block \($bs | sz))";
           "a \($bs | sz) block is split into \($pieces) requests and the device allows at most \($hw) KiB (NVMe MDTS): a block_size of \(($hw // $m) * 1024 | sz) is one request"; $src)
     end),

  # 6: nr_requests against what one handle keeps in flight
  (($k["queue.nr_requests"] | num) as $nr | ($qd * $threads * $pieces) as $need
   | "kernel Documentation/ABI/stable/sysfs-block (nr_requests); DeepSpeed csrc/aio/common/deepspeed_aio_types.cpp aio_context: queue_depth iocbs per thread" as $src
   | if $nr == null then chk("queue.nr_requests"; "n/a"; null; null; "no block device queue"; $src)
     elif $nr >= $need then chk("queue.nr_requests"; "ok"; $nr; ">= \($need)"; "queue_depth \($qd) x threads \($threads)" + (if $pieces > 1 then " x \($pieces) requests per block" else "" end) + " fit"; $src)
     else chk("queue.nr_requests"; "warn"; $nr; ">= \($need)";
              "\($need) requests in flight (queue_depth \($qd) x threads \($threads) x \($pieces) per block) wait for \($nr) tags: echo \($need) > /sys/block/\($disk)/queue/nr_requests"; $src)
     end),

  # 7-8: the filesystem: O_DIRECT and mount options
  ("DeepSpeed csrc/aio/common/deepspeed_aio_common.cpp open_file: O_DIRECT" as $src
   | if $kind == "block" then
       chk("fs.type"; "n/a"; null; null; "a block device: no filesystem"; $src),
       chk("fs.mount_options"; "n/a"; null; null; "a block device: no filesystem"; "mount(8)")
     elif $fs == null then
       chk("fs.type"; "warn"; null; "ext4, xfs, btrfs, f2fs"; "no filesystem found for \($target)"; $src),
       chk("fs.mount_options"; "n/a"; null; null; "no filesystem found"; "mount(8)")
     else
       ($fs.fstype) as $t | ($fs.options | split(",")) as $o
       | (if ["ext4", "xfs", "btrfs", "f2fs", "ext3", "ext2", "bcachefs"] | index($t) then
            chk("fs.type"; "ok"; $t; "a local filesystem with O_DIRECT"; "\($fs.target) on \($fs.source)"; $src)
          elif $t == "ramfs" then
            chk("fs.type"; "fail"; $t; "a local filesystem with O_DIRECT"; "ramfs refuses O_DIRECT: DeepSpeed's open fails (EINVAL); put nvme_path on the NVMe filesystem"; $src)
          elif $t == "tmpfs" then
            chk("fs.type"; "warn"; $t; "a local filesystem with O_DIRECT"; "memory, not NVMe, and O_DIRECT only from Linux 6.6: put nvme_path on the NVMe filesystem"; $src)
          elif ($t | test("^(fuse|overlay|nfs|cifs|smb|zfs|9p|virtiofs)")) then
            chk("fs.type"; "warn"; $t; "a local filesystem with O_DIRECT"; "\($t): O_DIRECT may be refused, ignored or served from a cache; check with tswap_stats or fio --direct=1"; $src)
          else
            chk("fs.type"; "warn"; $t; "a local filesystem with O_DIRECT"; "\($t) is not one tswap-check knows: check O_DIRECT with fio --direct=1"; $src)
          end),
         (if $o | index("ro") then
            chk("fs.mount_options"; "fail"; $fs.options; "rw"; "mounted read-only: DeepSpeed writes the swap files (mount -o remount,rw \($fs.target))"; "mount(8): ro")
          elif $t == "ext4" and ($o | index("data=journal")) then
            chk("fs.mount_options"; "warn"; $fs.options; "no data=journal"; "ext4 data=journal serves O_DIRECT as buffered I/O: remount without data=journal"; "kernel Documentation/filesystems/ext4.rst (data=journal); fs/ext4/file.c")
          elif $o | index("sync") then
            chk("fs.mount_options"; "warn"; $fs.options; "no sync"; "sync makes every write wait for its metadata: remount without sync"; "mount(8): sync")
          else chk("fs.mount_options"; "ok"; $fs.options; "rw, no sync or data=journal"; "mounted at \($fs.target)"; "mount(8)") end)
     end),

  # 9: fs.aio-max-nr against one handle's aio contexts
  (($k.aio_max_nr | num) as $max | (($k.aio_nr | num) // 0) as $used | ($qd * ($threads + 1)) as $need
   | "kernel Documentation/admin-guide/sysctl/fs.rst (aio-nr, aio-max-nr); DeepSpeed csrc/aio/py_lib/deepspeed_py_io_handle.cpp deepspeed_io_handle_t: one aio_context of queue_depth events, and one per thread" as $src
   | if $max == null then chk("sysctl.aio_max_nr"; "n/a"; null; ">= \($need)"; "no /proc/sys/fs/aio-max-nr"; $src)
     elif $max < $need then
       chk("sysctl.aio_max_nr"; "fail"; $max; ">= \($need) per handle";
           "io_setup fails (EAGAIN) for a handle of queue_depth \($qd) x (threads \($threads) + 1): sysctl -w fs.aio-max-nr=\([$need * 1024, 1048576] | max) (each rank opens several handles)"; $src)
     elif $max - $used < $need then
       chk("sysctl.aio_max_nr"; "warn"; "\($max) (\($used) in use)"; ">= \($need) free per handle";
           "only \($max - $used) aio events are free now: another process holds \($used); raise fs.aio-max-nr"; $src)
     else chk("sysctl.aio_max_nr"; "ok"; "\($max) (\($used) in use)"; ">= \($need) free per handle"; "queue_depth \($qd) x (threads \($threads) + 1) fit"; $src)
     end),

  # 10: io_uring (only the io_uring backend needs it)
  (($k.io_uring_disabled | num) as $d
   | "kernel Documentation/admin-guide/sysctl/kernel.rst (io_uring_disabled)" as $src
   | if $backend != "io_uring" then chk("sysctl.io_uring_disabled"; "n/a"; $d; null; "--backend \($backend) does not use io_uring"; $src)
     elif $d == null or $d == 0 then chk("sysctl.io_uring_disabled"; "ok"; $d // "absent"; "0"; "io_uring rings can be created"; $src)
     elif $d == 1 then chk("sysctl.io_uring_disabled"; "warn"; $d; "0"; "io_uring_setup fails (EPERM) for unprivileged processes outside kernel.io_uring_group: sysctl -w kernel.io_uring_disabled=0, or the group"; $src)
     else chk("sysctl.io_uring_disabled"; "fail"; $d; "0"; "io_uring_setup fails (EPERM) for every process: sysctl -w kernel.io_uring_disabled=0, or --backend libaio"; $src)
     end),

  # 11: RLIMIT_MEMLOCK against the pinned I/O buffers
  (($k.memlock | str) as $l | ($qd * $bs * $threads) as $need
   | (($k.cap_eff | str // "0000") | .[-4:-3] | test("[4-7c-fC-F]")) as $ipc_lock
   | "DeepSpeed csrc/aio/common/deepspeed_aio_utils.cpp ds_page_aligned_alloc (posix_memalign + mlock, new_cpu_locked_tensor); getrlimit(2) RLIMIT_MEMLOCK" as $src
   | if $l == null then chk("limits.memlock"; "n/a"; null; ">= \($need | sz)"; "no /proc/self/limits"; $src)
     elif $l == "unlimited" then chk("limits.memlock"; "ok"; $l; ">= \($need | sz)"; "no limit"; $src)
     elif $ipc_lock then chk("limits.memlock"; "ok"; "\($l | tonumber | sz) (CAP_IPC_LOCK)"; ">= \($need | sz)"; "CAP_IPC_LOCK: mlock is not limited"; $src)
     elif ($l | tonumber) < $need then
       chk("limits.memlock"; "fail"; ($l | tonumber | sz); ">= \($need | sz)";
           "mlock of queue_depth \($qd) x block \($bs | sz) x threads \($threads) = \($need | sz) fails: DeepSpeed's locked tensors are not allocated (tswap_pin=auto runs unlocked); raise ulimit -l (limits.conf memlock, systemd LimitMEMLOCK)"; $src)
     else chk("limits.memlock"; "ok"; ($l | tonumber | sz); ">= \($need | sz)"; "queue_depth \($qd) x block \($bs | sz) x threads \($threads) can be locked"; $src)
     end),

  # 12-14: NVMe over Fabrics: transport, each path's ANA state, iopolicy
  ("NVMe Base Specification, Asymmetric Namespace Access (ANA) states; kernel drivers/nvme/host/multipath.c, Documentation/admin-guide/nvme-multipath.rst" as $src
   | if ($fabrics | not) then
       chk("nvmf.transport"; "n/a"; ([$paths[].transport] | unique | join(",") | str); null; "not NVMe over Fabrics"; $src)
     else
       chk("nvmf.transport"; "ok"; ([$paths[].transport] | unique | join(",")); null; "\($paths | length) path(s) to \($disk)"; $src),
       ($paths[] | . as $p
        | ($p.ana_state | str) as $ana
        | "nvmf.path.\($p.ctrl)" as $id
        | "\($p.transport) \($p.address // "") \($p.state // "")\(if $ana then ", " + $ana else "" end)" as $v
        | if ($p.state | str) != null and $p.state != "live" then
            chk($id; "fail"; $v; "live, optimized"; "controller \($p.ctrl) is \($p.state): no I/O goes through it (nvme list-subsys; reconnect)"; $src)
          elif $ana == null or $ana == "optimized" then
            chk($id; "ok"; $v; "live, optimized"; "this path carries I/O"; $src)
          elif $ana == "non-optimized" then
            chk($id; "warn"; $v; "live, optimized"; "ANA non-optimized: I/O goes here only when no optimized path is left, and runs slower (the target's other port or controller owns the namespace)"; $src)
          elif $ana == "inaccessible" or $ana == "persistent-loss" then
            chk($id; "fail"; $v; "live, optimized"; "ANA \($ana): no I/O through \($p.ctrl)"; $src)
          else
            chk($id; "warn"; $v; "live, optimized"; "ANA \($ana): the path is changing state; check again"; $src)
          end),
       (($k["nvmf.iopolicy"] | str) as $pol
        | ([$paths[] | select((.ana_state | str // "optimized") == "optimized" and (.state // "live") == "live")] | length) as $opt
        | if $pol == null then chk("nvmf.iopolicy"; "n/a"; null; null; "no native NVMe multipath subsystem"; $src)
          elif $pol == "numa" and $opt > 1 then
            chk("nvmf.iopolicy"; "warn"; $pol; "round-robin or queue-depth";
                "numa sends one NUMA node's I/O down one path: \($opt) optimized paths; echo queue-depth (or round-robin) > /sys/class/nvme-subsystem/\($k["nvmf.subsystem"] // "nvme-subsysN")/iopolicy"; $src)
          else chk("nvmf.iopolicy"; "ok"; $pol; null; "\($opt) optimized path(s)"; $src) end)
     end)
]
| . as $checks
| {target: $target, sysroot: ($sysroot | str),
   settings: {block_size: $bs, queue_depth: $qd, threads: $threads, backend: $backend},
   stack: {kind: $kind, device: ($k.dev | str), disk: $disk, filesystem: ($fs.fstype // null), mountpoint: ($fs.target // null),
           host: ($k.host | str), kernel: ($k.kernel | str),
           # what a fleet compares its hosts on (fleet-check.jq)
           model: ([($k.nvme | json | .mn?), ($k.blk | json | .blockdevices[0]?.model?), $k["dev.model"]]
                   | map(trimmed | values) | .[0]),
           firmware: ([($k.nvme | json | .fr?), ($k.blk | json | .blockdevices[0]?.rev?), $k["dev.firmware"]]
                      | map(trimmed | values) | .[0]),
           pcie_link: (if ($k["pci.current_link_speed"] | str) != null and ($k["pci.current_link_width"] | str) != null
                       then "\($k["pci.current_link_speed"]) x\($k["pci.current_link_width"])" else null end),
           numa_node: ($k["pci.numa_node"] | num | if . == null or . < 0 then null else . end)},
   verdict: (if any($checks[]; .verdict == "fail") then "fail" elif any($checks[]; .verdict == "warn") then "warn" else "ok" end),
   counts: (reduce $checks[] as $c ({ok: 0, warn: 0, fail: 0, "n/a": 0}; .[$c.verdict] += 1)),
   checks: $checks}
