# SPDX-License-Identifier: GPL-2.0-only
"""The trust flags of a point and the pick among trustworthy points.

docs/sweep.md "How the pick is made" is the reference; each function
names the rule it implements. Points are aggregate.json's point objects
(dicts, as on disk); every function is pure.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Optional

from ..jqjson import jround, text

Point = dict[str, Any]


def flags(p: Point) -> list[str]:
    """A point's reasons not to trust it, [] when none: "above ceiling"
    (GB/s above CACHE_FACTOR x the device ceiling: a cache), "failed" (no
    ok run), "partial" (some runs failed), "not run", "cv" (CV over
    repeats above the run's cv_limit), "not steady" (fio's steady-state
    detection did not attain in some run)."""
    out = []
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
    submit before single submit (fewer io_submit calls), then GB/s."""
    return (p['threads'], p['qd'] * p['block'],
            0 if p['submit'] == 'block' else 1, -p['gbs'])


def pct(a: float, b: Optional[float]) -> Optional[float]:
    """a over b in percent above b; None when b is None or 0."""
    if b is None or b == 0:
        return None
    return 100 * (a - b) / b


def r1(x: Optional[float]) -> Optional[float]:
    """x rounded to one decimal (jq: . * 10 | round / 10); None stays
    None (a runner-up at 0 GB/s has no margin)."""
    return None if x is None else jround(x * 10) / 10


def g3(x: Optional[float]) -> Optional[float]:
    """x rounded to three decimals; None stays None."""
    return None if x is None else jround(x * 1000) / 1000


def names(xs: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    if len(xs) <= 1:
        return xs[0] if xs else ''
    return ', '.join(xs[:-1]) + ' and ' + xs[-1]


def _tlo(p: Point) -> float:
    return p['tlo'] if p.get('tlo') is not None else p.get('lo')


def _thi(p: Point) -> float:
    return p['thi'] if p.get('thi') is not None else p.get('hi')


def _widened(p: Point) -> bool:
    return _tlo(p) < p['lo'] or _thi(p) > p['hi']


def pick(cands: list[Point], tol: float) -> Optional[Point]:
    """The pick over trustworthy candidates (each with point, gbs: the
    median, lo/hi: min and max over the ok repeats, tlo/thi: the same
    widened by one tensor op of each run, ok_runs and the settings): the
    highest median; every candidate whose widened interval reaches that
    one's (thi >= top.tlo) is tied with it within noise; the pick is the
    cheapest (cost) of the tied whose median is at least (1 - tol) x the
    highest. Adds tie, tied, runner_up, margin_pct, confidence ("clear",
    "tie", "low": under 3 repeats, "only": no other candidate) and one
    verdict sentence. None on no candidates."""
    if not cands:
        return None
    s = sorted(cands, key=lambda c: -c['gbs'])
    top = s[0]
    tied = [c for c in s if _thi(c) >= _tlo(top)]
    near = [c for c in tied if c['gbs'] >= (1 - tol) * top['gbs']]
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
    if conf == 'only':
        verdict = '%s is the only trustworthy point: nothing to compare it with' % p['point']
    elif conf == 'tie':
        order = [p['point']] + [c['point'] for c in tied if c['point'] != p['point']]
        widened = ' (min-max intervals widened by one tensor op)' \
            if any(_widened(c) for c in tied) else ''
        if len(near) == len(tied):
            among = 'them'
        else:
            among = 'the %d within %s%% of the fastest median' % (len(near), text(r1(tol * 100)))
        verdict = '%s tie within noise%s; %s is the cheapest of %s' % (
            names(order), widened, p['point'], among)
    elif conf == 'low':
        verdict = ('%s leads the runner-up %s by %s%% on %s repeat(s) per point: '
                   'too few to tell a win from a tie (use --repeat 3 or more)') % (
            p['point'], ru['point'], text(r1(pct(p['gbs'], ru['gbs']))), text(n))
    else:
        if _widened(p) or _widened(ru):
            beat = (' less one tensor op, %s GB/s, beats the runner-up\'s fastest plus one, %s GB/s'
                    % (text(g3(_tlo(p))), text(g3(_thi(ru)))))
        else:
            beat = (', %s GB/s, beats the runner-up\'s fastest, %s GB/s'
                    % (text(g3(p['lo'])), text(g3(ru['hi']))))
        verdict = ('%s is the best: %s%% above the runner-up %s, outside the noise '
                   '(its slowest of %s repeats%s)') % (
            p['point'], text(r1(pct(p['gbs'], ru['gbs']))), ru['point'],
            text(p['ok_runs']), beat)
    out = dict(p)
    out.update({
        'tie': len(tied) > 1,
        'tied': [c['point'] for c in tied],
        'runner_up': ({'point': ru['point'], 'gbs': ru['gbs'], 'lo': ru.get('lo'),
                       'hi': ru.get('hi')} if ru else None),
        'margin_pct': pct(p['gbs'], ru['gbs']) if ru else None,
        'confidence': conf,
        'verdict': verdict,
    })
    return out


_NONE_ADVICE = MappingProxyType({
    'cv': 'not repeatable; rerun with a longer --runtime (10 s or more) on an idle machine',
    'above ceiling': 'a cache is serving them; use a target larger than memory, or a block device',
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
