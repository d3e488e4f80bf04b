# SPDX-License-Identifier: GPL-2.0-only
"""summary-csv RESULTS AGGREGATE: summary.csv on stdout (header and a row
per tswap run and repeat: tswap.report.csv)."""

from __future__ import annotations

import argparse
import sys

from ..report.csv import summary_csv
from . import StageError, read_json, read_json_opt

HELP = 'summary.csv from results.json (tswap.report.csv)'


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('results')
    p.add_argument('aggregate')


def run(a: argparse.Namespace) -> int:
    try:
        text = summary_csv(read_json(a.results, 'results'), read_json_opt(a.aggregate, 'aggregate'))
    except ValueError as e:
        raise StageError('results %s: %s' % (a.results, e)) from None
    sys.stdout.write(text)
    return 0
