# SPDX-License-Identifier: GPL-2.0-only
"""junit FLEET.JSON SWEEP.JSON: a fleet run's junit.xml on stdout
(tswap.report.junit); SWEEP.JSON's created is each testsuite's
timestamp."""

from __future__ import annotations

import argparse
import sys

from ..report.junit import junit
from . import read_json, read_json_opt

HELP = "a fleet run's junit.xml (tswap.report.junit)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('fleet')
    p.add_argument('sweep')


def run(a: argparse.Namespace) -> int:
    cfg = read_json_opt(a.sweep, 'sweep') or {}
    sys.stdout.write(junit(read_json(a.fleet, 'fleet'), cfg.get('created')))
    return 0
