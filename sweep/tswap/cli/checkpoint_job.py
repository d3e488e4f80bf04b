# SPDX-License-Identifier: GPL-2.0-only
"""checkpoint-job PLANLINE FILE_BYTES: the fio job of a checkpoint point
on stdout (tswap.plan.checkpoint.job_file: FastFileWriter's sections of a
file of FILE_BYTES bytes); a plan line FastFileWriter would refuse is one
line, exit 3."""

from __future__ import annotations

import argparse
import sys

from ..plan.checkpoint import CheckpointError, job_file
from . import StageError

HELP = "a checkpoint point's fio job (tswap.plan.checkpoint)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('line')
    p.add_argument('file_bytes', type=int)


def run(a: argparse.Namespace) -> int:
    try:
        text = job_file(a.line, a.file_bytes)
    except (CheckpointError, IndexError, ValueError) as e:
        raise StageError('checkpoint-job: %s' % e) from None
    sys.stdout.write(text)
    return 0
