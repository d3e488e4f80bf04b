# SPDX-License-Identifier: GPL-2.0-only
"""fleet-results PLAN AGG...: fleet-results.json on stdout.

PLAN: plan.json (its points); AGG: each host's aggregate.json, in host
order. Each host's median per point is one run of the point, for the
fleet-wide aggregate (tswap.results.fleet)."""

from __future__ import annotations

import argparse

from ..results.fleet import host_runs
from . import read_json, write_json

HELP = "fleet-results.json: each host's medians as runs (tswap.results.fleet)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('plan')
    p.add_argument('aggs', nargs='+', metavar='agg')


def run(a: argparse.Namespace) -> int:
    plan = read_json(a.plan, 'plan')['points']
    write_json(host_runs([read_json(f, 'aggregate') for f in a.aggs], plan))
    return 0
