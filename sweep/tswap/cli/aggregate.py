# SPDX-License-Identifier: GPL-2.0-only
"""aggregate RESULTS PLAN [META]: aggregate.json on stdout.

RESULTS: results.json (an array of result.json objects); PLAN: plan.json
or a JSON array of points ("-": stdin); META: meta.json, set as .meta
when it exists and is not empty. The limits are the run's (sweep/lib/
state.sh): --cvflag, --cvrel, --cvmax, --cache, --costtol (fractions);
--across-hosts: the fleet-wide aggregate, whose CV does not flag;
--link-meta META (repeatable): meta.json files whose PCIe link limits the
points (a fleet's hosts; without it, META's)."""

from __future__ import annotations

import argparse

from ..stats.aggregate import Limits, aggregate
from . import read_json, read_json_opt, write_json

HELP = 'aggregate.json from results.json (tswap.stats.aggregate)'


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('results')
    p.add_argument('plan')
    p.add_argument('meta', nargs='?')
    for k in ('cvflag', 'cvrel', 'cvmax', 'cache', 'costtol'):
        p.add_argument('--' + k, type=float, required=True)
    p.add_argument('--across-hosts', action='store_true')
    p.add_argument('--link-meta', action='append', metavar='META',
                   help="a host's meta.json whose PCIe link limits the points (repeatable: a "
                   "fleet's hosts; tswap.stats.link); not set as .meta")


def run(a: argparse.Namespace) -> int:
    lim = Limits(cvflag=a.cvflag, cvrel=a.cvrel, cvmax=a.cvmax, cache=a.cache,
                 costtol=a.costtol, cvtrust=not a.across_hosts)
    links = None if a.link_meta is None else [read_json_opt(m, 'meta') for m in a.link_meta]
    write_json(aggregate(read_json(a.results, 'results'), read_json(a.plan, 'plan'), lim,
                         read_json_opt(a.meta, 'meta'), links))
    return 0
