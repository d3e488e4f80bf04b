# SPDX-License-Identifier: GPL-2.0-only
"""meta.json: what was measured (docs/sweep.md "meta.json"), from the
lines of sweep/lib/meta-collect.sh ("key<TAB>value": the JSON text of
lsblk -J, findmnt -J, nvme id-ctrl -o json and lscpu -J, sysfs values,
versions; the same collector the fleet's hosts run).

Every field is present; a value that could not be read is null and a
"note" next to it says why (not an NVMe device, no PCIe link, ...). Units:
bytes, KiB where the sysfs name says _kb; link speeds as sysfs spells them
("16.0 GT/s PCIe").
"""

from __future__ import annotations

import re
from typing import Any, Optional

from .. import jqjson
from .result import parse_object

_SYSFS = re.compile(r'queue\..*|pci\..*|size_sectors|poll_queues', re.S)
_NUM = re.compile(r'[ \t\r\n]*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[ \t\r\n]*')
_SPECIAL = re.compile(r'[ \t\r\n]*([+-][a-zA-Z]+|[A-Zi][a-zA-Z]*)[ \t\r\n]*')
_TRIM = re.compile(r'^\s+|\s+$')


def kv_lines(text: str) -> Optional[dict[str, str]]:
    """The collector's lines as a dict, as meta.sh read them (bash read
    with IFS=TAB: the key, then the rest; only newline-terminated lines);
    None when they are not the collector's (no "tswap-meta<TAB>1")."""
    m: dict[str, str] = {}
    for line in text.split('\n')[:-1]:
        parts = line.strip('\t').split('\t', 1)
        k = parts[0]
        v = parts[1].lstrip('\t').rstrip('\t') if len(parts) > 1 else ''
        if k:
            m[k] = v
    return m if m.get('tswap-meta') == '1' else None


def _obj(text: str, absent: Any) -> Any:
    """text as a JSON object; absent when it is empty or not one."""
    v = parse_object(text)
    return absent if v is None else v


def num(v: Any) -> Any:
    """A sysfs or lscpu value as a number (jq's tonumber): null for null,
    "" and text that is not one."""
    if v is None or v == '':
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v
    if not isinstance(v, str):
        return None
    if _NUM.fullmatch(v):
        return float(v)
    if _SPECIAL.fullmatch(v):
        try:
            return float(v.strip(' \t\r\n'))
        except ValueError:
            return None
    return None


def _str(v: Any) -> Any:
    return None if v is None or v == '' else v


def _or(x: Any, d: Any) -> Any:
    return d if x is None or x is False else x


def _trim(v: Any) -> Any:
    return _TRIM.sub('', v) if v is not None and v is not False else v


def meta(target: str, engine: str, tswap: str, m: dict[str, str]) -> dict:
    """meta.json of target (as the sweep names it) read through engine
    (the path it loads) by tswap (its version), from the collector's
    key/value dict m (kv_lines)."""
    g = m.get
    kind = g('kind') or 'file'
    fs = _obj(g('fs') or '', {})
    blk = _obj(g('blk') or '', {})
    nvme = _obj(g('nvme') or '', None)
    lscpu = _obj(g('lscpu') or '', {})
    sysfs = {k: v.split('\t')[0] for k, v in m.items() if _SYSFS.fullmatch(k)}
    b = _or(_first(blk.get('blockdevices')), None)
    mnt = _or(_first(fs.get('filesystems')), None)
    pci = _str(sysfs.get('pci.address'))
    nv = nvme or {}
    bb = b or {}

    def cpu(f: str) -> Any:
        rows = lscpu.get('lscpu')
        rows = list(rows.values()) if isinstance(rows, dict) else rows if isinstance(rows, list) else []
        return _or(next((r.get('data') for r in rows if isinstance(r, dict) and r.get('field') == f), None), None)
    if kind == 'block':
        filesystem = None
    elif mnt is None:
        filesystem = {'note': 'findmnt found no filesystem'}
    else:
        filesystem = {'mountpoint': mnt.get('target'), 'type': mnt.get('fstype'),
                      'options': mnt.get('options'), 'source': mnt.get('source')}
    if b is None:
        device: dict = {'note': ('lsblk could not read %s' % (g('dev') or '') if kind == 'block'
                                 else 'the filesystem is not on a block device (%s)'
                                 % jqjson.text(_or((mnt or {}).get('source'), 'unknown')))}
        queue = None
    else:
        device = {'path': b.get('path'), 'name': b.get('kname'), 'type': b.get('type'),
                  'disk': b.get('pkname') if b.get('type') == 'part' else b.get('kname'),
                  'model': _trim(_str(_or(nv.get('mn'), b.get('model')))),
                  'firmware': _trim(_str(_or(nv.get('fr'), b.get('rev')))),
                  'serial_sha256_12': _str(g('serial_hash') or ''),
                  'capacity_bytes': b.get('size'), 'logical_block_size': b.get('log-sec'),
                  'physical_block_size': b.get('phy-sec'), 'rotational': b.get('rota'),
                  'transport': b.get('tran')}
        queue = {'scheduler': b.get('sched'), 'nr_requests': b.get('rq-size'),
                 'max_sectors_kb': num(sysfs.get('queue.max_sectors_kb')),
                 'max_hw_sectors_kb': num(sysfs.get('queue.max_hw_sectors_kb')),
                 'io_poll': num(sysfs.get('queue.io_poll')),
                 'dma_alignment': num(sysfs.get('queue.dma_alignment')),
                 'nvme_poll_queues': num(sysfs.get('poll_queues'))}
    if pci is None:
        pcie: dict = {'note': 'no block device' if b is None else
                      'no PCI device above %s (loop, virtual or non-PCI device)' % jqjson.text(b.get('kname'))}
    else:
        cs, cw = sysfs.get('pci.current_link_speed'), sysfs.get('pci.current_link_width')
        ms, mw = sysfs.get('pci.max_link_speed'), sysfs.get('pci.max_link_width')
        pcie = {'address': pci, 'current_link_speed': _str(cs), 'current_link_width': num(cw),
                'max_link_speed': _str(ms), 'max_link_width': num(mw)}
        if _str(cs) is None:
            pcie['note'] = '%s has no PCIe link attributes (conventional PCI, e.g. a virtio disk)' % pci
        else:
            pcie['downgraded'] = cs != ms or cw != mw
    node = num(sysfs.get('pci.numa_node'))
    nonode = node is None or node != node or node < 0  # jq: nan < 0
    numa = {'device_node': None if nonode else node, 'cpus_allowed': _str(g('cpus_allowed') or ''),
            'online_nodes': _str(g('online_nodes') or '')}
    if nonode:
        numa['note'] = 'the device has no NUMA node (single node, or no PCI device)'
    if nvme is None:
        nvmed: dict = {'note': 'nvme-cli is not installed (nvme id-ctrl)'
                       if re.match('nvme', _or(bb.get('kname'), '')) else 'not an NVMe device'}
    else:
        nvmed = {'model': _TRIM.sub('', nvme['mn']), 'firmware': _TRIM.sub('', nvme['fr']),
                 'serial_sha256_12': _str(g('serial_hash') or ''), 'vid': nvme.get('vid'),
                 'mdts': nvme.get('mdts'), 'nn': nvme.get('nn'), 'sqes': nvme.get('sqes'),
                 'cqes': nvme.get('cqes')}
    return {
        'target': {'path': target, 'kind': kind, 'filesystem': filesystem},
        'device': device,
        'queue': queue,
        'pcie': pcie,
        'numa': numa,
        'nvme': nvmed,
        'host': {'name': g('host') or '', 'kernel': g('kernel') or '', 'cpu_model': cpu('Model name:'),
                 'cpus': num(cpu('CPU(s):')), 'numa_nodes': num(cpu('NUMA node(s):')),
                 'memory_bytes': num(g('memtotal') or ''), 'fs_aio_max_nr': num(g('aio_max_nr') or ''),
                 'kernel_io_uring_disabled': num(g('io_uring_disabled') or '')},
        'versions': {'tswap': tswap, 'fio': _str(g('fio') or ''), 'engine': _str(engine),
                     'nvme_cli': _str(g('nvme_cli') or '')},
    }


def _first(v: Any) -> Any:
    """jq's .[0] of an array (null for null or [])."""
    return v[0] if isinstance(v, list) and v else None
