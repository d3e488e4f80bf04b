# SPDX-License-Identifier: GPL-2.0-only
"""compare RUN OTHER: compare.md on stdout (tswap.report.summary.
compare_md): RUN's and OTHER's aggregate.json, point by point."""

from __future__ import annotations

import argparse
import os
import sys

from ..report.summary import compare_md
from . import read_json

HELP = 'compare.md of two runs (tswap.report.summary)'


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('rundir', metavar='RUN')
    p.add_argument('other')


def run(a: argparse.Namespace) -> int:
    sys.stdout.write(compare_md(a.rundir, a.other, read_json(os.path.join(a.rundir, 'aggregate.json'), 'aggregate'),
                                read_json(os.path.join(a.other, 'aggregate.json'), 'aggregate')))
    return 0
