# SPDX-License-Identifier: GPL-2.0-only
"""meta TARGET ENGINE TSWAP [--into DIR]: meta.json on stdout from
lib/meta-collect.sh's "key<TAB>value" lines on stdin (tswap.results.meta).
TARGET: the path as the sweep names it; ENGINE: the engine it loads;
TSWAP: its version. With --into DIR, nothing on stdout: DIR/meta.json is
written, and DIR/sweep.json gets it as its "meta" (what meta.sh
write_meta did with mv and jq's `.meta = $m[0]`: the key replaced in
place, else added last), each file through FILE.tmp and a rename.
Exit status 1 (nothing printed or written) when stdin is not the
collector's output."""

from __future__ import annotations

import argparse
import sys

from .. import jqjson
from ..results.meta import kv_lines, meta
from . import write_json
from .files import write_text

HELP = "meta.json from the collector's lines (tswap.results.meta)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('target')
    p.add_argument('engine')
    p.add_argument('tswap')
    p.add_argument('--into', metavar='DIR',
                   help='write DIR/meta.json and the "meta" of DIR/sweep.json, not stdout')


def write_into(d: str, target: str, engine: str, tswap: str, kv: str) -> bool:
    """d/meta.json from the collector's lines kv, and d/sweep.json's "meta"
    (what --into does); False (nothing written) when kv is not the
    collector's output."""
    m = kv_lines(kv)
    if m is None:
        return False
    text = jqjson.dumps(meta(target, engine, tswap, m)) + '\n'
    write_text(d + '/meta.json', text)
    with open(d + '/sweep.json', encoding='utf-8') as f:
        sweep = jqjson.loads(f.read())
    # jq --slurpfile reads meta.json back: its numbers as doubles
    sweep['meta'] = jqjson.loads(text)
    write_text(d + '/sweep.json', jqjson.dumps(sweep) + '\n')
    return True


def run(a: argparse.Namespace) -> int:
    kv = sys.stdin.buffer.read().decode('utf-8', 'replace')
    if a.into is not None:
        return 0 if write_into(a.into, a.target, a.engine, a.tswap, kv) else 1
    m = kv_lines(kv)
    if m is None:
        return 1
    write_json(meta(a.target, a.engine, a.tswap, m))
    return 0
