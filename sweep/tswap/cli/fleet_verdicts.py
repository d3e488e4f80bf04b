# SPDX-License-Identifier: GPL-2.0-only
"""fleet-verdicts RUN: fleet.json on stdout, from a fleet run directory.

Reads RUN/sweep.json (the hosts), RUN/plan.json, and per host ID:
RUN/hosts/ID/{aggregate,results}.json, RUN/preflight/ID/result.json and
meta.json (when they exist). --min-read, --min-write: the bars as given
(GB/s; "" for none); --outlier-pct: percent below the fleet median
(tswap.stats.fleet, tswap.stats.fleet_meta)."""

from __future__ import annotations

import argparse
import os
from types import MappingProxyType

from ..stats.fleet import Bars, verdicts
from ..stats.fleet_meta import with_meta
from . import read_json, write_json

HELP = "fleet.json: each host's verdict and metadata (tswap.stats.fleet)"

NOT_PROBED = MappingProxyType({'collected': False, 'note': 'metadata: not collected (the host was not probed in this run)'})


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('run_dir', metavar='RUN')
    p.add_argument('--min-read', default='')
    p.add_argument('--min-write', default='')
    p.add_argument('--outlier-pct', type=float, required=True)


def run(a: argparse.Namespace) -> int:
    cfg = read_json(os.path.join(a.run_dir, 'sweep.json'), 'sweep.json')
    ids = [h['id'] for h in cfg['fleet']['hosts']]
    hosts = [os.path.join(a.run_dir, 'hosts', i) for i in ids]
    pre = [os.path.join(a.run_dir, 'preflight', i) for i in ids]

    def opt(path: str, what: str, none: object) -> object:
        return read_json(path, what) if os.path.isfile(path) else none
    fl = verdicts(cfg, [read_json(os.path.join(d, 'aggregate.json'), 'aggregate') for d in hosts],
                  [read_json(os.path.join(d, 'results.json'), 'results') for d in hosts],
                  [opt(os.path.join(d, 'result.json'), 'preflight result', None) for d in pre],
                  read_json(os.path.join(a.run_dir, 'plan.json'), 'plan')['points'],
                  Bars(min_read=a.min_read, min_write=a.min_write, outlier_pct=a.outlier_pct))
    write_json(with_meta(fl, [opt(os.path.join(d, 'meta.json'), 'meta', dict(NOT_PROBED)) for d in pre]))
    return 0
