# SPDX-License-Identifier: GPL-2.0-only
"""budget-check --what repeat|round|next --n N --budget S --t0 T --now T
--reserve S --k N --rt S --rramp S --ramp S --ndone N --reps N --later
JSON --costs JSON --allc JSON --allw JSON: whether what comes next fits a
--budget run's seconds left (tswap.stats.budget.check); compact JSON on
stdout."""

from __future__ import annotations

import argparse

from ..stats.budget import check
from . import json_args, write_json

HELP = 'whether the next run, repeat or round fits the budget (tswap.stats.budget)'


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('--what', choices=('repeat', 'round', 'next'), required=True)
    json_args(p, 'n', 'budget', 't0', 'now', 'reserve', 'k', 'rt', 'rramp', 'ramp', 'ndone',
              'reps', 'later', 'costs', 'allc', 'allw')


def run(a: argparse.Namespace) -> int:
    write_json(check(a.what, a.n, a.budget, a.t0, a.now, a.reserve, a.k, a.rt, a.rramp, a.ramp,
                     a.ndone, a.reps, a.later, a.costs, a.allc, a.allw), compact=True)
    return 0
