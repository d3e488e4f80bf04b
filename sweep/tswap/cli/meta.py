# SPDX-License-Identifier: GPL-2.0-only
"""meta.json of a run from lib/meta-collect.sh's "key<TAB>value" lines
(tswap.results.meta), and the run's sweep.json given it as its "meta"
(write_into; tswap.cli.sweep_local calls it for a new run)."""

from __future__ import annotations

from .. import jqjson
from ..results.meta import kv_lines, meta
from .files import write_text


def write_into(d: str, target: str, engine: str, tswap: str, kv: str) -> bool:
    """d/meta.json from the collector's lines kv (target: the path as the
    sweep names it; engine: the engine it loads; tswap: its version), and
    d/sweep.json's "meta" (what meta.sh write_meta did with mv and jq's
    `.meta = $m[0]`: the key replaced in place, else added last), each
    file through FILE.tmp and a rename; False (nothing written) when kv
    is not the collector's output."""
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
