# SPDX-License-Identifier: GPL-2.0-only
"""bwlog MODE DIR... --ms MS --min N --lim PCT: the bandwidth logs
(bw_bw.*.log) of the DIRs (tswap.results.bwlog), summed over the jobs per
MS interval. MODE series: "SECONDS GB/s" lines in time order; summary: the run's
thirds as JSON text (null below N samples), PCT the drop that "drops"."""

from __future__ import annotations

import argparse
import os
import sys

from .. import jqjson
from ..results import bwlog
from . import StageError
from .files import shell_glob

HELP = "GB/s over time from fio's bandwidth logs (tswap.results.bwlog)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('mode', choices=('series', 'summary'))
    p.add_argument('dirs', nargs='*')
    for k in ('ms', 'min', 'lim'):
        p.add_argument('--' + k, required=True)


def run(a: argparse.Namespace) -> int:
    try:
        ms, least, lim = (jqjson.loads(getattr(a, k)) for k in ('ms', 'min', 'lim'))
    except ValueError as e:
        raise StageError('bwlog: --ms, --min, --lim: %s' % e) from None
    files = [f for d in a.dirs for f in shell_glob(os.path.join(d, 'bw_bw.*.log'))]
    lines = bwlog.read_lines(files)
    if a.mode == 'summary':
        sys.stdout.write(bwlog.summary_text([x for x, _ in lines], ms, least, lim) + '\n')
    else:
        sys.stdout.write(bwlog.series([x for x, _ in lines], ms))
    return 0
