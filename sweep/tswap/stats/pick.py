# SPDX-License-Identifier: GPL-2.0-only
"""The trust flags of a point and the pick among trustworthy points.

docs/sweep.md "How the pick is made" is the reference; each function
names the rule it implements. Points are aggregate.json's point objects
(dicts, as on disk); every function is pure.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Optional

from ..jqjson import text
from .sentence import Decision, Out, sentence

Point = dict[str, Any]


def flags(p: Point) -> list[str]:
    """A point's reasons not to trust it, [] when none: "above the link"
    (GB/s above what its PCIe link carries: tswap.stats.link), "above ceiling"
    (GB/s above CACHE_FACTOR x the device ceiling: a cache), "failed" (no
    ok run), "partial" (some runs failed), "not run", "cv" (CV over
    repeats above the run's cv_limit), "not steady" (fio's steady-state
    detection did not attain in some run)."""
    out = []
    if p.get('above_link'):
        out.append('above the link')
    if p.get('above_ceiling'):
        out.append('above ceiling')
    status = p.get('status')
    if status == 'error':
        out.append('failed')
    elif status == 'partial':
        out.append('partial')
    elif status == 'not run':
        out.append('not run')
    if p.get('cv_flag'):
        out.append('cv')
    if p.get('steady') is False:
        out.append('not steady')
    return out


def cost(p: Point) -> tuple:
    """The cost order among tied configs, cheapest first: fewer intra-op
    threads, then less pinned memory per thread (queue depth x block size
    bytes: DeepSpeed pins queue_depth buffers of block_size), then block
    submit before single submit (fewer io_submit calls), then GB/s. A
    checkpoint point's pinned memory adds the writer's io_buffer_size
    (tensor: writer_factory.py _setup_for_aio pins it): a smaller buffer
    wins a tie."""
    pinned = p['tensor'] if p.get('kind') == 'checkpoint' else 0
    return (p['threads'], p['qd'] * p['block'] + pinned,
            0 if p['submit'] == 'block' else 1, -p['gbs'])


def pct(a: float, b: Optional[float]) -> Optional[float]:
    """a over b in percent above b; None when b is None or 0."""
    if b is None or b == 0:
        return None
    return 100 * (a - b) / b


def _tlo(p: Point) -> float:
    return p['tlo'] if p.get('tlo') is not None else p.get('lo')


def _thi(p: Point) -> float:
    return p['thi'] if p.get('thi') is not None else p.get('hi')


def _widened(p: Point) -> bool:
    return _tlo(p) < p['lo'] or _thi(p) > p['hi']


def within(c: Point, top: Point, tol: float) -> bool:
    """Whether tied point c is within the cost tolerance tol (a fraction)
    of the fastest median top: its interval (thi: its fastest repeat,
    widened by one tensor op) reaches (1 - tol) x top's median. Only a
    point whose every repeat is more than tol below is left out: a window
    on the medians (c.gbs >= (1 - tol) x top.gbs) let a throttled drive's
    start-up burst, which favours large blocks on a short run, decide a
    tie at the cap (tests/drive-sweep.bats "bandwidth-bound": 4m, 1m, 256k
    at 0.312, 0.302, 0.301 GB/s against a 0.300 cap; docs/sweep.md "How
    the pick is made", step 3)."""
    return _thi(c) >= (1 - tol) * top['gbs']


def pick(cands: list[Point], tol: float, flagged: int = 0) -> Optional[Point]:
    """The pick over trustworthy candidates (each with point, gbs: the
    median, lo/hi: min and max over the ok repeats, tlo/thi: the same
    widened by one tensor op of each run, ok_runs and the settings): the
    highest median; every candidate whose widened interval reaches that
    one's (thi >= top.tlo) is tied with it within noise; the pick is the
    cheapest (cost) of the tied within the tolerance (within()). Adds
    tie, tied, runner_up, margin_pct, confidence ("clear", "tie", "low":
    under 3 repeats, "only": no other candidate) and one verdict sentence (tswap.stats.sentence; flagged: the points of the
    direction with a result that are flagged, named by the "only" form).
    None on no candidates."""
    if not cands:
        return None
    s = sorted(cands, key=lambda c: -c['gbs'])
    top = s[0]
    tied = [c for c in s if _thi(c) >= _tlo(top)]
    near = [c for c in tied if within(c, top, tol)]
    p = sorted(near, key=cost)[0]
    others = [c for c in s if c['point'] != p['point']]
    ru = others[0] if others else None
    n = min(p['ok_runs'], ru['ok_runs'] if ru and ru.get('ok_runs') is not None
            else p['ok_runs'])
    if ru is None:
        conf = 'only'
    elif len(tied) > 1:
        conf = 'tie'
    elif n < 3:
        conf = 'low'
    else:
        conf = 'clear'
    widened = any(_widened(c) for c in tied) if conf == 'tie' else \
        bool(ru) and (_widened(p) or _widened(ru))
    out_ = sorted((c for c in tied if c not in near and cost(c) < cost(p)), key=cost)
    d = Decision(
        rw=p.get('rw'), point=p['point'], confidence=conf,
        tied=tuple([p['point']] + [c['point'] for c in tied if c['point'] != p['point']]),
        within=len(near), out=tuple(Out(c['point'], _thi(c)) for c in out_),
        top=top['point'], top_gbs=top['gbs'], tol_pct=tol * 100, widened=widened,
        runner_up=ru['point'] if ru else None,
        margin_pct=pct(p['gbs'], ru['gbs']) if ru else None,
        repeats=n, ok_runs=p['ok_runs'],
        slow=_tlo(p) if widened else p['lo'],
        fast=(_thi(ru) if widened else ru['hi']) if ru else None,
        flagged=flagged)
    out = dict(p)
    out.update({
        'tie': len(tied) > 1,
        'tied': [c['point'] for c in tied],
        'runner_up': ({'point': ru['point'], 'gbs': ru['gbs'], 'lo': ru.get('lo'),
                       'hi': ru.get('hi')} if ru else None),
        'margin_pct': pct(p['gbs'], ru['gbs']) if ru else None,
        'confidence': conf,
        'verdict': sentence(d),
    })
    return out


_NONE_ADVICE = MappingProxyType({
    'cv': 'not repeatable; rerun with a longer --runtime (10 s or more) on an idle machine',
    'above ceiling': 'a cache is serving them; use a target larger than memory, or a block device',
    'above the link': ('faster than the PCIe link carries: a cache on the host is serving them; '
                       'use a target larger than memory, or a block device'),
    'not steady': "fio's steady state did not attain; rerun with a longer --runtime",
    'failed': 'see their errors (report.md, points/*/result.json)',
    'partial': 'some runs failed; see their errors (report.md, points/*/result.json)',
    'not run': 'rerun with --resume',
})


def none_why(agg: dict[str, Any], d: str) -> Optional[str]:
    """Why direction d ("read", "write") has no pick, with what to do, in
    one line, from aggregate.json's points; None when it has none."""
    pts = [p for p in (agg.get('points') or []) if p.get('rw') == d]
    res = [p for p in pts if p.get('gbs') is not None]
    if not pts:
        return None
    if not res and all(p.get('status') == 'not run' for p in pts):
        budget = any(p.get('errors') == ['the budget ran out before it ran'] for p in pts)
        return 'no %s point ran' % d + (': the budget ran out first (Budget)' if budget else '')
    if not res:
        return 'no %s point succeeded: see their errors (report.md, points/*/result.json)' % d
    counts: dict[str, int] = {}
    for p in res:
        for f in p.get('flags') or []:
            counts[f] = counts.get(f, 0) + 1
    # jq: group_by(.) | map({f, n}) | sort_by(-.n): by flag name, then
    # stably by count, most first
    c = sorted(sorted(counts.items()), key=lambda kv: -kv[1])
    listed = ', '.join('%s %s' % (text(n), f) for f, n in c)
    advice = _NONE_ADVICE.get(c[0][0], 'see Warnings') if c else 'see Warnings'
    return 'all %s %s points with a result are flagged (%s): %s' % (
        text(len(res)), d, listed, advice)
