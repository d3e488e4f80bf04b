# SPDX-License-Identifier: GPL-2.0-only
"""ds-release [--check] VERSION: what tswap.plan.deepspeed knows of
DeepSpeed VERSION (MAJOR.MINOR[.PATCH]; "": the newest it knows), as one
JSON line: aio_keys, deepspeed_versions, threads_key, the alignments
(bytes per thread), pread_bound, locked_swap_buffers, pin_memory,
tune_grid, tune_keys, checkpoint_writer. --check prints nothing. A
version it does not know: the rule, naming --ds-version, in one line on
stderr, exit 2 (tswap-sweep's --ds-version check)."""

from __future__ import annotations

import argparse
import sys

from ..plan.deepspeed import ReleaseError, facts, release
from . import PROG, write_json

HELP = 'the DeepSpeed release facts of --ds-version (tswap.plan.deepspeed)'


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('--check', action='store_true')
    p.add_argument('version')


def run(a: argparse.Namespace) -> int:
    try:
        r = release(a.version)
    except ReleaseError as e:
        print('%s: %s' % (PROG, e), file=sys.stderr)
        return 2
    if not a.check:
        write_json(facts(r), compact=True)
    return 0
