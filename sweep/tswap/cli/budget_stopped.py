# SPDX-License-Identifier: GPL-2.0-only
"""budget-stopped AGGREGATE BUDGET: aggregate.json (its pruned points
marked) after a --budget run that stopped, on stdout: the points not run
say so and each pick's verdict how many points it is the best of
(tswap.stats.budget.stopped); the document unchanged when no round
stopped. BUDGET: budget.json."""

from __future__ import annotations

import argparse

from ..stats.budget import stopped
from . import read_json, write_json

HELP = "a stopped --budget run's points not run and verdicts (tswap.stats.budget)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('aggregate')
    p.add_argument('budget')


def run(a: argparse.Namespace) -> int:
    write_json(stopped(read_json(a.aggregate, 'aggregate'), read_json(a.budget, 'budget')))
    return 0
