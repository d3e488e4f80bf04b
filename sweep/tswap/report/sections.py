# SPDX-License-Identifier: GPL-2.0-only
"""report.md's sections after the aio config: Budget, the other-backend
note, Warnings, All points, and Ranks, targets and mixed direction; each
from aggregate.json (docs/sweep.md "Outputs") as a list of lines."""

from __future__ import annotations

from typing import Any, Optional

from ..jqjson import jmax_by, join, jround, sort_key, text, truthy
from .fmt import alt, g, ms, p1, r1

Doc = dict[str, Any]

BUDGET_TEXT = (
    'Round 1 runs every point once, short; each later round keeps half of each direction\'s '
    'points (the fastest, then the points tied with it within that run\'s noise, one tensor-swap '
    'op of its runtime + 5%, cheapest first by the pick\'s cost order, then the others by GB/s) '
    'and doubles the runtime; the final round, whose runtime was reserved first, measures the '
    'last 2 per direction with repeats and the device ceilings at the same runtime, and the pick '
    'uses only its runs (pruned points are never picked; the trust flags judge the final round\'s '
    'runs against those ceilings).')


def _pruned(r: Doc) -> str:
    pr = r.get('pruned') or []
    if len(pr) == 0:
        return '-'
    return ', '.join('`%s` %s%s' % (text(x.get('point')), g(x.get('gbs')),
                                    ' (%s)' % text(x.get('why')) if x.get('why') != 'slower' else '')
                     for x in pr)


def _round(r: Doc) -> str:
    groups = ', '.join('%s %s' % (k, text(n)) for k, n in (r.get('groups') or {}).items())
    ceil = ' + %s ceiling' % text(r['ceilings']) if r.get('ceilings') is not None and r['ceilings'] > 0 else ''
    return '| %s%s | %s | %s | %s | %s%s | %s | %s | %s | %s | %s |' % (
        text(r.get('round')), ' (final)' if truthy(r.get('final')) else '', text(r.get('runtime')),
        text(r.get('ramp')), text(r.get('repeats')), groups, ceil, text(r.get('runs')),
        text(r.get('planned_s')), text(r.get('wall_s')), text(r.get('overhead_s')), _pruned(r))


def _margin(d: str, m: Doc) -> str:
    ru = m.get('runner_up')
    if ru is None:
        vs = 'no runner-up'
    else:
        mp = m.get('margin_pct')
        vs = '%s%s%% over `%s` %s GB/s' % ('+' if mp is not None and mp >= 0 else '', text(r1(mp)),
                                          text(ru.get('point')), g(ru.get('gbs')))
    return '- %s: `%s` %s GB/s (min-max %s-%s), %s; %s' % (
        d, text(m.get('point')), g(m.get('gbs')), g(m.get('lo')), g(m.get('hi')), vs,
        text(m.get('confidence')))


def report_budget(agg: Doc) -> list[str]:
    """report.md's "Budget" section of a --budget run from aggregate.json's
    budget (tswap.stats.budget.into_aggregate; docs/sweep.md, Budget): per
    round its runtime, ramp, repeats, points per direction, what was
    pruned at which GB/s, planned and measured seconds; then why it
    stopped and the final margins. [] without a budget."""
    b = agg.get('budget')
    if b is None:
        return []
    how = (' (chosen by default: the exhaustive run of this grid would take more than an hour; '
           '--exhaustive runs every point)' if truthy(b.get('chosen_by_default')) else ' (--budget)')
    out = ['## Budget: successive halving', '',
           'Budget %s s%s; %s s used when the report was written (runs started at %s s, after the '
           'target\'s preparation). %s Fio start-up was planned at %s s per run and re-planned with '
           'the measured cost after each round (docs/sweep.md, Budget).' % (
               text(b.get('seconds')), how, text(r1(b['used_s'])), text(r1(b['runs_start_s'])),
               BUDGET_TEXT, text(b.get('overhead_estimate_s'))),
           '',
           '| round | runtime s | ramp s | repeats | points run | runs | planned s | took s | '
           'start-up s/run | pruned (GB/s in that round) |',
           '|---|---|---|---|---|---|---|---|---|---|']
    rounds = b.get('rounds') or []
    out += [_round(r) for r in rounds]
    out.append('')
    for r in rounds:
        if truthy(r.get('stopped')):
            out += ['Stopped in round %s: %s.' % (text(r.get('round')), text(r['stopped'].get('why'))), '']
    out += ['Final margins:', '']
    fm = b.get('final_margins') or {}
    out += [_margin(d, m) for d, m in fm.items()]
    if len(fm) == 0:
        out.append('- none: no trustworthy point in the final round')
    out.append('')
    return out


def report_other_backend(agg: Doc) -> Optional[str]:
    """report.md's note when another backend beat the best libaio point
    (DeepSpeed's aio handle uses libaio); None otherwise."""
    pts = agg.get('points') or []
    o = jmax_by([p for p in pts if p.get('backend') != 'libaio' and p.get('gbs') is not None],
              lambda p: p.get('gbs'))
    if o is None:
        return None
    lib = [p['gbs'] for p in pts
           if p.get('backend') == 'libaio' and p.get('rw') == o.get('rw') and p.get('gbs') is not None]
    top = max(lib, key=sort_key) if lib else 0
    if not sort_key(o['gbs']) > sort_key(top):
        return None
    return ('Note: the %s backend did better (%s GB/s %s); DeepSpeed\'s aio handle uses libaio, so '
            'the config above is the best libaio point.\n' % (
                text(o.get('backend')), text(jround(o['gbs'] * 1000) / 1000), text(o.get('rw'))))


def cache_cause(rw: Any) -> str:
    """What a point above the device ceiling means, in its direction's
    words: a read is served by the page cache or a cache in the device
    (DeepSpeed issue #998, 22-24 GB/s read on a PCIe 3.1 x4 drive); a
    write is taken by a cache that has not stored it on the medium yet
    (the page cache, or the device's write cache, DRAM or SLC)."""
    if rw == 'write':
        return ('the page cache or a write cache in the device is taking the writes faster '
                'than the drive stores them')
    if rw == 'readwrite':
        return ('a cache is serving the reads or taking the writes (the page cache, or a cache '
                'in the device)')
    return ('the page cache or a cache in the device is serving reads (the error behind '
            'DeepSpeed issue #998)')


def report_warnings(agg: Doc, cvflag: float) -> list[str]:
    """report.md's warnings: above the PCIe link, above the ceiling, CV, not steady, drops,
    failed points (the flags that keep a point from the pick, and drops,
    which do not); cvflag: the CV limit of a point without its own
    cv_limit. ["None."] without any."""
    pts = agg.get('points') or []

    def g3(x: float) -> str:
        return text(jround(x * 1000) / 1000)

    lk = agg.get('link') or {}
    w = ['- **%s**: %s GB/s is above what the PCIe link carries, %s GB/s (x%s at %s GT/s, %s): '
         'no drive behind it moves that much, %s; do not trust this point.' % (
             text(p.get('point')), g3(p['gbs']), g3(alt(lk.get('gbs'), 0)), text(lk.get('width')),
             text(lk.get('speed_gts')), text(lk.get('encoding')), cache_cause(p.get('rw')))
         for p in pts if p.get('above_link') is True]
    w += ['- **%s**: %s GB/s is more than 10%% above the device ceiling: %s; do not trust '
         'this point.' % (text(p.get('point')), g3(p['gbs']), cache_cause(p.get('rw')))
         for p in pts if truthy(p.get('above_ceiling'))]
    w += ['- %s: coefficient of variation %s%% over %s repeats (> %s%%: 5%%, or twice the median CV '
          'of the run\'s other points when that is more, at most 20%%: docs/sweep.md): not repeatable' % (
              text(p.get('point')), text(jround(p['cv'] * 1000) / 10), text(p.get('ok_runs')),
              text(jround(alt(p.get('cv_limit'), cvflag) * 1000) / 10))
          for p in pts if truthy(p.get('cv_flag'))]
    w += ['- %s: not steady: fio\'s steady-state detection did not attain within the runtime in some '
          'repeat, and the last window moved by more than one tensor op (the drive was still '
          'changing speed); not picked' % text(p.get('point')) for p in pts if p.get('steady') is False]
    w += ['- %s: drops during the run: its last third averaged %s%% below its first (fio bandwidth '
          'log; plots/bw-%s.png): the drive slowed down (SLC cache, throttling, garbage '
          'collection); a warning, the point may still be picked' % (
              text(p.get('point')), text(jround(p['drop_pct'])), text(p.get('point')))
          for p in pts if p.get('drops') is True]
    w += ['- %s: %s: %s' % (text(p.get('point')), text(p.get('status')),
                            join(sorted(set(p.get('errors') or []), key=sort_key), '; '))
          for p in pts if p.get('status') != 'ok' and p.get('status') != 'pruned']
    return w or ['None.']


def report_points(agg: Doc) -> list[str]:
    """report.md's table of all points, by direction then GB/s."""
    out = []
    for p in sorted(agg.get('points') or [], key=lambda p: sort_key([p.get('rw'), -alt(p.get('gbs'), -1)])):
        iv = ' (%s-%s)' % (g(p.get('lo')), g(p.get('hi'))) if alt(p.get('ok_runs'), 0) > 1 else ''
        cv = '-' if p.get('cv') is None else p1(p['cv'] * 100) + (' !' if truthy(p.get('cv_flag')) else '')
        fl = alt(p.get('flags'), [])
        flagged = ', flagged: %s' % join(fl, ', ') if fl != [] and p.get('gbs') is not None else ''
        out.append('| %s | %s%s | %s | %s%s | %s | %s | %s | %s | %s | %s%s |' % (
            text(p.get('point')), g(p.get('gbs')), iv, cv, p1(p.get('pct_ceiling')),
            ' !' if truthy(p.get('above_ceiling')) else '', p1(p.get('ops_per_s')),
            ms(p.get('clat_p50_us')), ms(p.get('clat_p99_us')), ms(p.get('clat_p999_us')),
            p1(p.get('submit_per_gb')), text(p.get('status')), flagged))
    return out


def report_ranks(agg: Doc) -> list[str]:
    """report.md's section on points of several handles (ranks > 1,
    readwrite): aggregate GB/s (the handles' sum), the slowest rank's, read,
    write, per target and % of the ceiling; [] without such points."""
    m = [p for p in agg.get('points') or []
         if alt(p.get('ranks'), 1) > 1 or p.get('rw') == 'readwrite']
    if not m:
        return []
    out = ['\n## Ranks, targets and mixed direction\n',
           'One fio job (one tswap handle) per rank and direction, all at once in one group. '
           'Aggregate: the sum of the handles\' GB/s. Slowest rank: the GB/s of the rank that moved '
           'the least (a read and a write handle of a readwrite rank count together): a ZeRO step '
           'waits for its slowest rank. % of ceiling: against fio\'s libaio with as many jobs.\n',
           '| point | ranks | aggregate GB/s | slowest rank GB/s | read GB/s | write GB/s | per '
           'target GB/s | % of ceiling | status |',
           '|---|---|---|---|---|---|---|---|---|']
    for p in sorted(m, key=lambda p: sort_key([p.get('rw'), p.get('ranks'), -alt(p.get('gbs'), -1)])):
        tg = ['`%s` %s' % (text(t.get('target')), g(t.get('gbs'))) for t in alt(p.get('targets'), [])]
        out.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            text(p.get('point')), text(alt(p.get('ranks'), 1)), g(p.get('gbs')),
            g(p.get('slowest_rank_gbs')), g(p.get('read_gbs')), g(p.get('write_gbs')),
            '<br>'.join(tg) if tg else '-', p1(p.get('pct_ceiling')), text(p.get('status'))))
    return out
