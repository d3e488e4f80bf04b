# SPDX-License-Identifier: GPL-2.0-only
"""plan [--doc | --facts] < PLAN_TEXT: the plan text (tswap.plan.expand's lines)
as plan.json's points, a JSON array on stdout; --doc: plan.json's
document, {"points": [...]}; --facts: ranks.sh plan_facts' lines
(tswap.plan.points.facts)."""

from __future__ import annotations

import argparse
import sys

from ..plan.points import facts, parse
from . import StageError, write_json

HELP = "plan.json's points from the plan text (tswap.plan.points)"


def setup(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument('--doc', action='store_true')
    g.add_argument('--facts', action='store_true')


def run(a: argparse.Namespace) -> int:
    t = sys.stdin.read()
    if a.facts:
        sys.stdout.write(''.join(line + '\n' for line in facts(t)))
        return 0
    try:
        pts = parse(t)
    except ValueError as e:
        raise StageError('plan: %s' % e) from None
    write_json({'points': pts} if a.doc else pts)
    return 0
