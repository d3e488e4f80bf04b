# SPDX-License-Identifier: GPL-2.0-only
"""tswap-check's checks of a target's storage stack (docs/sweep.md
"Checking a host: tswap-check"), from sweep/lib/meta-collect.sh's
"key<TAB>value" lines and the aio settings to check against.

checks(kv, settings, target, sysroot) -> {target, sysroot, settings,
stack, verdict, counts, checks: [{id, verdict, value, expected, advice,
source}]}. stack: kind, device, disk, filesystem, mountpoint, host,
kernel, model, firmware, pcie_link, numa_node (what a fleet compares its
hosts on, tswap.stats.fleet_check). verdict: ok, warn, fail, or n/a (the
check does not apply, or its value is absent or garbage: the advice says
which); the object's verdict is its worst check's. Sizes in fio notation
(1m = 1 MiB); values as sysfs spells them. Every number is read with a
range check (tswap.stats.sysfs).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Optional

from ..jqjson import get, group_by, loads, truthy
from . import check_rules as r
from . import sysfs
from .sysfs import str_

Doc = dict[str, Any]


@dataclass(frozen=True)
class Settings:
    """The aio settings checked against: block_size (bytes), queue_depth,
    threads (intra_op_parallelism), backend (libaio or io_uring)
    (DeepSpeed's aio config block; tswap-check's options)."""
    block_size: float
    queue_depth: float
    threads: float
    backend: str


def fromjson(v: Optional[str]) -> Any:
    """A value that is one line of JSON (lsblk, findmnt, nvme id-ctrl), or
    None when absent or not JSON."""
    s = str_(v)
    if s is None:
        return None
    try:
        return loads(s)
    except (ValueError, json.JSONDecodeError, RecursionError):
        return None


def _trimmed(v: Any) -> Optional[str]:
    if not isinstance(v, str):
        return None
    return str_(re.sub(r'^\s+|\s+$', '', v))


def _field(doc: Any, *path: Any) -> Any:
    """get, with None for a path that does not fit the document's shape
    (jq's .a?)."""
    try:
        return get(doc, *path)
    except (TypeError, ValueError):
        return None


def nvmf_paths(k: dict[str, str]) -> list[Doc]:
    """The NVMe paths of the kv's "nvmf.path.CTRL.ATTR" lines: one object
    per controller ({ctrl, transport, state, address, ana_state}), by
    controller name."""
    rows = []
    for key in sorted(k):
        m = re.fullmatch(r'nvmf\.path\.([^.]+)\.(.+)', key, re.S)
        if m:
            rows.append({'c': m.group(1), 'a': m.group(2), 'v': k[key]})
    out = []
    for g in group_by(rows, lambda e: e['c']):
        p: Doc = {'ctrl': g[0]['c']}
        for e in g:
            p[e['a']] = e['v']
        out.append(p)
    return out


def filesystem(k: dict[str, str]) -> Optional[Doc]:
    """findmnt's first filesystem ({target, source, fstype, options}), or
    None."""
    fs = _field(fromjson(k.get('fs')), 'filesystems', 0)
    return fs if isinstance(fs, dict) else None


def stack(k: dict[str, str], fs: Optional[Doc], node: Optional[float]) -> Doc:
    """The stack object: what the target is and what a fleet compares."""
    nvme, blk = fromjson(k.get('nvme')), fromjson(k.get('blk'))

    def first(*vals: Any) -> Optional[str]:
        return next((t for t in map(_trimmed, vals) if t is not None), None)

    cs, cw = k.get('pci.current_link_speed'), k.get('pci.current_link_width')
    return {'kind': k.get('kind') if k.get('kind') is not None else 'file',
            'device': str_(k.get('dev')), 'disk': str_(k.get('disk')),
            'filesystem': (fs or {}).get('fstype'), 'mountpoint': (fs or {}).get('target'),
            'host': str_(k.get('host')), 'kernel': str_(k.get('kernel')),
            'model': first(_field(nvme, 'mn'), _field(blk, 'blockdevices', 0, 'model'), k.get('dev.model')),
            'firmware': first(_field(nvme, 'fr'), _field(blk, 'blockdevices', 0, 'rev'), k.get('dev.firmware')),
            'pcie_link': '%s x%s' % (cs, cw) if str_(cs) is not None and str_(cw) is not None else None,
            'numa_node': node if node is not None and node >= 0 else None}


def pieces(bs: float, max_sectors_kb: Optional[float]) -> float:
    """The requests one block_size block is split into: ceil(block KiB /
    max_sectors_kb) (kernel block/blk-merge.c splits a bio at
    max_sectors)."""
    b = bs / 1024
    m = max_sectors_kb if max_sectors_kb is not None else b
    return float(math.floor((b + m - 1) / m))


def checks(lines: str, s: Settings, target: str, sysroot: str) -> Doc:
    """The checks object of one target (see the module's docstring), from
    the collector's lines."""
    k = sysfs.kv(lines)
    disk = str_(k.get('disk'))
    fs = filesystem(k)
    paths = nvmf_paths(k)
    ms = sysfs.uint(k.get('queue.max_sectors_kb'), 'max_sectors_kb', 1, r.U32)
    pc = pieces(s.block_size, ms.value)
    node = sysfs.uint(k.get('pci.numa_node'), 'numa_node', -1, r.NODE_MAX)
    cs = [*r.pcie(k, disk), r.numa(k, node), r.scheduler(k, disk),
          r.max_sectors(k, s, disk, ms, pc), r.nr_requests(k, s, disk, pc),
          *r.fs_checks(k, fs, target), r.aio_max_nr(k, s), r.io_uring(k, s), r.memlock(k, s),
          *r.nvmf(k, disk, paths)]
    counts = {'ok': 0, 'warn': 0, 'fail': 0, 'n/a': 0}
    for c in cs:
        counts[c['verdict']] += 1
    verdicts = {c['verdict'] for c in cs}
    return {'target': target, 'sysroot': str_(sysroot),
            'settings': {'block_size': s.block_size, 'queue_depth': s.queue_depth,
                         'threads': s.threads, 'backend': s.backend},
            'stack': stack(k, fs, node.value),
            'verdict': 'fail' if 'fail' in verdicts else 'warn' if 'warn' in verdicts else 'ok',
            'counts': counts, 'checks': cs}


def settings_for(best_aio: Any, plan: Any) -> Doc:
    """The aio settings a fleet's stack checks judge against
    (tswap.cli.finish_fleet): best-aio.json's aio block when the run
    has a pick, else DeepSpeed's defaults (block_size 1 MiB, queue_depth 8,
    one thread; deepspeed/runtime/swap_tensor/aio_config.py); io_uring
    when the plan (a list of points) has io_uring points. {block_size,
    queue_depth, threads, backend, from}."""
    a = _field(best_aio, 'aio')
    a = a if truthy(a) else {}

    def pick(*vals: Any) -> Any:
        return next((v for v in vals if truthy(v)), vals[-1])

    io = isinstance(plan, list) and any(isinstance(p, dict) and p.get('backend') == 'io_uring' for p in plan)
    if isinstance(plan, dict):
        io = any(p == 'io_uring' for p in [_field(v, 'backend') for v in plan.values()])
    return {'block_size': pick(get(a, 'block_size'), 1048576.0),
            'queue_depth': pick(get(a, 'queue_depth'), 8.0),
            'threads': pick(get(a, 'intra_op_parallelism'), get(a, 'thread_count'), 1.0),
            'backend': 'io_uring' if io else 'libaio',
            'from': 'best-aio.json' if truthy(get(a, 'block_size')) else "DeepSpeed's defaults"}

