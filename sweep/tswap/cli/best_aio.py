# SPDX-License-Identifier: GPL-2.0-only
"""best-aio AGGREGATE [--ds-version V]: best-aio.json on stdout
(tswap.report.best_aio): DeepSpeed's aio keys of release V (MAJOR.MINOR
[.PATCH], checked by the entry point; absent or "": the newest)."""

from __future__ import annotations

import argparse

from ..report.best_aio import best_aio
from . import read_json, write_json

HELP = 'best-aio.json from aggregate.json (tswap.report.best_aio)'


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('aggregate')
    p.add_argument('--ds-version', default='')


def run(a: argparse.Namespace) -> int:
    write_json(best_aio(read_json(a.aggregate, 'aggregate'), a.ds_version))
    return 0
