# SPDX-License-Identifier: GPL-2.0-only
"""meta TARGET ENGINE TSWAP: meta.json on stdout from lib/meta-collect.sh's
"key<TAB>value" lines on stdin (tswap.results.meta). TARGET: the path as
the sweep names it; ENGINE: the engine it loads; TSWAP: its version.
Exit status 1 (nothing printed) when stdin is not the collector's output."""

from __future__ import annotations

import argparse
import sys

from ..results.meta import kv_lines, meta
from . import write_json

HELP = "meta.json from the collector's lines (tswap.results.meta)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('target')
    p.add_argument('engine')
    p.add_argument('tswap')


def run(a: argparse.Namespace) -> int:
    m = kv_lines(sys.stdin.buffer.read().decode('utf-8', 'replace'))
    if m is None:
        return 1
    write_json(meta(a.target, a.engine, a.tswap, m))
    return 0
