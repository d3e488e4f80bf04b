# SPDX-License-Identifier: GPL-2.0-only
"""tswap-check's checks of each fleet host, judged across the fleet
(docs/fleet.md "Checks"; docs/sweep.md "Checking a host: tswap-check").

"The majority": the value more than half of the hosts that have one agree
on (as tswap.stats.fleet_meta). Across the fleet:
- a host's warn becomes a fail (escalated: "warn") when more than half of
  the hosts with checks pass that check: the odd host is misconfigured;
- fleet.model (warn: another model than the majority's), fleet.firmware
  (fail: another firmware than the majority of the hosts of its model),
  fleet.pcie_link (warn: another link speed or width), fleet.kernel
  (warn); n/a without a value or a majority.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Optional

from ..jqjson import equal, get, group_by, text, truthy
from .fleet_meta import majority

Doc = dict[str, Any]

KEYS = ('model', 'firmware', 'pcie_link', 'kernel', 'numa')
NAMES = MappingProxyType({'model': 'model', 'firmware': 'firmware', 'pcie_link': 'PCIe link', 'kernel': 'kernel',
         'numa': 'NUMA'})
MN = 'NVMe Identify Controller MN'
FR = 'NVMe Identify Controller FR'
LINK = 'sysfs current_link_speed, current_link_width'


def maj(values: list[Any]) -> Any:
    """The value more than half of the non-null values agree on, or None."""
    v = [x for x in values if x is not None]
    return majority(v, len(v))[1]


def locality(c: Optional[Doc]) -> Optional[str]:
    """NUMA locality from the numa.node check: local, remote, partly
    remote; None when unknown."""
    if c is None or c.get('verdict') == 'n/a':
        return None
    if c.get('verdict') == 'ok':
        return 'local'
    return 'remote' if c['advice'].startswith('remote') else 'partly remote'


def fields(c: Optional[Doc]) -> Doc:
    """The fields hosts are compared on, from a host's checks (tswap-check's
    output): model, firmware, pcie_link, kernel (its stack) and numa."""
    if c is None:
        return {}
    numa = [x for x in c.get('checks') or [] if x.get('id') == 'numa.node']
    s = dict(c.get('stack') or {})
    s['numa'] = locality(numa[0] if numa else None)
    return {k: s.get(k) for k in KEYS}


def _src(what: str) -> str:
    return "%s; the fleet's majority (more than half of the hosts with a value)" % what


def chk(id_: str, verdict: str, value: Any, expected: Any, advice: str, source: str) -> Doc:
    """A check as tswap-check writes it."""
    return {'id': id_, 'verdict': verdict, 'value': value, 'expected': expected, 'advice': advice,
            'source': source}


def worst(checks: list[Doc]) -> str:
    """fail, warn, ok or n/a: the worst verdict of checks."""
    v = [c.get('verdict') for c in checks]
    return next((w for w in ('fail', 'warn', 'ok') if w in v), 'n/a')


def fleet_checks(f: Doc, m: Doc, fw: Any, same: int, n: int) -> list[Doc]:
    """A host's fleet.* checks: f its fields, m the fleet's majority, fw the
    majority firmware of the same hosts with its model."""
    model = text(f['model']) if truthy(f.get('model')) else 'unknown'
    out = []
    if f.get('model') is None:
        out.append(chk('fleet.model', 'n/a', None, m['model'], 'the model could not be read', _src(MN)))
    elif m['model'] is None:
        out.append(chk('fleet.model', 'n/a', f['model'], None,
                       'no model is shared by more than half of the %d hosts' % n, _src(MN)))
    elif not equal(f['model'], m['model']):
        out.append(chk('fleet.model', 'warn', f['model'], m['model'],
                       "another drive than the fleet's %s: its own GB/s, firmware line and limits"
                       % text(m['model']), _src(MN)))
    else:
        out.append(chk('fleet.model', 'ok', f['model'], m['model'], "the fleet's model", _src(MN)))
    if f.get('firmware') is None:
        out.append(chk('fleet.firmware', 'n/a', None, fw, 'the firmware revision could not be read', _src(FR)))
    elif same < 2:
        out.append(chk('fleet.firmware', 'n/a', f['firmware'], None, 'the only host with model ' + model, _src(FR)))
    elif fw is None:
        out.append(chk('fleet.firmware', 'n/a', f['firmware'], None,
                       'no firmware is shared by more than half of the %d hosts with model %s' % (same, model),
                       _src(FR)))
    elif not equal(f['firmware'], fw):
        out.append(chk('fleet.firmware', 'fail', f['firmware'], fw,
                       'firmware %s differs from %s on most hosts with model %s: bring it to the '
                       "fleet's revision (nvme fw-download, fw-commit) or check the vendor's notes "
                       'between them' % (text(f['firmware']), text(fw), model), _src(FR)))
    else:
        out.append(chk('fleet.firmware', 'ok', f['firmware'], fw, 'the firmware of most hosts with this model',
                       _src(FR)))
    if f.get('pcie_link') is None or m['pcie_link'] is None:
        out.append(chk('fleet.pcie_link', 'n/a', f.get('pcie_link'), m['pcie_link'],
                       'no PCIe link, or none shared by most hosts', _src(LINK)))
    elif not equal(f['pcie_link'], m['pcie_link']):
        out.append(chk('fleet.pcie_link', 'warn', f['pcie_link'], m['pcie_link'],
                       "another link than most hosts: the slot's generation or lanes, or a link trained "
                       'below its capability (pcie.link_*)', _src(LINK)))
    else:
        out.append(chk('fleet.pcie_link', 'ok', f['pcie_link'], m['pcie_link'], 'the link of most hosts',
                       _src(LINK)))
    if f.get('kernel') is None or m['kernel'] is None:
        out.append(chk('fleet.kernel', 'n/a', f.get('kernel'), m['kernel'], 'no kernel shared by most hosts',
                       _src('uname -r')))
    elif not equal(f['kernel'], m['kernel']):
        out.append(chk('fleet.kernel', 'warn', f['kernel'], m['kernel'],
                       'another kernel than most hosts: aio, io_uring and the block layer change with it',
                       _src('uname -r')))
    else:
        out.append(chk('fleet.kernel', 'ok', f['kernel'], m['kernel'], 'the kernel of most hosts', _src('uname -r')))
    return out


def with_checks(fl: Doc, hc: list[Doc], settings: Any) -> Doc:
    """fleet.json with each host's stack checks. hc: per host, in host
    order, tswap-check's output or {collected: false, note}; settings: the
    aio settings checked against. Adds to each host stack, stack_note,
    stack_checks, stack_verdict (worst; n/a without metadata) and
    stack_differences ([{field, name, value, majority}], None without
    metadata); to the fleet check_settings, check_majority, check_groups
    ([{field, name, groups: [{value, hosts}]}], largest group first) and
    check_summary ({fail, warn, hosts})."""
    C = [None if get(c, 'collected') is False else c for c in hc]
    have = [c for c in C if c is not None]
    n = len(have)
    F = [fields(c) for c in C]
    m = {k: maj([x.get(k) for x in F]) for k in ('model', 'pcie_link', 'kernel', 'numa')}
    okn: dict[str, int] = {}
    for c in have:
        for x in c['checks']:
            if x.get('verdict') == 'ok':
                okn[x['id']] = okn.get(x['id'], 0) + 1
    out = dict(fl)
    out['check_settings'] = settings
    out['check_majority'] = m
    hosts = []
    for i, h in enumerate(fl['hosts']):
        c = C[i] if i < len(C) else None
        x = dict(h)
        if c is None:
            note = get(hc, i, 'note')
            x.update({'stack': None, 'stack_note': note if truthy(note) else 'metadata: not collected',
                      'stack_checks': [], 'stack_verdict': 'n/a', 'stack_differences': None})
        else:
            f = F[i]
            peers = [p for p in have if equal(get(p, 'stack', 'model'), f.get('model'))]
            fw = maj([get(p, 'stack', 'firmware') for p in peers])
            checks = []
            for y in c['checks']:
                if y.get('verdict') == 'warn' and okn.get(y.get('id'), 0) * 2 > n:
                    y = dict(y)
                    y.update({'verdict': 'fail', 'escalated': 'warn',
                              'advice': 'only this host warns (%s of %d hosts ok): %s'
                              % (text(okn[y['id']]), n, text(y.get('advice')))})
                checks.append(y)
            checks += fleet_checks(f, m, fw, len(peers), n)
            mm = dict(m, firmware=fw)
            x.update({'stack': c.get('stack'), 'stack_note': None, 'stack_checks': checks,
                      'stack_verdict': worst(checks),
                      'stack_differences': [{'field': k, 'name': NAMES[k], 'value': f[k], 'majority': mm[k]}
                                            for k in KEYS if mm[k] is not None and f.get(k) is not None
                                            and not equal(f[k], mm[k])]})
        hosts.append(x)
    out['hosts'] = hosts
    groups = []
    for k in KEYS:
        ent = [{'label': get(hosts, i, 'label'), 'v': F[i].get(k) if truthy(F[i].get(k)) else 'unknown'}
               for i, c in enumerate(C) if c is not None]
        by = group_by(ent, lambda e: e['v'])
        if len(by) > 1:
            gs = [{'value': g[0]['v'], 'hosts': [e['label'] for e in g]} for g in by]
            gs.sort(key=lambda x: -len(x['hosts']))
            groups.append({'field': k, 'name': NAMES[k], 'groups': gs})
    out['check_groups'] = groups
    allc = [y for h in hosts for y in h['stack_checks']]
    out['check_summary'] = {'fail': sum(1 for y in allc if y.get('verdict') == 'fail'),
                            'warn': sum(1 for y in allc if y.get('verdict') == 'warn'),
                            'hosts': [h.get('label') for h in hosts if h.get('stack_verdict') == 'fail']}
    return out
