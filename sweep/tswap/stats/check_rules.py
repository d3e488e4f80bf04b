# SPDX-License-Identifier: GPL-2.0-only
"""tswap-check's rules, one function per check (docs/sweep.md "Checking a
host: tswap-check" lists them with their verdicts); each returns the
check objects {id, verdict, value, expected, advice, source}. k is the
collector's kv (tswap.stats.sysfs.kv); s the aio settings
(tswap.stats.check.Settings). A value that is present but garbage or out
of range makes its check n/a, the advice naming the value and the rule.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from ..jqjson import join, text, unique
from .sysfs import Num, count, cpus, gts, minus, quote, ranges, str_, sz, uint

Doc = dict[str, Any]

U32 = 4294967295
U64 = 18446744073709551615
# PCIe Base Spec: x1 to x32 links
WIDTH_MAX = 32
# the kernel's MAX_NUMNODES is at most 1024 (NODES_SHIFT 10)
NODE_MAX = 1023
FS_OK = ('ext4', 'xfs', 'btrfs', 'f2fs', 'ext3', 'ext2', 'bcachefs')
PCISRC = 'sysfs: drivers/pci/pci-sysfs.c'


def chk(id_: str, verdict: str, value: Any, expected: Any, advice: str, source: str) -> Doc:
    """One check; a value other than a string written as jq's tostring."""
    return {'id': id_, 'verdict': verdict, 'value': None if value is None else text(value),
            'expected': expected, 'advice': advice, 'source': source}


def _notes(*ns: Any) -> Optional[str]:
    """The garbage notes of ns (Num or Cpus), "; "-joined, or None."""
    got = [n.note for n in ns if n.note is not None]
    return '; '.join(got) if got else None


def pcie(k: dict[str, str], disk: Optional[str]) -> list[Doc]:
    """pcie.link_width (fail: current below or above max_link_width),
    pcie.link_speed (warn: current below max_link_speed). PCIe Base Spec,
    Link Status against Link Capabilities."""
    a = str_(k.get('pci.address'))
    cw = uint(k.get('pci.current_link_width'), 'current_link_width', 1, WIDTH_MAX)
    mw = uint(k.get('pci.max_link_width'), 'max_link_width', 1, WIDTH_MAX)
    cs, ms = str_(k.get('pci.current_link_speed')), str_(k.get('pci.max_link_speed'))
    cg, mg = gts(cs, 'current_link_speed'), gts(ms, 'max_link_speed')
    src = ('PCIe Base Spec, Link Status/Link Capabilities registers (kernel %s: current_link_*, max_link_*)'
           % PCISRC)
    dname = disk if disk is not None else 'the target'
    if a is None:
        return [chk('pcie.link_width', 'n/a', None, None,
                    'no PCI device above %s (NVMe-oF, loop or virtual device)' % dname, src),
                chk('pcie.link_speed', 'n/a', None, None, 'no PCI device above %s' % dname, src)]
    if None in (str_(k.get('pci.current_link_width')), str_(k.get('pci.max_link_width')), cs, ms):
        why = '%s has no PCIe link attributes (conventional PCI, e.g. a virtio disk)' % a
        return [chk('pcie.link_width', 'n/a', None, None, why, src),
                chk('pcie.link_speed', 'n/a', None, None, why, src)]
    bad = _notes(cw, mw, cg, mg)
    if bad is not None:
        why = '%s: %s: the link cannot be judged' % (a, bad)
        return [chk('pcie.link_width', 'n/a', None, None, why, src),
                chk('pcie.link_speed', 'n/a', None, None, why, src)]
    c, m = cw.value, mw.value
    if c < m:
        w = chk('pcie.link_width', 'fail', 'x' + text(c), 'x' + text(m),
                '%s trained at x%s of x%s: the link carries %s/%s of its bandwidth; reseat the drive, check the '
                "slot's wired lanes and bifurcation (lspci -vv: LnkSta)" % (a, text(c), text(m), text(c), text(m)),
                src)
    elif c > m:
        w = chk('pcie.link_width', 'fail', 'x' + text(c), 'x' + text(m),
                '%s reports x%s on a link of at most x%s: a link never trains wider than its capability; '
                'the device or its sysfs reading is broken (lspci -vv: LnkSta, LnkCap)' % (a, text(c), text(m)), src)
    else:
        w = chk('pcie.link_width', 'ok', 'x' + text(c), 'x' + text(m), 'full width', src)
    if cg.value < mg.value:
        sp = chk('pcie.link_speed', 'warn', cs, ms,
                 "%s runs at %s of %s: the slot, a riser or the firmware's PCIe generation setting limits it "
                 "(lspci -vv: LnkSta, and the root port's LnkCap)" % (a, cs, ms), src)
    else:
        sp = chk('pcie.link_speed', 'ok', cs, ms, 'full speed', src)
    return [w, sp]


def numa(k: dict[str, str], node: Num) -> Doc:
    """numa.node: warn when CPUs this process may run on are off the
    device's NUMA node; n/a without a node, or on a garbage CPU list."""
    src = ('kernel sysfs: /sys/bus/pci/devices/*/numa_node, /sys/devices/system/node/node*/cpulist; '
           'Documentation/admin-guide/mm/numa_memory_policy.rst')
    n = node.value
    if node.note is not None:
        return chk('numa.node', 'n/a', None, None, '%s: the node cannot be judged' % node.note, src)
    if n is None or n < 0:
        return chk('numa.node', 'n/a', None, None, 'the device has no NUMA node (one node, or no PCI device)', src)
    nt = text(n)
    allowed = cpus(k.get('cpus_allowed'), 'Cpus_allowed_list')
    local = cpus(k.get('numa.cpulist'), 'node%s cpulist' % nt)
    bad = _notes(allowed, local)
    if bad is not None:
        return chk('numa.node', 'n/a', 'node ' + nt, None, '%s: the CPUs cannot be judged' % bad, src)
    remote = minus(allowed.ranges, local.ranges)
    if count(local.ranges) == 0:
        return chk('numa.node', 'n/a', 'node ' + nt, None, 'node %s lists no CPUs' % nt, src)
    value = 'node %s; CPUs %s' % (nt, ranges(allowed.ranges))
    expected = 'CPUs of node %s (%s)' % (nt, ranges(local.ranges))
    if count(remote) == 0:
        return chk('numa.node', 'ok', value, expected,
                   "every CPU this process may use is on the device's node", src)
    if count(allowed.ranges) - count(remote) == 0:
        why = 'remote: no allowed CPU is on node %s' % nt
    else:
        why = 'partly remote: CPUs %s are off node %s' % (ranges(remote), nt)
    return chk('numa.node', 'warn', value, expected,
               why + '; run the job under numactl --cpunodebind=%s --membind=%s' % (nt, nt), src)


_SCHED_WORD = re.compile(r'\[?([A-Za-z0-9_.-]+)\]?')


def selected(v: Optional[str]) -> Optional[str]:
    """The scheduler in use of a queue/scheduler line: the one name in
    brackets ("[none] mq-deadline kyber", block/elevator.c
    elv_iosched_show), or the line's one name when it has no brackets
    ("none": a queue without elevators); None when absent. Anything else
    (an unclosed bracket, two in use, "[]") raises ValueError."""
    s = str_(v)
    if s is None:
        return None
    words = [_SCHED_WORD.fullmatch(w) for w in s.split()]
    inuse = [m.group(1) for m in words if m and m.group(0) == '[%s]' % m.group(1)]
    plain = [m.group(1) for m in words if m and m.group(0) == m.group(1)]
    if words and len(inuse) + len(plain) == len(words):
        if len(inuse) == 1:
            return inuse[0]
        if not inuse and len(plain) == 1:
            return plain[0]
    raise ValueError('scheduler %s is not a scheduler list (names, the one in use in [])' % quote(s))


def scheduler(k: dict[str, str], disk: Optional[str]) -> Doc:
    """queue.scheduler: warn when an NVMe queue's scheduler is not none;
    n/a on a line that is no scheduler list, the advice naming it."""
    src = ('kernel Documentation/block/switching-sched.rst; blk-mq gives multi-queue devices (NVMe) none by '
           'default')
    try:
        s = selected(k.get('queue.scheduler'))
    except ValueError as e:
        return chk('queue.scheduler', 'n/a', None, 'none', str(e), src)
    if disk is None or s is None:
        return chk('queue.scheduler', 'n/a', None, 'none', 'no block device queue', src)
    if not disk.startswith('nvme'):
        return chk('queue.scheduler', 'n/a', s, 'none', '%s is not an NVMe device' % disk, src)
    if s == 'none':
        return chk('queue.scheduler', 'ok', s, 'none', 'no scheduler between the aio queue and the drive', src)
    return chk('queue.scheduler', 'warn', s, 'none',
               '%s costs CPU per request on NVMe: echo none > /sys/block/%s/queue/scheduler (and a udev rule to '
               'keep it)' % (s, disk), src)


def max_sectors(k: dict[str, str], s: Any, disk: Optional[str], ms: Num, pieces: float) -> Doc:
    """queue.max_sectors_kb: warn when one aio block is split into several
    requests (ms: max_sectors_kb, parsed; pieces: the requests a block
    becomes)."""
    hw = uint(k.get('queue.max_hw_sectors_kb'), 'max_hw_sectors_kb', 1, U32)
    src = ('kernel Documentation/ABI/stable/sysfs-block (max_sectors_kb, max_hw_sectors_kb); DeepSpeed '
           'csrc/aio/common/deepspeed_aio_common.cpp _do_io_submit_block: one iocb per block_size')
    bs = s.block_size
    bad = _notes(ms, hw)
    if bad is not None:
        return chk('queue.max_sectors_kb', 'n/a', None, None, bad, src)
    m, h = ms.value, hw.value
    if m is None:
        return chk('queue.max_sectors_kb', 'n/a', None, None, 'no block device queue', src)
    exp = '>= %s (block %s)' % (text(bs / 1024), sz(bs))
    if bs <= m * 1024:
        return chk('queue.max_sectors_kb', 'ok', m, exp, 'a %s block is one request' % sz(bs), src)
    if h is not None and bs <= h * 1024:
        return chk('queue.max_sectors_kb', 'warn', m, exp,
                   'a %s block is split into %s requests: echo %s > /sys/block/%s/queue/max_sectors_kb (the device '
                   'allows %s)' % (sz(bs), text(pieces), text(bs / 1024), text(disk), text(h)), src)
    return chk('queue.max_sectors_kb', 'warn', m, exp,
               'a %s block is split into %s requests and the device allows at most %s KiB (NVMe MDTS): a '
               'block_size of %s is one request' % (sz(bs), text(pieces), text(h), sz((h if h is not None else m)
                                                                                          * 1024)), src)


def nr_requests(k: dict[str, str], s: Any, disk: Optional[str], pieces: float) -> Doc:
    """queue.nr_requests: warn below queue_depth x threads x pieces."""
    nr = uint(k.get('queue.nr_requests'), 'nr_requests', 1, U32)
    qd, th = s.queue_depth, s.threads
    need = qd * th * pieces
    src = ('kernel Documentation/ABI/stable/sysfs-block (nr_requests); DeepSpeed '
           'csrc/aio/common/deepspeed_aio_types.cpp aio_context: queue_depth iocbs per thread')
    if nr.note is not None:
        return chk('queue.nr_requests', 'n/a', None, '>= ' + text(need), nr.note, src)
    n = nr.value
    if n is None:
        return chk('queue.nr_requests', 'n/a', None, None, 'no block device queue', src)
    if n >= need:
        return chk('queue.nr_requests', 'ok', n, '>= ' + text(need),
                   'queue_depth %s x threads %s' % (text(qd), text(th))
                   + (' x %s requests per block' % text(pieces) if pieces > 1 else '') + ' fit', src)
    return chk('queue.nr_requests', 'warn', n, '>= ' + text(need),
               '%s requests in flight (queue_depth %s x threads %s x %s per block) wait for %s tags: echo %s > '
               '/sys/block/%s/queue/nr_requests' % (text(need), text(qd), text(th), text(pieces), text(n),
                                                     text(need), text(disk)), src)


def fs_checks(k: dict[str, str], fs: Optional[Doc], target: str) -> list[Doc]:
    """fs.type (fail: ramfs; warn: tmpfs, FUSE, overlay, NFS, ZFS, unknown)
    and fs.mount_options (fail: ro; warn: sync, ext4 data=journal)."""
    src = 'DeepSpeed csrc/aio/common/deepspeed_aio_common.cpp open_file: O_DIRECT'
    kind = k.get('kind') if k.get('kind') is not None else 'file'
    if kind == 'block':
        return [chk('fs.type', 'n/a', None, None, 'a block device: no filesystem', src),
                chk('fs.mount_options', 'n/a', None, None, 'a block device: no filesystem', 'mount(8)')]
    if fs is None:
        return [chk('fs.type', 'warn', None, 'ext4, xfs, btrfs, f2fs', 'no filesystem found for %s' % target, src),
                chk('fs.mount_options', 'n/a', None, None, 'no filesystem found', 'mount(8)')]
    t, opts = fs.get('fstype'), fs.get('options')
    tt = text(t)
    o = opts.split(',') if isinstance(opts, str) else []
    want = 'a local filesystem with O_DIRECT'
    if t in FS_OK:
        ty = chk('fs.type', 'ok', t, want, '%s on %s' % (text(fs.get('target')), text(fs.get('source'))), src)
    elif t == 'ramfs':
        ty = chk('fs.type', 'fail', t, want, "ramfs refuses O_DIRECT: DeepSpeed's open fails (EINVAL); put "
                 'nvme_path on the NVMe filesystem', src)
    elif t == 'tmpfs':
        ty = chk('fs.type', 'warn', t, want, 'memory, not NVMe, and O_DIRECT only from Linux 6.6: put nvme_path on '
                 'the NVMe filesystem', src)
    elif isinstance(t, str) and re.match(r'(fuse|overlay|nfs|cifs|smb|zfs|9p|virtiofs)', t):
        ty = chk('fs.type', 'warn', t, want, '%s: O_DIRECT may be refused, ignored or served from a cache; check '
                 'with tswap_stats or fio --direct=1' % tt, src)
    else:
        ty = chk('fs.type', 'warn', t, want, '%s is not one tswap-check knows: check O_DIRECT with fio --direct=1'
                 % tt, src)
    mt = text(fs.get('target'))
    if 'ro' in o:
        mo = chk('fs.mount_options', 'fail', opts, 'rw', 'mounted read-only: DeepSpeed writes the swap files (mount '
                 '-o remount,rw %s)' % mt, 'mount(8): ro')
    elif t == 'ext4' and 'data=journal' in o:
        mo = chk('fs.mount_options', 'warn', opts, 'no data=journal', 'ext4 data=journal serves O_DIRECT as '
                 'buffered I/O: remount without data=journal',
                 'kernel Documentation/filesystems/ext4.rst (data=journal); fs/ext4/file.c')
    elif 'sync' in o:
        mo = chk('fs.mount_options', 'warn', opts, 'no sync', 'sync makes every write wait for its metadata: '
                 'remount without sync', 'mount(8): sync')
    else:
        mo = chk('fs.mount_options', 'ok', opts, 'rw, no sync or data=journal', 'mounted at %s' % mt, 'mount(8)')
    return [ty, mo]


def aio_max_nr(k: dict[str, str], s: Any) -> Doc:
    """sysctl.aio_max_nr: fail below queue_depth x (threads + 1), one
    handle's io_setup; warn when fewer events are free."""
    mx = uint(k.get('aio_max_nr'), 'fs.aio-max-nr', 0, U64)
    us = uint(k.get('aio_nr'), 'fs.aio-nr', 0, U64)
    qd, th = s.queue_depth, s.threads
    need = qd * (th + 1)
    src = ('kernel Documentation/admin-guide/sysctl/fs.rst (aio-nr, aio-max-nr); DeepSpeed '
           'csrc/aio/py_lib/deepspeed_py_io_handle.cpp deepspeed_io_handle_t: one aio_context of queue_depth '
           'events, and one per thread')
    bad = _notes(mx, us)
    if bad is not None:
        return chk('sysctl.aio_max_nr', 'n/a', None, '>= ' + text(need), bad, src)
    m = mx.value
    used = us.value if us.value is not None else 0.0
    if m is None:
        return chk('sysctl.aio_max_nr', 'n/a', None, '>= ' + text(need), 'no /proc/sys/fs/aio-max-nr', src)
    if m < need:
        return chk('sysctl.aio_max_nr', 'fail', m, '>= %s per handle' % text(need),
                   'io_setup fails (EAGAIN) for a handle of queue_depth %s x (threads %s + 1): sysctl -w '
                   'fs.aio-max-nr=%s (each rank opens several handles)'
                   % (text(qd), text(th), text(max(need * 1024, 1048576.0))), src)
    if m - used < need:
        return chk('sysctl.aio_max_nr', 'warn', '%s (%s in use)' % (text(m), text(used)),
                   '>= %s free per handle' % text(need),
                   'only %s aio events are free now: another process holds %s; raise fs.aio-max-nr'
                   % (text(m - used), text(used)), src)
    return chk('sysctl.aio_max_nr', 'ok', '%s (%s in use)' % (text(m), text(used)), '>= %s free per handle'
               % text(need), 'queue_depth %s x (threads %s + 1) fit' % (text(qd), text(th)), src)


def io_uring(k: dict[str, str], s: Any) -> Doc:
    """sysctl.io_uring_disabled (--backend io_uring only): warn 1, fail 2."""
    dn = uint(k.get('io_uring_disabled'), 'kernel.io_uring_disabled', 0, 2)
    d = dn.value
    src = 'kernel Documentation/admin-guide/sysctl/kernel.rst (io_uring_disabled)'
    if s.backend != 'io_uring':
        return chk('sysctl.io_uring_disabled', 'n/a', d, None, '--backend %s does not use io_uring' % s.backend, src)
    if dn.note is not None:
        return chk('sysctl.io_uring_disabled', 'n/a', None, '0', dn.note, src)
    if d is None or d == 0:
        return chk('sysctl.io_uring_disabled', 'ok', d if d is not None else 'absent', '0',
                   'io_uring rings can be created', src)
    if d == 1:
        return chk('sysctl.io_uring_disabled', 'warn', d, '0', 'io_uring_setup fails (EPERM) for unprivileged '
                   'processes outside kernel.io_uring_group: sysctl -w kernel.io_uring_disabled=0, or the group', src)
    return chk('sysctl.io_uring_disabled', 'fail', d, '0', 'io_uring_setup fails (EPERM) for every process: '
               'sysctl -w kernel.io_uring_disabled=0, or --backend libaio', src)


def memlock(k: dict[str, str], s: Any) -> Doc:
    """limits.memlock: fail below queue_depth x block x threads, without
    CAP_IPC_LOCK."""
    l_ = str_(k.get('memlock'))
    qd, bs, th = s.queue_depth, s.block_size, s.threads
    need = qd * bs * th
    cap = str_(k.get('cap_eff'))
    ipc_lock = re.search('[4-7c-fC-F]', (cap if cap is not None else '0000')[-4:-3]) is not None
    src = ('DeepSpeed csrc/aio/common/deepspeed_aio_utils.cpp ds_page_aligned_alloc (posix_memalign + mlock, '
           'new_cpu_locked_tensor); getrlimit(2) RLIMIT_MEMLOCK')
    exp = '>= ' + sz(need)
    if l_ is None:
        return chk('limits.memlock', 'n/a', None, exp, '/proc/self/limits exists but is unreadable'
                   if k.get('unreadable./proc/self/limits') else 'no /proc/self/limits', src)
    if l_ == 'unlimited':
        return chk('limits.memlock', 'ok', l_, exp, 'no limit', src)
    lv = uint(l_, 'Max locked memory', 0, U64)
    if lv.note is not None:
        return chk('limits.memlock', 'n/a', None, exp, lv.note, src)
    if ipc_lock:
        return chk('limits.memlock', 'ok', sz(lv.value) + ' (CAP_IPC_LOCK)', exp, 'CAP_IPC_LOCK: mlock is not '
                   'limited', src)
    if lv.value < need:
        return chk('limits.memlock', 'fail', sz(lv.value), exp,
                   "mlock of queue_depth %s x block %s x threads %s = %s fails: DeepSpeed's locked tensors are not "
                   'allocated (tswap_pin=auto runs unlocked); raise ulimit -l (limits.conf memlock, systemd '
                   'LimitMEMLOCK)' % (text(qd), sz(bs), text(th), sz(need)), src)
    return chk('limits.memlock', 'ok', sz(lv.value), exp, 'queue_depth %s x block %s x threads %s can be locked'
               % (text(qd), sz(bs), text(th)), src)


def nvmf(k: dict[str, str], disk: Optional[str], paths: list[Doc]) -> list[Doc]:
    """nvmf.transport (n/a unless NVMe over Fabrics), nvmf.path.CTRL (warn:
    ANA non-optimized or changing; fail: inaccessible, persistent-loss,
    not live), nvmf.iopolicy (warn: numa over several optimized paths)."""
    src = ('NVMe Base Specification, Asymmetric Namespace Access (ANA) states; kernel drivers/nvme/host/multipath.c, '
           'Documentation/admin-guide/nvme-multipath.rst')
    tr = join(unique([p.get('transport') for p in paths]), ',')
    if not any(p.get('transport') != 'pcie' and str_(p.get('transport')) is not None for p in paths):
        return [chk('nvmf.transport', 'n/a', str_(tr), None, 'not NVMe over Fabrics', src)]
    out = [chk('nvmf.transport', 'ok', tr, None, '%d path(s) to %s' % (len(paths), text(disk)), src)]
    for p in paths:
        ana = str_(p.get('ana_state'))
        st = p.get('state')
        v = '%s %s %s%s' % (text(p.get('transport')), p.get('address') or '', st if st is not None else '',
                            ', ' + ana if ana else '')
        id_ = 'nvmf.path.' + p['ctrl']
        exp = 'live, optimized'
        if str_(st) is not None and st != 'live':
            out.append(chk(id_, 'fail', v, exp, 'controller %s is %s: no I/O goes through it (nvme list-subsys; '
                           'reconnect)' % (p['ctrl'], st), src))
        elif ana is None or ana == 'optimized':
            out.append(chk(id_, 'ok', v, exp, 'this path carries I/O', src))
        elif ana == 'non-optimized':
            out.append(chk(id_, 'warn', v, exp, 'ANA non-optimized: I/O goes here only when no optimized path is '
                           "left, and runs slower (the target's other port or controller owns the namespace)", src))
        elif ana in ('inaccessible', 'persistent-loss'):
            out.append(chk(id_, 'fail', v, exp, 'ANA %s: no I/O through %s' % (ana, p['ctrl']), src))
        else:
            out.append(chk(id_, 'warn', v, exp, 'ANA %s: the path is changing state; check again' % ana, src))
    pol = str_(k.get('nvmf.iopolicy'))
    opt = len([p for p in paths if (str_(p.get('ana_state')) or 'optimized') == 'optimized'
               and (p.get('state') if p.get('state') is not None else 'live') == 'live'])
    if pol is None:
        out.append(chk('nvmf.iopolicy', 'n/a', None, None, 'no native NVMe multipath subsystem', src))
    elif pol == 'numa' and opt > 1:
        sub = k.get('nvmf.subsystem')
        out.append(chk('nvmf.iopolicy', 'warn', pol, 'round-robin or queue-depth',
                       "numa sends one NUMA node's I/O down one path: %d optimized paths; echo queue-depth (or "
                       'round-robin) > /sys/class/nvme-subsystem/%s/iopolicy'
                       % (opt, sub if sub is not None else 'nvme-subsysN'), src))
    else:
        out.append(chk('nvmf.iopolicy', 'ok', pol, None, '%d optimized path(s)' % opt, src))
    return out
