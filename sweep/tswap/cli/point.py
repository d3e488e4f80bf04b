# SPDX-License-Identifier: GPL-2.0-only
"""point DIR --parent PID ... [--line PLANLINE --runkey KEY.rN ...]: one
fio run on this host in this one process (exec-local.sh run_point,
run_fio; docs/sweep.md "Stopping").

With --line (a point): DIR, the point's RUN/D/.tmp-RUNKEY.PID, is made
(an earlier one removed), with job.fio (tswap.plan.jobs point_job,
tswap.plan.checkpoint job_file) and run.sh; the page cache is dropped
before a read point (--drop: "note: ..." on stdout and RUN/notes.txt
when it cannot be, unless --drop-noted 1); fio runs; a status line every
--every seconds on stdout (the progress stream) while it runs; then
result.json and progress.txt (tswap.cli.result write_result) and DIR
renamed to --final (an earlier one removed first). The line "WALL NOTED"
(fio's wall seconds, 3 decimals; 1 when this run gave the page-cache
note, else 0) goes to --reply-fd, exit 0. Another exit status is the
sweep's: the job's error line was said (job.fio has the job up to it),
or, first of all, fewer than --space-min bytes are free in the run
directory: "full FREE" on --reply-fd, exit 3, nothing made (space.sh
says it).

Without --line: fio runs in DIR (its job.fio), and its exit status is
this stage's (the preparation and the preconditioning).

fio: cwd DIR, stdout fio.stdout, stderr fio.stderr, stdin /dev/null,
TSWAP_ENGINE, TSWAP_TARGET, TSWAP_SIZE and the rank files' variables as
fio sees them from DIR (--depth levels below --run-dir; a path held open by
the sweep, --fd N=PATH, as /proc/self/fd/N: fio keeps those descriptors),
in its own session, tagged and stopped as tswap.executor.fioproc says.
This process dies with its parent, --parent (PR_SET_PDEATHSIG SIGUSR1:
fio, its group and its job processes are SIGKILLed first). A SIGINT,
SIGTERM or SIGHUP is forwarded to fio's group; after FIO_GRACE seconds
the group and the tagged processes are SIGKILLed; DIR is removed (a point
is whole or absent) and this process dies of the same signal."""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import signal
import sys
import time
from typing import Optional

from .. import jqjson
from ..executor import fioproc
from ..executor.point import FIO_ARGV, FioEnv, Targets, drop_caches, fio_env, job_text, run_sh, write_exec
from ..plan.checkpoint import CheckpointError
from ..plan.jobs import JobError, JobSettings
from ..plan.values import EXIT_ERROR, EXIT_USAGE
from . import PROG, StageError

HELP = "one fio run on this host, its process control and its result (tswap.executor)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('dir')
    p.add_argument('--parent', type=int, required=True, help='the sweep: this stage dies with it')
    p.add_argument('--run-dir', required=True, help='the run directory (RUN)')
    p.add_argument('--depth', type=int, required=True, help='levels of DIR below RUN')
    p.add_argument('--engine', required=True)
    p.add_argument('--target-now', required=True, help="TARGET: fio's target")
    p.add_argument('--size', required=True, help='--size as given (TSWAP_SIZE)')
    p.add_argument('--target', action='append', default=[], help='once per target, in order')
    p.add_argument('--kind', action='append', default=[], help='file or block, once per target')
    p.add_argument('--slot', action='append', default=[], help='RANK:HANDLE of the plan')
    p.add_argument('--fd', action='append', default=[], help='N=PATH: PATH held open as N')
    p.add_argument('--prog', default='tswap-sweep')
    # a point
    p.add_argument('--line')
    for k in ('runkey', 'repeat', 'final', 'grid', 'label', 'size-bytes', 'runtime', 'ramp', 'io-size',
              'steady', 'ss-crit', 'ss-dur', 'bwlog-msec', 'bwlog-min', 'drop-pct'):
        p.add_argument('--' + k, default='')
    p.add_argument('--every', type=float, default=0, help='seconds between status lines (0: none)')
    p.add_argument('--drop', action='store_true', help='drop the page cache first (a read point)')
    p.add_argument('--drop-noted', default='0')
    p.add_argument('--reply-fd', type=int)
    p.add_argument('--space-min', type=int, default=0,
                   help='bytes: fewer free in the run directory: "full FREE" on --reply-fd, exit 3')


def _out(fd: int, text: str) -> None:
    try:
        os.write(fd, os.fsencode(text))
    except OSError:
        pass


def status_text(label: str, el: int, total: Optional[int]) -> str:
    """The status line of a running point (status.sh's), elapsed el
    seconds of total (ramp + runtime; None with --io-size)."""
    if total is None:
        return '    %s: %d s, --io-size: no estimate\n' % (label, el)
    if el <= total:
        return '    %s: %d s of %d s, %d s left\n' % (label, el, total, total - el)
    return '    %s: %d s of %d s, winding down\n' % (label, el, total)


def wall_text(ns: int) -> str:
    """Nanoseconds as seconds with 3 decimals, rounded (pipeline.sh
    since_into)."""
    ms = (ns // 1000 + 500) // 1000
    return '%d.%03d' % (ms // 1000, ms % 1000)


def run_dir_free(run: str) -> Optional[int]:
    """Bytes available to the sweep on run's filesystem, as `df -P -B1`'s
    Available (space.sh run_dir_free); None when it cannot tell."""
    try:
        st = os.statvfs(run)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def _remove(path: str) -> None:
    if os.path.lexists(path):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)


def _fds(a: argparse.Namespace) -> dict[str, int]:
    out = {}
    for x in a.fd:
        n, _, path = x.partition('=')
        out[path] = int(n)
    return out


def _targets(a: argparse.Namespace) -> Targets:
    slots = []
    for s in a.slot:
        r, _, h = s.partition(':')
        slots.append((int(r), h))
    return Targets(tuple(a.target), tuple(a.kind), a.target_now, tuple(slots))


def run_fio(d: str, env: FioEnv, a: argparse.Namespace, label: str = '',
            total: Optional[int] = None, tmp: str = '') -> tuple[int, int]:
    """fio in d, stopped as the module says; (its exit status, the wall
    nanoseconds from its start to its end). tmp: removed when a signal
    stops it."""
    warn = (lambda m: _out(2, '%s: %s\n' % (a.prog, m)))
    with open(os.path.join(d, 'fio.stdout'), 'wb') as o, open(os.path.join(d, 'fio.stderr'), 'wb') as e:
        t0 = time.monotonic_ns()
        fio = fioproc.Fio(FIO_ARGV, d, dict(os.environ, **env.run_env), o.fileno(), e.fileno(),
                          env.fds, warn)
    every = a.every if label else 0
    if tmp:
        # the result's modules are read while fio runs: not between points
        importlib.import_module('.result', __package__)
    try:
        rc = fio.wait(every, lambda t: _out(1, status_text(label, t.elapsed, total)))
    except fioproc.Stopped as s:
        if tmp:
            _remove(tmp)
        fioproc.die_of(s.sig)
    wall = time.monotonic_ns() - t0
    if fio.leftovers():
        with open(os.path.join(d, 'fio.stderr'), 'a', encoding='utf-8') as e:
            e.write('tswap fio guard: fio exited %d and left job processes running: killed\n' % rc)
    return rc, wall


def _start(a: argparse.Namespace) -> None:
    """This process's own guard: signals blocked (taken in the wait),
    SIGPIPE ignored (a closed progress stream costs its lines, not the
    point), and death with the parent; the parent already gone: exit."""
    fioproc.block_signals()
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    # out of the sweep's process group: a group SIGKILL (timeout -k)
    # ends the sweep, and this process lives on to end fio (USR1 below)
    try:
        os.setsid()
    except OSError:
        pass
    fioproc.set_pdeathsig(signal.SIGUSR1)
    if os.getppid() != a.parent:
        sys.exit(125)


def _stop_pending(tmp: str) -> None:
    sig = fioproc.pending_stop()
    if sig is not None:
        if tmp:
            _remove(tmp)
        fioproc.die_of(sig)


def run(a: argparse.Namespace) -> int:
    _start(a)
    t = _targets(a)
    env = fio_env(a.engine, a.size, t, a.depth, a.run_dir, _fds(a))
    if a.line is None:
        _stop_pending('')
        return run_fio(a.dir, env, a)[0]
    free = run_dir_free(a.run_dir)
    if free is not None and free < a.space_min:
        # the sweep says it and cleans up (space.sh run_dir_full_exit)
        if a.reply_fd is not None:
            _out(a.reply_fd, 'full %d\n' % free)
        return EXIT_ERROR
    d = a.dir
    _remove(d)
    os.makedirs(d)
    s = JobSettings(int(a.size_bytes), a.runtime, a.ramp, a.io_size, a.steady == 'on', a.ss_crit,
                    int(a.ss_dur or 0), a.bwlog_msec, t.all, t.kinds)
    job = os.path.join(d, 'job.fio')
    try:
        text = job_text(a.line, s)
    except JobError as e:
        with open(job, 'w', encoding='utf-8', errors='surrogateescape') as f:
            f.write(e.text)
        _out(2, '%s: %s\n' % (a.prog, e))
        return EXIT_USAGE
    except (CheckpointError, IndexError, ValueError) as e:
        if a.line.split('\t', 2)[1:2] != ['checkpoint']:
            raise
        # the line the checkpoint-job stage gave (tswap.cli.point_jobs)
        open(job, 'w').close()
        _out(2, '%s: checkpoint-job: %s\n' % (PROG, e))
        return EXIT_ERROR
    with open(job, 'w', encoding='utf-8', errors='surrogateescape') as f:
        f.write(text)
    write_exec(os.path.join(d, 'run.sh'), run_sh(a.grid, t.now, env))
    noted = 0
    if a.drop:
        why = drop_caches(a.run_dir)
        if why and a.drop_noted == '0':
            noted = 1
            _out(1, 'note: %s\n' % why)
            with open(os.path.join(a.run_dir, 'notes.txt'), 'a', encoding='utf-8') as f:
                f.write(why + '\n')
    _stop_pending(d)
    total = int(a.ramp or 0) + int(a.runtime) if a.runtime else None
    rc, ns = run_fio(d, env, a, a.label, total, d)
    wall = wall_text(ns)
    from .result import write_result
    try:
        write_result(d, a.line, a.runkey, a.repeat, str(rc), wall, t.json_list(),
                     *(jqjson.loads(x) for x in (a.bwlog_msec, a.bwlog_min, a.drop_pct)))
        # an earlier run of RUNKEY that did not say ok (--resume runs it
        # again): removed first; then mv -T
        _remove(a.final)
        os.rename(d, a.final)
    except (OSError, StageError):
        _remove(d)
        raise
    if a.reply_fd is not None:
        _out(a.reply_fd, '%s %d\n' % (wall, noted))
    return 0
