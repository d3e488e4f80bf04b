# SPDX-License-Identifier: GPL-2.0-only
"""The runs a --resume does not redo (pipeline.sh load_done): "RUNKEY<TAB>
GB/s" (a fleet's: "RUNKEY/HOSTID<TAB>GB/s") for every result.json one or
two levels below POINTS/KEY.rN that says ok
(tswap.results.result done_entry); directories not renamed into place
(.tmp-*) do not count, nor do files that are not JSON."""

from __future__ import annotations

import os
from typing import Iterator

from .. import jqjson
from ..results.result import done_entry


def entries(points: str) -> Iterator[str]:
    """The "RUNKEY<TAB>GB/s" of each run done under points (RUN/points),
    in os.walk's order; tswap.cli.sweep_local reads them."""
    for top, dirs, files in os.walk(points):
        depth = 0 if top == points else top[len(points):].strip('/').count('/') + 1
        dirs[:] = [] if depth >= 2 else [d for d in dirs if not d.startswith('.tmp-')]
        if depth >= 1 and 'result.json' in files:
            try:
                with open(os.path.join(top, 'result.json'), encoding='utf-8', errors='replace') as f:
                    e = done_entry(jqjson.loads(f.read()))
            except (OSError, ValueError):
                continue
            if e:
                yield '%s\t%s' % e

