# SPDX-License-Identifier: GPL-2.0-only
"""aggregate.json: per-point medians, min-max intervals and CV over the
runs, the ceiling per direction, % of ceiling, the trust flags, and the
picks (best read, write, combined, readwrite and best-aio's libaio
source), each from trustworthy points only (docs/sweep.md "How the pick
is made", "Repeats and the CV limit").

Inputs are the documents as on disk (results.json's run objects,
plan.json, meta.json) and the run's limits (Limits); the output is the
document aggregate.json holds, key for key.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Any, Optional

from ..plan.points import MEASURED
from .link import ceiling_above_link, fleet_link, link_rate
from .pick import flags, pick

Doc = dict[str, Any]


@dataclass(frozen=True)
class Limits:
    """The run's trust limits (state.sh; docs/sweep.md).

    cvflag: a point's CV is never flagged below it (fraction, 0.05);
    cvrel: ... nor below cvrel x the median CV of the run's other points;
    cvmax: a CV above it is always flagged (fraction); cache: GB/s above
    cache x the device ceiling is "above ceiling"; costtol: the pick's
    cost tolerance (fraction of the fastest median, pick()); cvtrust:
    False for the fleet-wide aggregate, whose CV is the spread between
    hosts, not repeatability."""
    cvflag: float
    cvrel: float
    cvmax: float
    cache: float
    costtol: float
    cvtrust: bool = True


def median(xs: list[Optional[float]]) -> Optional[float]:
    """The median of the values that are known; None when none is."""
    v = sorted(x for x in xs if x is not None)
    n = len(v)
    if n == 0:
        return None
    if n % 2 == 1:
        return v[n // 2]
    return (v[n // 2 - 1] + v[n // 2]) / 2


def cv(xs: list[float]) -> Optional[float]:
    """The coefficient of variation (sample standard deviation over the
    mean); None under 2 values or at a zero mean."""
    n = len(xs)
    if n < 2:
        return None
    m = sum(xs) / n
    if m == 0:
        return None
    return math.sqrt(sum((x - m) * (x - m) for x in xs) / (n - 1)) / m


def opq(run: Doc) -> float:
    """A run's GB/s resolution: fio counts whole tensor-swap operations
    (bs = the tensor), so a run that completed n per handle resolves its
    GB/s to 1/n of it (at most 1); 0 without the byte counts."""
    handles = run.get('handles') or []
    b = sum(h['bytes'] for h in handles if h.get('bytes') is not None) if handles else 0
    tensor = run.get('tensor') or 0
    if tensor <= 0 or b <= 0:
        return 0
    return min(max(len(handles), 1) * tensor / b, 1)


def _max(xs: list) -> Any:
    return max(xs) if xs else None


def _min(xs: list) -> Any:
    return min(xs) if xs else None


def _tri(xs: list, on: Any) -> Optional[bool]:
    # jq: if any(. == on) then on elif any(. == not on) then not on
    if any(x is on for x in xs):
        return on
    if any(x is (not on) for x in xs):
        return not on
    return None


def point_stats(p: Doc, runs: list[Doc]) -> Doc:
    """One plan point with its runs' statistics (the medians over its ok
    runs; the interval tlo..thi widened by one tensor op of each run: 3
    repeats of a few ops each can miss the count's own step)."""
    ok = [r for r in runs if r.get('status') == 'ok']
    g = [r['gbs'] for r in ok]
    if ok and len(ok) == len(runs):
        status = 'ok'
    elif ok:
        status = 'partial'
    elif not runs:
        status = 'not run'
    else:
        status = 'error'
    steadies = [r.get('steady') for r in ok]
    if any(s is False for s in steadies):
        steady = False
    elif steadies and all(s is True for s in steadies):
        steady = True
    else:
        steady = None
    out = dict(p)
    out.update({
        'runs': len(runs), 'ok_runs': len(ok), 'status': status,
        'errors': [r.get('error') for r in runs if r.get('status') != 'ok'],
        'gbs': median(g), 'cv': cv(g), 'lo': _min(g), 'hi': _max(g),
        'tlo': _min([r['gbs'] * (1 - opq(r)) for r in ok]),
        'thi': _max([r['gbs'] * (1 + opq(r)) for r in ok]),
        'opq': _max([opq(r) for r in ok]),
        'steady': steady,
        'steady_s': _max([r['steady_s'] for r in ok if r.get('steady_s') is not None]),
        'steady_op_runs': len([r for r in ok if (r.get('steady_op_jobs') or 0) > 0]),
        'drops': _tri([r.get('drops') for r in ok], True),
        'drop_pct': _max([r['drop_pct'] for r in ok if r.get('drop_pct') is not None]),
        'ops_per_s': median([r.get('ops_per_s') for r in ok]),
        'clat_p50_us': median([r.get('clat_p50_us') for r in ok]),
        'clat_p99_us': median([r.get('clat_p99_us') for r in ok]),
        'clat_p999_us': median([r.get('clat_p999_us') for r in ok]),
        'submit_per_gb': median([r['submit_per_gb'] for r in ok
                                 if r.get('submit_per_gb') is not None]),
    })
    ranks = p.get('ranks')
    if (ranks is not None and ranks > 1) or p.get('rw') == 'readwrite':
        def known(k: str) -> list:
            return [r[k] for r in ok if r.get(k) is not None and r.get(k) is not False]
        by_target: dict[str, list] = {}
        for r in ok:
            for t in r.get('targets') or []:
                by_target.setdefault(t['target'], []).append(t.get('gbs'))
        out.update({
            'slowest_rank_gbs': median(known('slowest_rank_gbs')),
            'read_gbs': median(known('read_gbs')),
            'write_gbs': median(known('write_gbs')),
            'targets': [{'target': k, 'gbs': median(v)} for k, v in sorted(by_target.items())],
        })
    return out


def _others_median(cvs: list[float], x: float) -> Optional[float]:
    # the median of the sorted CVs without one copy of x (which is in them)
    k = bisect.bisect_left(cvs, x)
    m = len(cvs) - 1

    def r(j: int) -> float:
        return cvs[j] if j < k else cvs[j + 1]
    if m <= 0:
        return None
    if m % 2 == 1:
        return r((m - 1) // 2)
    return (r(m // 2 - 1) + r(m // 2)) / 2


def cv_limit(p: Doc, cvs: list[float], lim: Limits) -> float:
    """The CV above which a point is "not repeatable": above cvflag and
    above cvrel x the median CV of the run's other points (less
    repeatable than the machine) and above one tensor op of its runs
    (repeats of n whole ops cannot agree closer than 1/n), or above cvmax
    (not a measurement). When every point is as noisy (a virtualized
    host) none is flagged: their intervals overlap and the pick says tie
    within noise."""
    c = [lim.cvflag, p.get('opq') or 0]
    if p.get('cv') is not None:
        om = _others_median(cvs, p['cv'])
        if om is not None:
            c.append(lim.cvrel * om)
    return min(max(c), lim.cvmax)


def ceiling_unrepeated(c: Doc, cvs: list[float], lim: Limits) -> Optional[Doc]:
    """Why ceiling c (a ceiling point's statistics, point_stats) does not
    repeat, None when it does. A ceiling is measured like a point
    (docs/sweep.md "What a run does", step 2): its repeats' CV above the
    limit a point gets (cv_limit; the median CV is the run's points',
    the ceiling not among them), or fio's steady state not attained in
    some repeat. One that does not repeat flags no point "above ceiling":
    its median is not the device's rate (issue 38: 0.041, 3.12 and 4.015
    GB/s, median 3.12, flagged the two fastest writes). The answer is what
    aggregate.json's ceiling_unrepeated holds per key: gbs (median), lo,
    hi (GB/s), cv, cv_limit (fractions), ok_runs, steady, why ("cv", "not
    steady"). A single run cannot be judged and counts as repeating; nor
    is a fleet-wide ceiling's CV (lim.cvtrust false: the spread between
    hosts) a repeat's."""
    m = median(cvs)
    limit = min(max([lim.cvflag, c.get('opq') or 0] + ([lim.cvrel * m] if m is not None else [])),
                lim.cvmax)
    why = []
    if lim.cvtrust and c.get('cv') is not None and c['cv'] > limit:
        why.append('cv')
    if c.get('steady') is False:
        why.append('not steady')
    if not why:
        return None
    return {'point': c.get('point'), 'gbs': c.get('gbs'), 'lo': c.get('lo'), 'hi': c.get('hi'),
            'cv': c.get('cv'), 'cv_limit': limit, 'ok_runs': c.get('ok_runs'),
            'steady': c.get('steady'), 'why': why}


def above_ceiling(p: Doc, c: Doc, lim: Limits) -> bool:
    """Whether point p (point_stats) is above ceiling c (the ceiling
    point's statistics) beyond the noise of both: p's slowest repeat (tlo:
    less one tensor op) over lim.cache x c's fastest (thi: plus one op),
    so only a point whose every repeat beats every repeat of the ceiling
    by the cache factor is flagged, as points are tied within noise when
    their intervals overlap (docs/sweep.md "How the pick is made"). A
    median over the median let the ceiling's slower repeats (a busy
    machine, a slow first write) disqualify a point at the device's rate.
    Across a fleet (lim.cvtrust false) the intervals are the spread
    between hosts, not noise: the medians."""
    if not lim.cvtrust:
        return p['gbs'] > lim.cache * c['gbs']
    lo = p['tlo'] if p.get('tlo') is not None else p['gbs']
    hi = c['thi'] if c.get('thi') is not None else c['gbs']
    return lo > lim.cache * hi


def _cfg(p: Doc) -> Doc:
    return {k: p.get(k) for k in ('backend', 'tensor', 'block', 'qd', 'submit',
                                  'window', 'threads', 'iodepth')}


def _source(p: Doc, why: str) -> Doc:
    out = _cfg(p)
    for k in ('point', 'gbs', 'lo', 'hi', 'tie', 'tied', 'runner_up', 'margin_pct',
              'confidence', 'verdict'):
        out[k] = p.get(k)
    out['why'] = why
    return out


def aggregate(results: list[Doc], plan: Any, lim: Limits,
              meta: Optional[Doc] = None, link_metas: Optional[list[Any]] = None) -> Doc:
    """aggregate.json from results.json's runs, the plan (plan.json's
    document, or its points) and the limits; meta.json as .meta when
    given. The PCIe link's rate (tswap.stats.link) from link_metas (a
    fleet's hosts' meta.json: fleet_link) when given, else from meta;
    a point above it gets above_link true and the flag "above the link",
    and the document a link key (neither when no link is known); a
    ceiling above it flags nothing (ceiling_above_link, only then)."""
    by: dict[str, list[Doc]] = {}
    for x in results:
        by.setdefault(x['point'], []).append(x)
    points = plan['points'] if isinstance(plan, dict) else plan
    pts = [point_stats(p, by.get(p['point'], [])) for p in points]
    # checkpoint points (tswap.plan.checkpoint) are measured as tswap's
    cvs = sorted(p['cv'] for p in pts if p.get('kind') in MEASURED and p.get('cv') is not None)
    cpt: dict[str, Doc] = {}
    for p in pts:
        if p.get('kind') == 'ceiling' and p.get('gbs') is not None:
            k = p.get('ckey') or p.get('rw')
            # the faster of a key's ceilings (1 job, J jobs); the first of equals
            if k not in cpt or p['gbs'] > cpt[k]['gbs']:
                cpt[k] = p
    ceiling = {k: cpt[k]['gbs'] for k in sorted(cpt)}
    noisy = {k: x for k, x in ((k, ceiling_unrepeated(cpt[k], cvs, lim)) for k in sorted(cpt))
             if x is not None}
    link = fleet_link(link_metas) if link_metas is not None else link_rate(meta)
    # a ceiling above the link was served by a cache: it flags nothing either
    cached = {k: x for k, x in ((k, ceiling_above_link(ceiling[k], cpt[k].get('point'), link))
                                for k in sorted(cpt)) if x is not None}
    out_points = []
    for p in pts:
        if p.get('kind') not in MEASURED:
            continue
        ck = p.get('ckey') or p.get('rw')
        c = ceiling.get(ck)
        limit = cv_limit(p, cvs, lim)
        q = dict(p)
        have = c is not None and p.get('gbs') is not None
        q.update({
            'pct_ceiling': 100 * p['gbs'] / c if have else None,
            'cv_limit': limit,
            'cv_flag': (p.get('cv') or 0) > limit,
            # a ceiling that does not repeat, or above the link, flags nothing
            'above_ceiling': (above_ceiling(p, cpt[ck], lim) if have and ck not in noisy
                              and ck not in cached else False),
        })
        if link is not None and p.get('gbs') is not None and p['gbs'] > link['gbs']:
            q['above_link'] = True
        q['flags'] = [f for f in flags(q) if lim.cvtrust or f != 'cv']
        q['trusted'] = q.get('gbs') is not None and not q['flags']
        out_points.append(q)
    doc: Doc = {'ceiling': ceiling}
    if noisy:
        doc['ceiling_unrepeated'] = noisy
    if cached:
        doc['ceiling_above_link'] = cached
    if link is not None:
        doc['link'] = link
    doc.update({'cv_median': median(cvs), 'points': out_points})
    trusted = [p for p in out_points if p['trusted']]
    r0 = min((p.get('ranks') or 1 for p in trusted), default=1)
    good = [p for p in trusted if (p.get('ranks') or 1) == r0]
    tol = lim.costtol

    def flagged(rw: str) -> int:
        # a pick with no other candidate says how many points of its
        # direction are flagged (tswap.stats.sentence, the "only" form)
        return len([p for p in out_points if p.get('rw') == rw
                    and p.get('gbs') is not None and not p['trusted']])

    def best(rw: str) -> Optional[Doc]:
        return pick([p for p in good if p.get('rw') == rw], tol, flagged(rw))

    writes = {}
    for w in good:
        if w.get('rw') == 'write':
            writes[tuple(_cfg(w).items())] = w
    pairs = []
    for r in good:
        if r.get('rw') != 'read':
            continue
        w = writes.get(tuple(_cfg(r).items()))
        if w is None:
            continue
        pair = _cfg(r)
        pt = r['point'][5:] if r['point'].startswith('read-') else r['point']
        pair.update({
            'point': pt, 'ok_runs': min(r['ok_runs'], w['ok_runs']),
            'read_gbs': r['gbs'], 'write_gbs': w['gbs'], 'sum_gbs': r['gbs'] + w['gbs'],
            'gbs': r['gbs'] + w['gbs'], 'lo': r['lo'] + w['lo'], 'hi': r['hi'] + w['hi'],
            'tlo': r['tlo'] + w['tlo'], 'thi': r['thi'] + w['thi']})
        pairs.append(pair)
    combined = pick(pairs, tol)
    aio_both = pick([p for p in pairs if p.get('backend') == 'libaio'], tol)
    if aio_both is not None:
        aio_both = {k: v for k, v in aio_both.items() if k not in ('read_gbs', 'write_gbs')}
        aio_both['why'] = 'Best libaio read + write GB/s (sum)'
    groups: dict[str, list[Doc]] = {}
    for p in good:
        if p.get('backend') == 'libaio' and p.get('rw') != 'readwrite':
            groups.setdefault(p['rw'], []).append(p)
    aio_one = None
    for rw in sorted(groups):
        x = pick(groups[rw], tol, flagged(rw))
        # jq max_by: a later maximum wins a tie
        if aio_one is None or x['gbs'] >= aio_one['gbs']:
            aio_one = x
    if aio_one is not None:
        aio_one = _source(aio_one, 'Best libaio %s GB/s' % aio_one['rw'])
    aio_mixed = pick([p for p in good if p.get('backend') == 'libaio'
                      and p.get('rw') == 'readwrite'], tol)
    if aio_mixed is not None:
        aio_mixed = _source(aio_mixed, 'Best libaio readwrite GB/s (a read and a write '
                            'handle at once, combined)')
    doc['trust'] = {
        'trusted': len(trusted),
        'flagged': len([p for p in out_points if p.get('gbs') is not None and not p['trusted']]),
        'libaio_with_result': len([p for p in out_points if p.get('backend') == 'libaio'
                                   and p.get('gbs') is not None]),
    }
    doc['best'] = {
        'read': best('read'), 'write': best('write'), 'combined': combined,
        'readwrite': best('readwrite'),
        'aio_source': aio_mixed or aio_both or aio_one,
    }
    if meta is not None:
        doc['meta'] = meta
    return doc
