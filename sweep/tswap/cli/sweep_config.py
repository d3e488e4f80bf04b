# SPDX-License-Identifier: GPL-2.0-only
"""sweep-config --NAME VALUE ... [--fleet FILE]: sweep.json on stdout
(tswap.plan.config; Settings says what each value is). Text options:
target, target-kind, size, grid, grid-desc, runtime, ramp, io-size,
engine, ceiling-bs, ds-version, steady, ss-crit, precondition, created,
host, kernel, fio; JSON options: size-bytes, repeat, ceiling, ceiling-qd,
ceiling-jobs, fixed-runtime, ss-dur, targets. --workload: tensor or
checkpoint (absent: no key). --fleet: the fleet's part (a JSON file;
empty or absent: none)."""

from __future__ import annotations

import argparse
from dataclasses import fields

from ..plan.config import Settings, sweep_json
from . import json_value, read_json_opt, write_json

HELP = 'sweep.json from the run settings (tswap.plan.config)'

_JSON = frozenset(('size_bytes', 'repeat', 'ceiling', 'ceiling_qd', 'ceiling_jobs',
                   'fixed_runtime', 'ss_dur', 'targets'))


def setup(p: argparse.ArgumentParser) -> None:
    for f in fields(Settings):
        if f.name in ('fleet', 'workload'):
            continue
        p.add_argument('--' + f.name.replace('_', '-'), dest=f.name, required=True,
                       type=json_value if f.name in _JSON else str)
    p.add_argument('--workload', default='', choices=('tensor', 'checkpoint'))
    p.add_argument('--fleet')


def run(a: argparse.Namespace) -> int:
    values = {f.name: getattr(a, f.name) for f in fields(Settings) if f.name != 'fleet'}
    write_json(sweep_json(Settings(fleet=read_json_opt(a.fleet, 'fleet'), **values)))
    return 0
