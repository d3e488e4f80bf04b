# SPDX-License-Identifier: GPL-2.0-only
"""A fleet's verdicts: each host's figures and checks, the fleet's median,
spread and outliers (docs/fleet.md "Reading the report"; fleet.json).

The rules, per direction (read, write: the tswap points' rw):
- a host's figure is its best point's median GB/s over repeats;
- the fleet median is the median of the hosts' figures;
- an outlier is a host whose figure is below the fleet median x (1 -
  --outlier-pct/100); with fewer than two hosts with a figure, none is;
- DIR_min_gbs: the figure must reach --min-DIR-gbs (when given);
- run: every run of the host must be ok.
A check that has no figure, or a failed run, is an error (verdict ERROR);
else a missed bar or an outlier fails (FAIL); else PASS.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Optional

from ..jqjson import get, jround, join, sort_key, text, truthy, unique

Doc = dict[str, Any]


@dataclass(frozen=True)
class Bars:
    """The bars a host is judged against (docs/fleet.md "Running"):
    min_read, min_write: --min-read-gbs, --min-write-gbs as given (GB/s,
    10^9 bytes/s; "" when not given); outlier_pct: --outlier-pct (percent
    below the fleet median)."""
    min_read: str
    min_write: str
    outlier_pct: float


def median(v: list[float]) -> Optional[float]:
    """The median of v (the mean of the middle two for an even count);
    None for none."""
    s = sorted(v, key=sort_key)
    n = len(s)
    if n == 0:
        return None
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def cv(v: list[float]) -> Optional[float]:
    """The sample standard deviation over the mean; None for fewer than
    two values or a mean of 0."""
    if len(v) < 2:
        return None
    m = _add(v) / len(v)
    if m == 0:
        return None
    return math.sqrt(_add([(x - m) * (x - m) for x in v]) / (len(v) - 1)) / m


def _add(v: list[float]) -> float:
    t = v[0]
    for x in v[1:]:
        t = t + x
    return t


def g(x: Optional[float]) -> str:
    """GB/s as the fleet's texts write it: 3 decimals, "-" for none."""
    return '-' if x is None else text(jround(x * 1000) / 1000)


def pct(x: float) -> str:
    """A percentage: one decimal below 10, else whole."""
    return text(jround(x * 10) / 10 if x < 10 else jround(x))


def _reason(e: str) -> str:
    # "not run: R (at POINT)" and "preflight: R" are R, said once per host
    e = re.sub('^not run: ', '', e, count=1)
    e = re.sub('^preflight: ', '', e, count=1)
    return re.sub(' [(]at [^)]*[)]$', '', e, count=1)


def host_errors(runs: list[Doc]) -> list[Doc]:
    """The reasons of a host's failed runs, first seen first, with how
    many runs each: [{reason, runs}]."""
    out: list[Doc] = []
    for r in runs:
        if r.get('status') == 'ok':
            continue
        e = _reason(r.get('error'))
        for x in out:
            if x['reason'] == e:
                x['runs'] += 1
                break
        else:
            out.append({'reason': e, 'runs': 1})
    return out


def best(agg: Optional[Doc], d: str) -> Optional[Doc]:
    """A host's figure of direction d: its point of rw d with the highest
    median GB/s (a later one wins a tie), {point, gbs, pct_ceiling}."""
    top = None
    for p in get(agg, 'points') or []:
        if p.get('rw') == d and p.get('gbs') is not None and (top is None or not p['gbs'] < top['gbs']):
            top = p
    return None if top is None else {k: top.get(k) for k in ('point', 'gbs', 'pct_ceiling')}


def _host(h: Doc, agg: Any, runs: list[Doc], pre: Any, dirs: list[str]) -> Doc:
    out = dict(h)
    out.update({
        'hostname': get(pre, 'hostname'), 'fio_version': get(pre, 'fio_version'),
        'runs': len(runs), 'ok_runs': sum(1 for r in runs if r.get('status') == 'ok'),
        'errors': host_errors(runs),
        'wall_s': jround(_add([r['wall_s'] if truthy(r.get('wall_s')) else 0 for r in runs] or [0])
                         * 1000) / 1000,
        'ceiling': get(agg, 'ceiling'),
        'best': {d: best(agg, d) for d in dirs}})
    return out


def _last_max(hosts: list[Doc], d: str) -> Any:
    top = None
    for x in hosts:
        if top is None or not x['best'][d]['gbs'] < top['best'][d]['gbs']:
            top = x
    return None if top is None else top['label']


def fleet_figures(hosts: list[Doc], d: str, out_pct: float) -> Doc:
    """The fleet's figures of direction d over the hosts with one: n,
    median, min, max (GB/s), cv, spread_pct ((max - min) / median, %),
    bar (median x (1 - out_pct/100)), min_host, max_host (labels) and
    outliers (the labels below the bar; none with fewer than 2 hosts)."""
    withv = [x for x in hosts if get(x, 'best', d, 'gbs') is not None]
    v = [x['best'][d]['gbs'] for x in withv]
    m = median(v)
    f = {'n': len(v), 'median': m, 'min': min(v) if v else None, 'max': max(v) if v else None,
         'cv': cv(v),
         'spread_pct': 100 * (max(v) - min(v)) / m if truthy(m) and m > 0 else None,
         'bar': m * (1 - out_pct / 100) if truthy(m) else None,
         'min_host': min(withv, key=lambda x: x['best'][d]['gbs'])['label'] if withv else None,
         'max_host': _last_max(withv, d)}
    f['outliers'] = [] if f['n'] < 2 else [x['label'] for x in withv if x['best'][d]['gbs'] < f['bar']]
    return f


def _checks(h: Doc, dirs: list[str], fleet: Doc, bars: Bars) -> list[Doc]:
    def chk(name: str, status: str, msg: str) -> Doc:
        return {'name': name, 'status': status, 'message': msg}
    why = ' (%s)' % text(h['errors'][0]['reason']) if h['errors'] else ''
    n, ok = h['runs'], h['ok_runs']
    out = [chk('run', 'pass' if n > 0 and ok == n else 'error',
               'no run recorded' if n == 0 else 'all %d runs ok' % n if ok == n else
               '%d of %d runs failed: ' % (n - ok, n)
               + join(['%s (%d run(s))' % (text(e['reason']), e['runs']) for e in h['errors']], '; '))]
    for d in dirs:
        v = get(h, 'best', d, 'gbs')
        lim = bars.min_read if d == 'read' else bars.min_write
        if lim != '':
            m = float(lim)
            out.append(chk('%s_min_gbs' % d, 'error' if v is None else 'pass' if v >= m else 'fail',
                           'no successful %s point%s' % (d, why) if v is None else
                           'best %s %s GB/s %s %s GB/s' % (d, g(v), '>=' if v >= m else '<', lim)))
        f = fleet[d]
        out.append(chk('%s_vs_fleet' % d,
                       'error' if v is None else 'pass' if f['n'] < 2 else 'fail' if v < f['bar'] else 'pass',
                       'no successful %s point%s' % (d, why) if v is None else
                       '%s GB/s; only one host has a %s result: nothing to compare with' % (g(v), d)
                       if f['n'] < 2 else
                       '%s GB/s; the fleet median is 0 GB/s: nothing to compare with' % g(v)
                       if f['median'] == 0 else
                       '%s GB/s is %s%% of the fleet median %s GB/s' % (g(v), pct(100 * v / f['median']), g(f['median']))
                       + (': more than %s%% below it (outlier)' % text(bars.outlier_pct) if v < f['bar'] else '')))
    return out


def verdicts(cfg: Doc, aggs: list[Any], res: list[list[Doc]], pre: list[Any],
             plan: list[Doc], bars: Bars) -> Doc:
    """fleet.json before the metadata (tswap.stats.fleet_meta): directions,
    outlier_pct, min_read_gbs, min_write_gbs (GB/s or None), fleet ({DIR:
    fleet_figures}), hosts (sweep.json's fleet.hosts, each with hostname,
    fio_version (the preflight's), runs, ok_runs, errors, wall_s (s),
    ceiling, best, checks, verdict, pct_of_median) and summary ({hosts,
    pass, fail, error}). aggs, res, pre: per host, in host order: its
    aggregate.json, results.json, preflight result.json (or None)."""
    dirs = unique([p.get('rw') for p in plan if p.get('kind') == 'tswap'])
    hs = cfg['fleet']['hosts']

    def at(xs: list[Any], i: int) -> Any:
        return xs[i] if i < len(xs) else None
    hosts = [_host(h, at(aggs, i), at(res, i) or [], at(pre, i), dirs) for i, h in enumerate(hs)]
    fleet = {d: fleet_figures(hosts, d, bars.outlier_pct) for d in dirs}
    judged = []
    for h in hosts:
        checks = _checks(h, dirs, fleet, bars)
        st = [c['status'] for c in checks]
        x = dict(h)
        x.update({'checks': checks,
                  'verdict': 'ERROR' if 'error' in st else 'FAIL' if 'fail' in st else 'PASS',
                  'pct_of_median': {d: 100 * h['best'][d]['gbs'] / fleet[d]['median']
                                    if get(h, 'best', d, 'gbs') is not None and (fleet[d]['median'] or 0) > 0
                                    else None for d in dirs}})
        judged.append(x)
    return {'directions': dirs, 'outlier_pct': bars.outlier_pct,
            'min_read_gbs': None if bars.min_read == '' else float(bars.min_read),
            'min_write_gbs': None if bars.min_write == '' else float(bars.min_write),
            'fleet': fleet, 'hosts': judged,
            'summary': {'hosts': len(judged),
                        'pass': sum(1 for x in judged if x['verdict'] == 'PASS'),
                        'fail': sum(1 for x in judged if x['verdict'] == 'FAIL'),
                        'error': sum(1 for x in judged if x['verdict'] == 'ERROR')}}
