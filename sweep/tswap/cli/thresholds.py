# SPDX-License-Identifier: GPL-2.0-only
"""thresholds AGGREGATE [--min-read X] [--min-write X]: a PASS or FAIL
line per threshold given (tswap.report.verdict.thresholds; X in GB/s,
1e9 B/s, as the user gave it)."""

from __future__ import annotations

import argparse

from ..report.verdict import Thresholds, thresholds
from . import read_json

HELP = 'the --min-*-gbs PASS/FAIL lines (tswap.report.verdict)'


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('aggregate')
    p.add_argument('--min-read', default='')
    p.add_argument('--min-write', default='')


def run(a: argparse.Namespace) -> int:
    for line in thresholds(read_json(a.aggregate, 'aggregate'), Thresholds(a.min_read, a.min_write)):
        print(line)
    return 0
