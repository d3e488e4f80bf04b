# SPDX-License-Identifier: GPL-2.0-only
"""plot-data AGGREGATE: the data of every plot of a run from its
aggregate.json, NUL-terminated records on stdout (tswap.results.plot_data
lists them); the plots stage (tswap.cli.plots) draws them."""

from __future__ import annotations

import argparse
import sys

from ..results.plot_data import plot_data
from . import read_json

HELP = "the plots' data files from aggregate.json (tswap.results.plot_data)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('aggregate')


def run(a: argparse.Namespace) -> int:
    sys.stdout.write(plot_data(read_json(a.aggregate, 'aggregate')))
    return 0
