# SPDX-License-Identifier: GPL-2.0-only
"""budget-plan --floor S --left S --first N --shape JSON --groups JSON
--ceilings N --over S --ramp S --tmax S --reps N: a --budget run's rounds
(tswap.plan.budget.plan; its BudgetInput says what each value is), on
stdout as budget.json's plan. --groups null with --shape ROUNDS: a
re-plan of the rounds still to run."""

from __future__ import annotations

import argparse

from ..plan.budget import BudgetInput, plan
from . import json_args, write_json

HELP = "a --budget run's rounds (tswap.plan.budget)"


def setup(p: argparse.ArgumentParser) -> None:
    json_args(p, 'floor', 'left', 'first', 'shape', 'groups', 'ceilings', 'over', 'ramp',
              'tmax', 'reps')


def run(a: argparse.Namespace) -> int:
    write_json(plan(BudgetInput(left=a.left, ramp=a.ramp, over=a.over, tmax=a.tmax, reps=a.reps,
                                floor=a.floor, first=a.first, groups=a.groups, shape=a.shape,
                                ceilings=a.ceilings)))
    return 0
