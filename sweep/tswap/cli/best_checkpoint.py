# SPDX-License-Identifier: GPL-2.0-only
"""best-checkpoint AGGREGATE [--ds-version V]: best-checkpoint.json on
stdout (tswap.plan.checkpoint.best_checkpoint): the checkpoint.writer
block and the aio block DeepSpeed V reads, from aggregate.json's best
write when it is a checkpoint point; {trusted: false, reason} when
checkpoint points have results but none is trustworthy; {} without one.
A release before 0.17.1 (no FastFileWriter) or unknown: one line, exit 3."""

from __future__ import annotations

import argparse

from ..plan.checkpoint import best_checkpoint
from ..plan.deepspeed import DEEPNVME, ReleaseError, release, show
from . import StageError, read_json, write_json

HELP = 'best-checkpoint.json from aggregate.json (tswap.plan.checkpoint)'
UNTRUSTED = ('every checkpoint point with a result is flagged (above the ceiling, failed or CV:'
             ' report.md says which); no config is given')


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('aggregate')
    p.add_argument('--ds-version', default='')


def run(a: argparse.Namespace) -> int:
    try:
        if not release(a.ds_version).checkpoint_writer:
            raise StageError('--ds-version %s: DeepSpeed has no FastFileWriter before %s'
                             % (a.ds_version, show(DEEPNVME)))
        agg = read_json(a.aggregate, 'aggregate')
        b = (agg.get('best') or {}).get('write')
        if b is not None and b.get('kind') == 'checkpoint':
            doc = best_checkpoint(b, b.get('verdict'), a.ds_version)
        elif any(p.get('kind') == 'checkpoint' and p.get('gbs') is not None
                 for p in agg.get('points') or []):
            doc = {'trusted': False, 'reason': UNTRUSTED}
        else:
            doc = {}
    except ReleaseError as e:
        raise StageError(str(e)) from None
    write_json(doc)
    return 0
