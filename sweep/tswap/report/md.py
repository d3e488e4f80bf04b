# SPDX-License-Identifier: GPL-2.0-only
"""report.md of one host's run, whole: the sections of head.py and
sections.py in order, the aio config, thresholds and plots (docs/sweep.md,
Outputs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..jqjson import text, truthy
from .head import meta_report, report_head, report_pick
from .sections import (report_budget, report_other_backend, report_points,
                       report_ranks, report_warnings)

Doc = dict[str, Any]

POINTS_TEXT = (
    'Sorted by direction, then GB/s (median, with the min-max over repeats). Flagged points are '
    'never picked (docs/sweep.md). CV: coefficient of variation over repeats (! above the '
    'point\'s limit: 5%, or twice the median CV of the run\'s other points when that is more, at '
    'most 20%). % of ceiling: ! more than 10% above it. Latencies are fio completion latencies of '
    'whole tensor operations.')
FILES_TEXT = ('Files: summary.csv (one row per point and repeat), results.json, aggregate.json, '
              'best-aio.json, points/POINT.rN/ (job.fio, run.sh, fio.json, fio.stderr, stats.json).')


@dataclass(frozen=True)
class RunLines:
    """What the shell knows of the run, as text: the lines of "How the
    points ran" it makes (steady state: steady.sh steady_line; bandwidth
    log: bwlog.sh; precondition: precondition.sh; "" when none), plots
    (tswap.report.plots links: each link followed by a blank line, "" without
    plots), notes (notes.txt, sorted and unique: notes()), dropped (the page
    cache was dropped), cvflag (the CV limit of a point without its own),
    thresholds (verdict.thresholds' lines)."""
    steady: str = ''
    bwlog: str = ''
    precondition: str = ''
    plots: str = ''
    notes: str = ''
    dropped: bool = False
    cvflag: float = 0.05
    thresholds: tuple[str, ...] = ()


def notes(text_: str, collate: Any = None) -> str:
    """notes.txt's lines as `sort -u` gives them (collate: the sort key of
    the locale, e.g. locale.strxfrm; code points without), trailing newlines
    dropped as $(...) does."""
    lines = text_.split('\n')
    if text_.endswith('\n'):
        lines.pop()
    if not text_:
        lines = []
    seen = sorted(set(lines), key=collate) if collate else sorted(set(lines))
    return '\n'.join(seen).rstrip('\n')


def head_cfg(cfg: Doc, budget: Any) -> Doc:
    """sweep.json as report.md's header shows it: in a budget run
    (budget.json given), the runtime, ramp and repeats of the final round,
    the runs the pick is made from."""
    rounds = budget.get('rounds') if isinstance(budget, dict) else None
    f = rounds[-1] if isinstance(rounds, list) and rounds else None
    if f is None or f is False:
        return cfg
    out = dict(cfg)
    out.update({'runtime': text(f.get('runtime')), 'ramp': text(f.get('ramp')), 'repeat': f.get('repeats')})
    return out


def budget_line(budget: Any) -> str:
    """report.md's line on how a budget run's points ran (budget.json):
    the final round's repeats, runtime and ramp, and the pruning rounds'
    runtimes; "" without budget.json."""
    if budget is None:
        return ''
    r = budget.get('rounds') or []
    f = r[-1] if r else {}
    before = ('; the %d pruning round(s) before it ran each point once for %s s, fixed, to rank '
              'them (Budget)' % (len(r) - 1, ', '.join(text(x.get('runtime')) for x in r[:-1]))
              if len(r) > 1 else '')
    return ('- budget: the pick is made from the final round (round %s): %s repeat(s) of %s s after '
            'a %s s ramp%s' % (text(f.get('round')), text(f.get('repeats')), text(f.get('runtime')),
                               text(f.get('ramp')), before))


def _aio_section(agg: Doc, best: Any, aio_text: str) -> list[str]:
    b = best if isinstance(best, dict) else {}
    n = len(best) if isinstance(best, (dict, list, str)) else 0
    trusted = b.get('trusted')
    src = (agg.get('best') or {}).get('aio_source')
    why = ''
    if trusted is not False and n != 0:
        why = text((src or {}).get('why') if src is not None else None).rstrip('\n')
    elif trusted is False:
        why = text(b.get('reason')).rstrip('\n')
    if trusted is False:
        return ['No trustworthy libaio point: no config. %s.' % why, '']
    if n == 0:
        return ['No successful libaio point: no config.', '']
    out = ['%s. Paste into the ds_config (see docs/deepspeed.md):' % why, '',
           '```json\n%s\n```' % aio_text.rstrip('\n'), '']
    note = report_other_backend(agg)
    if note is not None:
        out.append(note)
    return out


def report_md(agg: Doc, cfg: Doc, best: Any, aio_text: str, meta: Optional[Doc],
              budget: Any, run: RunLines, checkpoint_text: str = '') -> str:
    """report.md's text. agg: aggregate.json; cfg: sweep.json; best:
    best-aio.json's document, aio_text its text; meta: meta.json (None
    without); budget: budget.json of a --budget run (None otherwise);
    checkpoint_text: a checkpoint run's best-checkpoint.json ("" for
    another run: no such section)."""
    out = ['# tswap sweep report', '']
    out += report_pick(agg)
    out += report_head(head_cfg(cfg, budget), agg, run.notes, run.dropped)
    out += ['## How the points ran', '']
    out += [x for x in (run.steady, budget_line(budget), run.bwlog, run.precondition) if x != '']
    out.append('')
    if truthy(meta):
        out += meta_report(meta)
    out += report_budget(agg)
    if checkpoint_text:
        out += ['## DeepSpeed checkpoint config (best-checkpoint.json)', '',
                'The best whole-file write GB/s (fsync included) of the checkpoint points: its'
                ' checkpoint.writer and aio blocks (see docs/sweep.md, Checkpoint writes):', '',
                '```json\n%s\n```' % checkpoint_text.rstrip('\n'), '']
    out += ['## DeepSpeed aio config (best-aio.json)', '']
    out += _aio_section(agg, best, aio_text)
    if run.thresholds:
        out += ['## Thresholds', '', '\n'.join('- ' + t for t in run.thresholds), '']
    out += ['## Warnings', '']
    out += report_warnings(agg, run.cvflag)
    out += ['', '## All points', '', POINTS_TEXT, '',
            '| point | GB/s | CV % | % of ceiling | op/s | p50 ms | p99 ms | p99.9 ms | io_submit '
            'per GB | status |', '|---|---|---|---|---|---|---|---|---|---|']
    out += report_points(agg)
    out += report_ranks(agg)
    out += ['', '## Plots', '', run.plots + FILES_TEXT]
    return '\n'.join(out) + '\n'

