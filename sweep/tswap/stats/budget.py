# SPDX-License-Identifier: GPL-2.0-only
"""A --budget run's judgments between and during its rounds
(docs/sweep.md "Budget: successive halving"): which points a pruning
round keeps, the round's record for budget.json, and whether the next
run, repeat or round still fits the seconds left."""

from __future__ import annotations

import math
from typing import Any, Optional

from ..jqjson import jround, text
from .pick import cost
from .sentence import budget_stopped

Doc = dict[str, Any]


def ops(r: Doc) -> Optional[float]:
    """Tensor ops per handle... in all: the run's bytes over the tensor
    size; None for a failed run or one without byte counts."""
    if r.get('status') != 'ok' or (r.get('tensor') or 0) <= 0 or r.get('handles') is None:
        return None
    return sum(h['bytes'] for h in r['handles'] if h.get('bytes') is not None) / r['tensor']


def band(p: Doc, noise: float) -> float:
    """What one short run can tell apart, relative: fio counts whole
    tensor-swap ops (bs = the tensor), so a run that completed n per
    handle is uncertain by one of them, handles/ops, plus noise (CV_FLAG).
    On the deepspeed grid (400 MiB tensors) a 1 s run completes about 6
    per handle: +-22%."""
    n = p.get('ops')
    h = p.get('nh') or 1
    if n is None:
        u = 0
    elif n <= 0:
        u = 1
    else:
        u = h / n
    return u + noise


def prune(results: list[Doc], plan: list[Doc], keep: dict[str, float], noise: float) -> Doc:
    """The end of a pruning round: {kept: [POINT], pruned: [{point, ckey,
    gbs, why}]}. Within a pick group, kept first: the fastest point; then
    the points whose band overlaps the fastest's (tied within the round's
    noise), cheapest first by the pick's cost order, as the pick resolves a
    tie; then the others by GB/s; a failed point last. keep: {CKEY: N}
    points a group keeps (a group not in it keeps all). why: "slower"
    (outside the fastest's band), "tied, costlier", "failed". The trust
    flags judge only the final round's runs."""
    by_point = {p['point']: p for p in plan}
    rows = []
    for r in results:
        p = by_point.get(r.get('point'))
        if p is None or p.get('kind') != 'tswap':
            continue
        x = dict(p)
        x.update({'gbs': r.get('gbs') if r.get('status') == 'ok' else None, 'ops': ops(r),
                  'nh': max(len(r.get('handles') or []), 1)})
        rows.append(x)
    groups: dict[Any, list[Doc]] = {}
    for x in rows:
        groups.setdefault(x.get('ckey'), []).append(x)
    kept: list[str] = []
    pruned: list[Doc] = []
    for ck in sorted(groups, key=lambda k: (k is not None, k)):
        g = groups[ck]
        ok = [x for x in g if x['gbs'] is not None]
        failed = [x for x in g if x['gbs'] is None]
        s = sorted(ok, key=lambda x: (-x['gbs'],) + cost(x))
        order: list[Doc] = []
        if s:
            top = s[0]
            lo = top['gbs'] * (1 - band(top, noise))
            rest = [dict(x, tied=x['gbs'] * (1 + band(x, noise)) >= lo) for x in s[1:]]
            order = [top] + sorted([x for x in rest if x['tied']], key=cost) \
                + [x for x in rest if not x['tied']]
        order += failed
        k = keep.get(g[0].get('ckey'))
        k = len(g) if k is None else int(k)
        kept += [x['point'] for x in order[:k]]
        for x in order[k:]:
            why = 'failed' if x['gbs'] is None else ('tied, costlier' if x.get('tied') else 'slower')
            pruned.append({'point': x['point'], 'ckey': x.get('ckey'), 'gbs': x['gbs'], 'why': why})
    return {'kept': sorted(kept),
            'pruned': sorted(pruned, key=lambda x: (x['ckey'], -(x['gbs'] or 0)))}


def _r(x: float, n: int) -> float:
    return jround(x * n) / n


def round_record(spec: Doc, n: float, wall: float, pre: list[float], ran: float, reps: float,
                 passed: Optional[Doc], allc: list[float], allw: list[float]) -> Doc:
    """A round's record for budget.json: the spec as planned, what it ran
    (runs, repeats), wall_s and precondition_s (s), overhead_s (the
    start-up per run beyond ramp + runtime, measured: the later rounds
    are re-planned with it), sweep_s (the sweep's own work per run, a
    run's seconds beyond fio's), once, became_final, and dropped (the
    repeat the final round dropped, from its check)."""
    pre_s = sum(pre) if pre else 0
    over = _r(max((wall - pre_s) / max(ran, 1) - spec['runtime'] - spec['ramp'], 0.1), 100)
    diffs = [allc[i] - allw[i] for i in range(len(allc))]
    rec = {'round': n, 'final': spec.get('final'), 'runtime': spec.get('runtime'),
           'ramp': spec.get('ramp'), 'repeats': reps, 'repeats_planned': spec.get('repeats'),
           'groups': spec.get('groups'), 'ceilings': spec.get('ceilings'), 'runs': ran,
           'runs_planned': spec.get('runs'), 'planned_s': spec.get('planned_s'),
           'planned_overhead_s': spec.get('overhead_s'), 'wall_s': _r(wall, 10),
           'precondition_s': _r(pre_s, 10),
           'overhead_s': spec.get('overhead_s') if ran == 0 else over,
           'sweep_s': _r((sum(diffs) if diffs else 0) / max(len(diffs), 1), 100)}
    if spec.get('once'):
        rec['once'] = True
    if spec.get('became_final'):
        rec['became_final'] = spec['became_final']
    if passed is not None:
        rec['dropped'] = {k: v for k, v in passed.items() if k != 'why'}
    return rec


def _mean(xs: list[float]) -> float:
    return (sum(xs) if xs else 0) / max(len(xs), 1)


def check(what: str, n: float, budget: float, t0: float, now: float, reserve: float, k: float,
          rt: float, rramp: float, ramp: float, ndone: float, reps: float, later: Any,
          costs: list[float], allc: list[float], allw: list[float]) -> Doc:
    """While a round runs: does what comes next fit the seconds left for
    runs? what: "repeat" (the final round's next repeat, n runs), "round"
    (a pruning round with n runs to go, then at least the minimum of the
    rounds `later`, every point once at 1 s; else the round becomes the
    final round) or "next" (the next run of any round ends by the budget;
    later = {over, all, start}). Seconds: budget, t0 and now (the
    script's start and now, epoch), reserve (the outputs'), rt and rramp
    (this round's runtime and ramp), ramp (the grid's); costs: each run of
    this round so far (s), allc/allw: every run's seconds and fio's own
    (their difference, times k, is the least reserve). Output: {fits,
    need_s, per_run_s, left_s, [once_budget_s,] why}: why in words when it
    does not fit."""
    sweep = _mean([allc[i] - allw[i] for i in range(len(allc))])
    res = max(reserve, math.ceil(k * sweep))
    left = float(math.trunc(budget - (now - t0) - res))
    if what == 'next':
        per = _mean(allc) if allc else rt + rramp + later['over']
    else:
        per = _mean(costs)
    over = max(per - rt - rramp, 0.1)
    if what in ('repeat', 'next'):
        need = per * n
    else:
        merged: dict[str, float] = {}
        for r in later:
            for key, v in (r.get('groups') or {}).items():
                merged[key] = max(merged[key], v) if key in merged else v
        pts = sum(merged.values()) if merged else 0
        ceil_runs = sum(r.get('ceilings') or 0 for r in later) if later else 0
        need = per * n + (pts + ceil_runs) * (1 + min(ramp, 1) + over)
    out: Doc = {'fits': need <= left, 'need_s': math.ceil(need * 10) / 10,
                'per_run_s': _r(per, 100), 'left_s': left}
    if what == 'next':
        out['once_budget_s'] = math.ceil(later['start'] + later['all'] * per + res)
    if out['fits']:
        why = None
    elif what == 'next':
        why = ('the next run needs about %s s (as this round\'s runs took), %s s are left for runs: '
               'the run stops here, and the points not run are not picked; about %s s would run '
               'every point once on this machine now') % (
            text(out['need_s']), text(out['left_s']), text(out['once_budget_s']))
    elif what == 'repeat':
        why = ('the final round ends after %s of its %s repeat(s): one more needs about %s s '
               '(%s run(s) at %s s each, as this round ran), %s s are left for runs') % (
            text(ndone), text(reps), text(out['need_s']), text(n), text(out['per_run_s']),
            text(left))
    else:
        why = ('this round becomes the final round (its points once, then the ceilings; no '
               'pruning, no repeats): with %s run(s) of it still to run at %s s each, as it ran, '
               'the rounds after it need at least %s s in all, %s s are left for runs') % (
            text(n), text(out['per_run_s']), text(out['need_s']), text(left))
    out['why'] = why
    return out


def stopped(agg: Doc, budget: Doc) -> Doc:
    """aggregate.json (agg, its pruned points marked: into_aggregate)
    after a --budget run whose round stopped (budget.json's first
    rounds[].stopped, tswap.stats.budget.check
    "next"): each point not run gets the error "the budget ran out before
    it ran" and each pick's verdict says how many points it is the best
    of (tswap.stats.sentence.budget_stopped). agg itself when no round
    stopped or every point ran."""
    st = next((r['stopped'] for r in budget.get('rounds') or []
               if r.get('stopped') is not None and r.get('stopped') is not False), None)
    pts = [p for p in agg.get('points') or [] if p.get('kind') == 'tswap']
    n = len([p for p in pts if p.get('status') == 'not run'])
    if st is None or n == 0:
        return agg
    out = dict(agg)
    out['points'] = [dict(p, errors=['the budget ran out before it ran'])
                     if p.get('status') == 'not run' else p for p in agg.get('points') or []]
    out['best'] = {k: (dict(b, verdict=budget_stopped(b['verdict'], n, len(pts),
                                                      st.get('once_budget_s')))
                       if b is not None and b.get('verdict') is not None else b)
                   for k, b in (agg.get('best') or {}).items()}
    return out


MARGIN_KEYS = ('point', 'gbs', 'lo', 'hi', 'tie', 'tied', 'runner_up', 'margin_pct', 'confidence', 'verdict')


def into_aggregate(agg: Doc, budget: Doc, used_s: float) -> Doc:
    """aggregate.json (agg) after a --budget run (budget: budget.json;
    used_s: the seconds of the budget used, 1 decimal): each point a
    pruning round dropped gets status "pruned", pruned (its round record
    and round), the flag "pruned in round N" and trusted false (never
    picked); then stopped() (a round that stopped); then budget: the
    budget.json document with used_s and final_margins, each pick's
    {point, gbs, lo, hi, tie, tied, runner_up, margin_pct, confidence,
    verdict} by direction (aio_source left out). budget.sh
    budget_into_aggregate, as it was in jq."""
    pr: Doc = {}
    for r in budget['rounds']:
        for x in r.get('pruned') or []:
            pr[x['point']] = dict(x, round=r.get('round'))
    out = dict(agg)
    out['points'] = [dict(p, status='pruned', pruned=pr[p['point']],
                          flags=['pruned in round %s' % text(pr[p['point']]['round'])], trusted=False)
                     if pr.get(p.get('point')) else p for p in agg['points']]
    out = stopped(out, budget)
    margins = {k: {m: b.get(m) for m in MARGIN_KEYS}
               for k, b in (out.get('best') or {}).items() if b is not None and k != 'aio_source'}
    return dict(out, budget=dict(budget, used_s=used_s, final_margins=margins))
