# SPDX-License-Identifier: GPL-2.0-only
"""check --target PATH --settings JSON: tswap-check's checks object
(compact JSON) of a target, from lib/meta-collect.sh's lines on stdin
(a fleet host's preflight/ID/target/meta.kv: fleet-report.sh
fleet_checks). --settings: {block_size, queue_depth, threads, backend}
(check-settings). tswap.stats.check; docs/sweep.md "Checking a host"."""

from __future__ import annotations

import argparse
import sys

from ..stats.check import Settings, checks
from . import StageError, json_args, write_json

HELP = "tswap-check's checks of a target from the collector's lines (tswap.stats.check)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('--target', required=True)
    p.add_argument('--sysroot', default='')
    json_args(p, 'settings')


def run(a: argparse.Namespace) -> int:
    st = a.settings
    try:
        s = Settings(float(st['block_size']), float(st['queue_depth']), float(st['threads']), str(st['backend']))
    except (TypeError, KeyError, ValueError):
        raise StageError('settings: not {block_size, queue_depth, threads, backend}: %s' % st) from None
    write_json(checks(sys.stdin.read(), s, a.target, a.sysroot), compact=True)
    return 0
