# SPDX-License-Identifier: GPL-2.0-only
"""report RUN: RUN's report.md on stdout (tswap.report.md), from
RUN/aggregate.json, sweep.json, best-aio.json, and when they exist
meta.json, notes.txt (sorted as sort -u in the locale's collation),
cache-dropped; --budget: a --budget run (RUN/budget.json); the lines the
shell makes: --steady, --bwlog, --precondition, --plots FILE (plot
links); --cvflag (fraction), --min-read/--min-write (GB/s, the
thresholds)."""

from __future__ import annotations

import argparse
import locale
import os
import sys

from ..report.md import RunLines, notes, report_md
from ..report.verdict import Thresholds, thresholds
from . import StageError, read_json, read_json_opt

HELP = 'report.md of a run (tswap.report.md)'


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('rundir', metavar='RUN')
    p.add_argument('--cvflag', type=float, required=True)
    p.add_argument('--min-read', default='')
    p.add_argument('--min-write', default='')
    p.add_argument('--budget', action='store_true')
    for k in ('steady', 'bwlog', 'precondition'):
        p.add_argument('--' + k, default='')
    p.add_argument('--plots', default='')


def _read(path: str) -> str:
    try:
        with open(path, encoding='utf-8') as f:
            return f.read()
    except OSError as e:
        raise StageError('%s: %s' % (path, e)) from None


def _collate() -> object:
    try:
        locale.setlocale(locale.LC_COLLATE, '')
    except locale.Error:
        return None
    return locale.strxfrm


def run(a: argparse.Namespace) -> int:
    d = a.rundir
    agg = read_json(os.path.join(d, 'aggregate.json'), 'aggregate')
    best_path = os.path.join(d, 'best-aio.json')
    ckpt = os.path.join(d, 'best-checkpoint.json')
    nt = os.path.join(d, 'notes.txt')
    lines = RunLines(steady=a.steady, bwlog=a.bwlog, precondition=a.precondition,
                     plots=_read(a.plots) if a.plots else '',
                     notes=notes(_read(nt), _collate()) if os.path.isfile(nt) else '',
                     dropped=os.path.isfile(os.path.join(d, 'cache-dropped')), cvflag=a.cvflag,
                     thresholds=tuple(thresholds(agg, Thresholds(a.min_read, a.min_write))))
    meta = read_json_opt(os.path.join(d, 'meta.json'), 'meta')
    budget = read_json_opt(os.path.join(d, 'budget.json'), 'budget') if a.budget else None
    sys.stdout.write(report_md(agg, read_json(os.path.join(d, 'sweep.json'), 'sweep'),
                               read_json(best_path, 'best-aio'), _read(best_path), meta, budget, lines,
                               _read(ckpt) if os.path.isfile(ckpt) else ''))
    return 0
