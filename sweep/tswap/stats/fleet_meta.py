# SPDX-License-Identifier: GPL-2.0-only
"""What each host of a fleet is, against the fleet's majority (docs/fleet.md
"What each host is"): each host's metadata, its key fields, how it differs
from the majority, and the slow hosts grouped by those differences.

The majority of a field: the value more than half of the hosts with
metadata have; a field without one (or that no host could read) is not
compared. The serial number and paths never are (they differ by nature).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from ..jqjson import dumps, equal, get, join, jround, text

Doc = dict[str, Any]

# field: path in meta.json (sweep.md "Outputs in the run directory")
FIELDS = MappingProxyType({
    'model': ('device', 'model'), 'firmware': ('device', 'firmware'),
    'capacity_bytes': ('device', 'capacity_bytes'),
    'logical_block_size': ('device', 'logical_block_size'),
    'physical_block_size': ('device', 'physical_block_size'),
    'rotational': ('device', 'rotational'), 'transport': ('device', 'transport'),
    'pcie_speed': ('pcie', 'current_link_speed'), 'pcie_width': ('pcie', 'current_link_width'),
    'pcie_max_speed': ('pcie', 'max_link_speed'), 'pcie_max_width': ('pcie', 'max_link_width'),
    'numa_node': ('numa', 'device_node'),
    'scheduler': ('queue', 'scheduler'), 'nr_requests': ('queue', 'nr_requests'),
    'max_sectors_kb': ('queue', 'max_sectors_kb'), 'poll_queues': ('queue', 'nvme_poll_queues'),
    'fs_type': ('target', 'filesystem', 'type'), 'fs_options': ('target', 'filesystem', 'options'),
    'kernel': ('host', 'kernel'), 'cpu_model': ('host', 'cpu_model'), 'cpus': ('host', 'cpus'),
    'memory_bytes': ('host', 'memory_bytes'), 'fio': ('versions', 'fio'),
    'aio_max_nr': ('host', 'fs_aio_max_nr'), 'io_uring_disabled': ('host', 'kernel_io_uring_disabled'),
})

NAMES = MappingProxyType({
    'model': 'model', 'firmware': 'firmware', 'capacity_bytes': 'capacity',
    'logical_block_size': 'logical block size', 'physical_block_size': 'physical block size',
    'rotational': 'rotational', 'transport': 'transport', 'pcie_speed': 'PCIe link speed',
    'pcie_width': 'PCIe', 'pcie_max_speed': 'PCIe max link speed', 'pcie_max_width': 'PCIe max width',
    'numa_node': 'NUMA node', 'scheduler': 'scheduler', 'nr_requests': 'nr_requests',
    'max_sectors_kb': 'max_sectors_kb', 'poll_queues': 'nvme poll_queues', 'fs_type': 'filesystem',
    'fs_options': 'mount options', 'kernel': 'kernel', 'cpu_model': 'CPU', 'cpus': 'CPUs',
    'memory_bytes': 'memory', 'fio': 'fio', 'aio_max_nr': 'fs.aio-max-nr',
    'io_uring_disabled': 'kernel.io_uring_disabled',
})


def fields(meta: Any) -> Doc:
    """A meta.json's key fields, flat (None where absent); {} when not
    collected."""
    if get(meta, 'collected') is False:
        return {}
    return {k: get(meta, *p) for k, p in FIELDS.items()}


def gib(x: float) -> str:
    """Bytes in GiB with one decimal: "1.5 GiB"."""
    return '%s GiB' % text(jround(x / 1073741824 * 10) / 10)


def show(v: Any, f: str) -> str:
    """A field's value as the report writes it ("unknown" for none)."""
    if v is None:
        return 'unknown'
    if f in ('pcie_width', 'pcie_max_width'):
        return 'x' + text(v)
    if f in ('capacity_bytes', 'memory_bytes'):
        return gib(v)
    if f in ('logical_block_size', 'physical_block_size'):
        return text(v) + ' B'
    return text(v)


def majority(values: list[Any], n: int) -> tuple[bool, Any]:
    """(True, the value) when more than half of n agree on one non-null
    value (as JSON: 1 and 1.0 alike), else (False, None)."""
    count: dict[str, list[Any]] = {}
    for v in values:
        if v is not None:
            count.setdefault(dumps(v, compact=True), []).append(v)
    for vs in count.values():
        if len(vs) * 2 > n:
            return True, vs[0]
    return False, None


def _slow_text(hosts: list[str], ns: int, what: str) -> str:
    return '%d of %d slow host%s: %s (%s)' % (len(hosts), ns, '' if ns == 1 else 's', what,
                                              join(hosts, ', '))


def slow_groups(slow: list[Doc]) -> list[Doc]:
    """The slow hosts (verdict FAIL) grouped by each way they differ from
    the majority, largest group first (then by field; a host may be in
    several), then those that differ in no recorded field, then those
    without metadata: [{hosts, difference, text}]."""
    groups: dict[str, list[tuple[Any, Doc]]] = {}
    for h in slow:
        for d in h.get('differences') or []:
            groups.setdefault(dumps([d.get('field'), d.get('value')], compact=True), []).append((h.get('label'), d))
    out = [{'hosts': [lab for lab, _ in g], 'difference': g[0][1]} for _, g in sorted(groups.items())]
    out.sort(key=lambda x: (-len(x['hosts']), x['difference']['field']))
    ns = len(slow)
    for x in out:
        d = x['difference']
        f = d['field']
        x['text'] = _slow_text(x['hosts'], ns, '%s %s instead of %s' % (
            NAMES.get(f, f), show(d.get('value'), f), show(d.get('majority'), f)))
    same = [h.get('label') for h in slow if h.get('differences') == []]
    if same:
        out.append({'hosts': same, 'difference': None,
                    'text': _slow_text(same, ns, "no difference from the fleet's majority in the recorded fields")})
    none = [h.get('label') for h in slow if h.get('differences') is None]
    if none:
        out.append({'hosts': none, 'difference': None, 'text': _slow_text(none, ns, 'metadata not collected')})
    return out


def with_meta(fl: Doc, metas: list[Any]) -> Doc:
    """fleet.json (tswap.stats.fleet.verdicts) with each host's meta (its
    meta.json, or {collected: false, note}), fields and differences
    ([{field, value, majority}], None without metadata), and the fleet's
    meta_majority ({field: value}) and slow_groups."""
    def at(i: int) -> Any:
        return metas[i] if i < len(metas) else None
    hosts = []
    for i, h in enumerate(fl['hosts']):
        x = dict(h)
        x.update({'meta': at(i), 'fields': fields(at(i)) if i < len(metas) else None})
        hosts.append(x)
    withmeta = [h for h in hosts if get(h, 'meta', 'collected') is not False]
    maj: Doc = {}
    for k in (withmeta[0]['fields'] if withmeta else {}):
        ok, v = majority([get(h, 'fields', k) for h in withmeta], len(withmeta))
        if ok:
            maj[k] = v
    for h in hosts:
        h['differences'] = None if get(h, 'meta', 'collected') is False else [
            {'field': k, 'value': get(h, 'fields', k), 'majority': v}
            for k, v in maj.items() if not equal(get(h, 'fields', k), v)]
    out = dict(fl)
    out['hosts'] = hosts
    out['meta_majority'] = maj
    out['slow_groups'] = slow_groups([h for h in hosts if h.get('verdict') == 'FAIL'])
    return out


