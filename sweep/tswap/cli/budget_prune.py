# SPDX-License-Identifier: GPL-2.0-only
"""budget-prune --plan JSON --keep JSON --noise F [RESULT.JSON...]: which
points a --budget pruning round keeps (tswap.stats.budget.prune), from
the round's result.json files; --plan: the plan's points (a JSON array),
--keep: {CKEY: N}; compact JSON on stdout."""

from __future__ import annotations

import argparse

from ..stats.budget import prune
from . import json_args, read_json, write_json

HELP = 'the points a --budget pruning round keeps (tswap.stats.budget)'


def setup(p: argparse.ArgumentParser) -> None:
    json_args(p, 'plan', 'keep', 'noise')
    p.add_argument('results', nargs='*')


def run(a: argparse.Namespace) -> int:
    results = [read_json(f, 'result') for f in a.results]
    write_json(prune(results, a.plan, a.keep, a.noise), compact=True)
    return 0
