# SPDX-License-Identifier: GPL-2.0-only
"""The summary on stdout at the end of a run and compare.md (--compare),
from aggregate.json (docs/sweep.md, Outputs)."""

from __future__ import annotations

from typing import Any

from ..jqjson import dumps, jround, text, truthy
from ..stats.pick import none_why
from .fmt import alt, g
from .head import ceiling_cautions

Doc = dict[str, Any]


def summary_text(agg: Doc, run: str, best_aio: Any) -> str:
    """The summary's lines: best read and write (GB/s and point, or why
    none: tswap.stats.pick.none_why), the pick and its verdict, the ceiling,
    the output files of run directory run and best-aio.json's aio block
    (best_aio: the document, None when the file is empty)."""
    best = agg.get('best') or {}
    out = []
    for d in ('read', 'write'):
        b = best.get(d)
        pad = '  ' if d == 'read' else ' '
        if truthy(b):
            s = '%s GB/s (%s)' % (g(b.get('gbs')), text(b.get('point')))
        else:
            why = none_why(agg, d)
            s = '-' if why is None or why == '-' else 'none: %s' % why
        out.append('best %s:%s%s' % (d, pad, s))
    src = best.get('aio_source')
    if src is not None:
        out.append('pick:       %s (best-aio.json): %s' % (text(src.get('point')), text(src.get('verdict'))))
    if src is None and alt((agg.get('trust') or {}).get('flagged'), 0) > 0:
        out.append('pick:       none: every point with a result is flagged (report.md, Warnings)')
    c = agg.get('ceiling')
    out.append('ceiling:    ' + ('not measured' if c == {} else 'read %s GB/s, write %s GB/s' % (
        g((c or {}).get('read')), g((c or {}).get('write')))))
    out += ['caution:    ' + x for x in ceiling_cautions(agg)]
    aio = best_aio.get('aio') if isinstance(best_aio, dict) else None
    out += ['report:     %s/report.md' % run, 'csv:        %s/summary.csv' % run,
            'best-aio:   %s/best-aio.json %s' % (
                run, dumps(alt(aio, 'no trustworthy point: no aio block'), compact=True))]
    return '\n'.join(out) + '\n'


def _gbs(agg: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in (agg or {}).get('points') or []:
        out[p.get('point')] = p.get('gbs')
    return out


def compare_md(run: str, other: str, a: Doc, b: Doc) -> str:
    """compare.md: the GB/s medians per point of this run (a: its
    aggregate.json, in directory run) and another (b, in other), their
    ratio A / B (3 decimals, "-" without both or B at 0), then the two
    runs' ceilings."""
    A, B = _gbs(a), _gbs(b)
    out = ['# tswap sweep comparison', '', '- A (this run): `%s`' % run, '- B: `%s`' % other, '',
           'GB/s medians per point; ratio = A / B (above 1: A is faster). Points present in one '
           'run only are listed with "-".', '', '| point | A GB/s | B GB/s | A / B |', '|---|---|---|---|']
    for k in sorted(set(A) | set(B)):
        x, y = A.get(k), B.get(k)
        ratio = text(jround(x / y * 1000) / 1000) if truthy(x) and truthy(y) and y > 0 else '-'
        out.append('| %s | %s | %s | %s |' % (k, g(x), g(y), ratio))
    out += ['', '| ceiling | A GB/s | B GB/s |', '|---|---|---|']
    ca, cb = (a or {}).get('ceiling') or {}, (b or {}).get('ceiling') or {}
    out += ['| %s | %s | %s |' % (d, g(ca.get(d)), g(cb.get(d))) for d in ('read', 'write')]
    return '\n'.join(out) + '\n'


def budget_summary(seconds: str, used: str, budget: Doc) -> str:
    """The summary's budget line: the --budget seconds and the seconds
    used (as given: text), the rounds of budget.json (budget.sh
    budget_summary)."""
    return 'budget:     %s s, used %s s in %d round(s) (report.md, Budget)' % (
        seconds, used, len(budget.get('rounds') or []))
