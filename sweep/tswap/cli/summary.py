# SPDX-License-Identifier: GPL-2.0-only
"""summary RUN: the summary on stdout at the end of a run (tswap.report.
summary), from RUN/aggregate.json and RUN/best-aio.json; RUN as given
names the files."""

from __future__ import annotations

import argparse
import os
import sys

from ..report.summary import summary_text
from . import read_json, read_json_opt

HELP = 'the summary on stdout (tswap.report.summary)'


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('rundir', metavar='RUN')


def run(a: argparse.Namespace) -> int:
    agg = read_json(os.path.join(a.rundir, 'aggregate.json'), 'aggregate')
    sys.stdout.write(summary_text(agg, a.rundir, read_json_opt(os.path.join(a.rundir, 'best-aio.json'), 'best-aio')))
    return 0
