# SPDX-License-Identifier: GPL-2.0-only
"""fleet-csv RESULTS FLEET: a fleet's summary.csv on stdout: the header,
then each tswap run of each host (RESULTS: results.json) with the host's
metadata fields (FLEET: fleet.json) (tswap.report.fleet_text)."""

from __future__ import annotations

import argparse
import sys

from ..report.fleet_text import summary_csv
from . import read_json

HELP = "a fleet's summary.csv (tswap.report.fleet_text)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('results')
    p.add_argument('fleet')


def run(a: argparse.Namespace) -> int:
    sys.stdout.write(''.join(x + '\n' for x in summary_csv(read_json(a.results, 'results'),
                                                           read_json(a.fleet, 'fleet'))))
    return 0
