# SPDX-License-Identifier: GPL-2.0-only
"""fleet-progress RESULT...: a fleet point's progress text (hosts ok,
median and min GB/s) from the hosts' result.json (tswap.report.fleet_text)."""

from __future__ import annotations

import argparse
import sys

from ..report.fleet_text import progress
from . import read_json

HELP = "a fleet point's progress text (tswap.report.fleet_text)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('results', nargs='+', metavar='result')


def run(a: argparse.Namespace) -> int:
    sys.stdout.write(progress([read_json(f, 'result') for f in a.results]) + '\n')
    return 0
