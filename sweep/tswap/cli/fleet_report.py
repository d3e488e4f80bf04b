# SPDX-License-Identifier: GPL-2.0-only
"""fleet-report RUN [--notes TEXT]: a fleet's report.md up to its plots, on
stdout: the run, verdict, hosts, fleet, errors, points by host, best
settings (tswap.report.fleet), what each host is and the checks
(tswap.report.fleet_text). Reads RUN/sweep.json, fleet.json,
aggregate.json, best-aio.json and hosts/ID/aggregate.json."""

from __future__ import annotations

import argparse
import os
import sys

from ..report.fleet import report
from ..report.fleet_text import check_report, meta_report
from . import read_json, read_json_opt

HELP = "a fleet's report.md sections (tswap.report.fleet)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('run_dir', metavar='RUN')
    p.add_argument('--notes', default='')


def run(a: argparse.Namespace) -> int:
    def doc(name: str) -> object:
        return read_json(os.path.join(a.run_dir, name), name)
    sweep, fl = doc('sweep.json'), doc('fleet.json')
    hagg = [doc(os.path.join('hosts', h['id'], 'aggregate.json')) for h in sweep['fleet']['hosts']]
    aio_path = os.path.join(a.run_dir, 'best-aio.json')
    if not os.path.isfile(aio_path):
        read_json(aio_path, 'best-aio.json')
    lines = (report(sweep, fl, doc('aggregate.json'), hagg, read_json_opt(aio_path, 'best-aio.json'), a.notes)
             + meta_report(fl) + check_report(fl))
    sys.stdout.write(''.join(x + '\n' for x in lines))
    return 0
