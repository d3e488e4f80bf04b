# SPDX-License-Identifier: GPL-2.0-only
"""meta TARGET ENGINE TSWAP [--into DIR]: meta.json on stdout from
lib/meta-collect.sh's "key<TAB>value" lines on stdin (tswap.results.meta).
TARGET: the path as the sweep names it; ENGINE: the engine it loads;
TSWAP: its version. With --into DIR, nothing on stdout: DIR/meta.json is
written, and DIR/sweep.json gets it as its "meta" (what lib/meta.sh
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


def run(a: argparse.Namespace) -> int:
    m = kv_lines(sys.stdin.buffer.read().decode('utf-8', 'replace'))
    if m is None:
        return 1
    doc = meta(a.target, a.engine, a.tswap, m)
    if a.into is None:
        write_json(doc)
        return 0
    text = jqjson.dumps(doc) + '\n'
    write_text(a.into + '/meta.json', text)
    with open(a.into + '/sweep.json', encoding='utf-8') as f:
        sweep = jqjson.loads(f.read())
    # jq --slurpfile reads meta.json back: its numbers as doubles
    sweep['meta'] = jqjson.loads(text)
    write_text(a.into + '/sweep.json', jqjson.dumps(sweep) + '\n')
    return 0
