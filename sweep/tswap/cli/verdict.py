# SPDX-License-Identifier: GPL-2.0-only
"""verdict RUN: "FAILED UNTRUSTED" on stdout (tswap.report.verdict.
run_verdict): the runs that failed (RUN/results.json) and true when no
pick is trustworthy (aggregate.json, best-aio.json); exit 3 when one of
them cannot be read."""

from __future__ import annotations

import argparse
import os

from ..report.verdict import run_verdict
from . import read_json

HELP = 'the run verdict: failed runs and untrusted (tswap.report.verdict)'


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('rundir', metavar='RUN')


def run(a: argparse.Namespace) -> int:
    docs = [read_json(os.path.join(a.rundir, f + '.json'), f) for f in ('results', 'aggregate', 'best-aio')]
    failed, untrusted = run_verdict(*docs)
    print('%d %s' % (failed, 'true' if untrusted else 'false'))
    return 0
