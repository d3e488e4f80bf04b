# SPDX-License-Identifier: GPL-2.0-only
"""budget-round --spec JSON --n N --wall S --pre JSON --ran N --reps N
--pass JSON --allc JSON --allw JSON: a --budget round's record for
budget.json (tswap.stats.budget.round_record); compact JSON on stdout."""

from __future__ import annotations

import argparse

from ..stats.budget import round_record
from . import json_args, write_json

HELP = "a --budget round's record (tswap.stats.budget)"


def setup(p: argparse.ArgumentParser) -> None:
    json_args(p, 'spec', 'n', 'wall', 'pre', 'ran', 'reps', 'pass', 'allc', 'allw')


def run(a: argparse.Namespace) -> int:
    write_json(round_record(a.spec, a.n, a.wall, a.pre, a.ran, a.reps, getattr(a, 'pass'),
                            a.allc, a.allw), compact=True)
    return 0
