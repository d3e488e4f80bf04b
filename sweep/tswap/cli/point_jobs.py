# SPDX-License-Identifier: GPL-2.0-only
"""point-jobs [OPTIONS] < PLAN_TEXT: the job file of every plan line, as
bash declarations the sweep's executor sources once per pass over the
plan (jobs.sh point_job looks them up): `declare -gA JOBS=([H/KEY]=TEXT
...)`, H empty on this host, else each fleet host's index (--hlabel ...
given once per host, in order); `declare -gA JOBS_ERR=([H/KEY]=STATUS<TAB>
LINE)` for a point that has no job: the sweep prints JOBS' text (what
comes before the error), then LINE on stderr, and exits STATUS.
tswap.plan.jobs point_job (tswap and ceiling points),
tswap.plan.checkpoint job_file (checkpoint points)."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Optional

from ..plan.checkpoint import CheckpointError, job_file
from ..plan.jobs import Host, JobError, JobSettings, point_job
from ..plan.values import EXIT_ERROR, EXIT_USAGE
from . import PROG

HELP = "every point's fio job, as bash declarations (tswap.plan.jobs)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('--size-bytes', type=int, required=True)
    p.add_argument('--runtime', default='')
    p.add_argument('--ramp', default='')
    p.add_argument('--io-size', default='')
    p.add_argument('--steady', choices=('on', 'off', ''), default='')
    p.add_argument('--ss-crit', required=True)
    p.add_argument('--ss-dur', type=int, required=True)
    p.add_argument('--bwlog-msec', required=True)
    p.add_argument('--target', action='append', default=[], help='once per target, in order')
    p.add_argument('--kind', action='append', default=[], help='file or block, once per target')
    for h in ('hlabel', 'haddr', 'hengine', 'htarget', 'hopts'):
        p.add_argument('--' + h, action='append', default=[], help='once per fleet host, in order')
    p.add_argument('--prog', default='tswap-sweep', help="the sweep's name in an error line")


def _declare(name: str, d: dict[str, str]) -> str:
    return 'declare -gA %s=(%s)\n' % (
        name, ' '.join('[%s]=%s' % (shlex.quote(k), shlex.quote(v)) for k, v in d.items()))


def run(a: argparse.Namespace) -> int:
    s = JobSettings(a.size_bytes, a.runtime, a.ramp, a.io_size, a.steady == 'on', a.ss_crit,
                    a.ss_dur, a.bwlog_msec, tuple(a.target), tuple(a.kind))
    hosts = [Host(*h) for h in zip(a.hlabel, a.haddr, a.hengine, a.htarget, a.hopts)]
    places: list[tuple[str, Optional[Host]]] = [(str(i), h) for i, h in enumerate(hosts)] or [('', None)]
    jobs: dict[str, str] = {}
    errs: dict[str, str] = {}
    for line in sys.stdin.read().split('\n'):
        if not line:
            continue
        key, kind = line.split('\t', 2)[:2]
        for name, host in places:
            k = '%s/%s' % (name, key)
            if k in jobs:
                continue
            if kind == 'checkpoint':
                # one file of --size as FastFileWriter writes it; a refusal
                # is the line the checkpoint-job stage gave before
                try:
                    jobs[k] = job_file(line, s.size_bytes)
                except (CheckpointError, IndexError, ValueError) as e:
                    jobs[k], errs[k] = '', '%d\t%s: checkpoint-job: %s' % (EXIT_ERROR, PROG, e)
                continue
            try:
                jobs[k] = point_job(line, s, host)
            except JobError as e:
                jobs[k], errs[k] = e.text, '%d\t%s: %s' % (EXIT_USAGE, a.prog, e)
    sys.stdout.write(_declare('JOBS', jobs) + _declare('JOBS_ERR', errs))
    return 0
