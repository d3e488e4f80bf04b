# SPDX-License-Identifier: GPL-2.0-only
"""check-settings BEST_AIO: the aio settings a fleet's stack checks judge
against, as one line of JSON: {block_size, queue_depth, threads, backend,
from} (tswap.stats.check.settings_for). stdin: the plan's points (a
JSON list; empty: none)."""

from __future__ import annotations

import argparse
import sys

from .. import jqjson
from ..stats.check import settings_for
from . import StageError, read_json, write_json

HELP = 'the aio settings of a fleet\'s stack checks (tswap.stats.check)'


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('best_aio')


def run(a: argparse.Namespace) -> int:
    text = sys.stdin.read()
    try:
        plan = jqjson.loads(text) if text.strip() else None
    except ValueError as e:
        raise StageError('plan: %s' % e) from None
    write_json(settings_for(read_json(a.best_aio, 'best-aio'), plan), compact=True)
    return 0
