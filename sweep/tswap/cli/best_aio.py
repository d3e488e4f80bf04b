# SPDX-License-Identifier: GPL-2.0-only
"""best-aio AGGREGATE [--ds-version V]: best-aio.json on stdout
(tswap.report.best_aio): DeepSpeed's aio keys of release V (MAJOR.MINOR
[.PATCH], tswap.plan.deepspeed; absent or "": the newest it knows). A
release it does not know (a resumed run's) is one line, exit 3."""

from __future__ import annotations

import argparse

from ..plan.deepspeed import ReleaseError
from ..report.best_aio import best_aio
from . import StageError, read_json, write_json

HELP = 'best-aio.json from aggregate.json (tswap.report.best_aio)'


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('aggregate')
    p.add_argument('--ds-version', default='')


def run(a: argparse.Namespace) -> int:
    try:
        doc = best_aio(read_json(a.aggregate, 'aggregate'), a.ds_version)
    except ReleaseError as e:
        raise StageError(str(e)) from None
    write_json(doc)
    return 0
