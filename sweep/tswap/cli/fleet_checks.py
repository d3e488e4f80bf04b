# SPDX-License-Identifier: GPL-2.0-only
"""fleet-checks FLEET --settings JSON: fleet.json with each host's stack
checks judged across the fleet, on stdout.

stdin: one JSON document per host, in host order: tswap-check's output on
the host's collector output, or {collected: false, note}. --settings:
the aio settings checked against ({block_size, queue_depth, threads,
backend, from}) (tswap.stats.fleet_check)."""

from __future__ import annotations

import argparse
import sys

from .. import jqjson
from ..stats.fleet_check import with_checks
from . import StageError, read_json, write_json
from .finish import documents

HELP = "fleet.json with each host's stack checks (tswap.stats.fleet_check)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('fleet')
    p.add_argument('--settings', required=True)


def run(a: argparse.Namespace) -> int:
    try:
        settings = jqjson.loads(a.settings)
    except ValueError as e:
        raise StageError('host checks: %s' % e) from None
    hc = documents(sys.stdin.read(), 'host checks')
    write_json(with_checks(read_json(a.fleet, 'fleet'), hc, settings))
    return 0
