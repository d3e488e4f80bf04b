# SPDX-License-Identifier: GPL-2.0-only
"""fleet-summary FLEET: the fleet summary on stdout: each host's verdict
and figures, the fleet median, the counts (tswap.report.fleet_text)."""

from __future__ import annotations

import argparse
import sys

from ..report.fleet_text import summary
from . import read_json

HELP = 'the fleet summary on stdout (tswap.report.fleet_text)'


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('fleet')


def run(a: argparse.Namespace) -> int:
    sys.stdout.write(''.join(x + '\n' for x in summary(read_json(a.fleet, 'fleet'))))
    return 0
