# SPDX-License-Identifier: GPL-2.0-only
"""The executor of a run on this host, in the front end's own process
(issue 36): the hooks of tswap.executor.loop.Executor, each point's fio
(tswap.executor.fioproc) and the signals that stop it; the targets'
preparation and the preconditioning are tswap.executor.local_prepare's.
The bash it replaces: exec-local.sh run_point, run_fio, ceiling_prep;
pipeline.sh on_signal. Every progress line, message, exit status and
file is the same (tests/sweep*.bats).

A signal (INT, TERM, HUP) raises Interrupted (a BaseException: no
handler of a stage takes it for an error) once the handlers are in
(handle_signals); while fio runs, the signals are blocked and fioproc
takes them, stops fio and its group, and Interrupted follows. The
handler ignores further signals first: a second one does not cut the
clean-up short (pipeline.sh on_signal).
"""

from __future__ import annotations

import glob
import os
import signal
import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping, Optional, Sequence

from ..plan.jobs import JobSettings
from ..plan.values import EXIT_ERROR, EXIT_USAGE, Refusal, fmt_secs
from . import fioproc
from .base import (BWLOG_MIN_SAMPLES, BWLOG_MSEC, DROP_PCT, PROG, RUN_SPACE_MIN, SIGNALS, SS_CRIT, SS_DUR,
                   STATUS_EVERY, Exit, Interrupted, _lines, _remove, _write, handle_signals,
                   ignore_signals, point_label, q, run_dir_free, status_text, wall_text)
from .local_prepare import Prepare
from .point import FIO_ARGV, Targets, fio_env
from .targets import Held

# what tswap.cli.run_local and the tests take from here
__all__ = ('BWLOG_MIN_SAMPLES', 'BWLOG_MSEC', 'DROP_PCT', 'PROG', 'RUN_SPACE_MIN', 'SS_CRIT', 'SS_DUR', 'Exit',
           'Hooks', 'Interrupted', 'Local', 'Settings', '_remove', '_write', 'fmt_secs', 'handle_signals',
           'ignore_signals', 'interrupted', 'point_label', 'q', 'run_dir_free', 'status_text', 'wall_text')


@dataclass(frozen=True)
class Settings:
    """What a run on this host takes from the front end's state (state.sh
    names): the run directory, the targets, the grid's runtime, the plan."""
    run: str
    engine: str
    targets: tuple[str, ...]
    kinds: tuple[str, ...]
    owns: Mapping[str, str]
    seen: Mapping[str, str]
    size: str
    size_bytes: int
    runtime: str
    ramp: str
    io_size: str
    steady: str
    repeat: int
    grid: str
    plan_text: str
    slots: tuple[tuple[int, str], ...]
    single: bool
    writes: bool
    destructive: bool
    force: bool
    precondition: str
    quiet: bool


@dataclass(frozen=True)
class Hooks:
    """What the executor asks of the layers after it (tswap.cli):
    result(dir, line, runkey, repeat, rc, wall, targets) writes a run's
    result.json and progress.txt; recheck(path) checks a target file
    that changed again ((exit status, owner), its lines said)."""
    result: Callable[[str, str, str, str, str, str, list], None]
    recheck: Callable[[str], tuple[int, str]]


class Local(Prepare):
    """One run on this host: its settings, the target of now and its
    owner, the held targets, the point being written (tmp) and the
    progress stream (fd)."""

    def __init__(self, s: Settings, hooks: Hooks, progress: int, target_lock: Callable[[str], None],
                 finished: Mapping[str, str] = MappingProxyType({}), kind: str = '') -> None:
        self.s, self.hooks, self.progress = s, hooks, progress
        self.target_lock = target_lock
        self.finished, self.kind_text = finished, kind
        self.target = s.targets[0]
        self.kind = s.kinds[0]
        self.owned = ''
        self.held = Held(self.warn)
        self.tmp = ''
        self.warned: set[str] = set()

    # messages: say, warn, warn_once (tswap.executor.base Messages) and
    # note (local_prepare Prepare)
    def die(self, code: int, msg: str) -> None:
        raise Refusal(code, msg)

    def full_exit(self, free: int) -> None:
        """space.sh run_dir_full_exit."""
        if self.tmp:
            _remove(self.tmp)
            self.tmp = ''
        for f in glob.glob(glob.escape(self.s.run) + '/*.tmp') + glob.glob(glob.escape(self.s.run) + '/points/*.tmp'):
            try:
                os.unlink(f)
            except OSError:
                pass
        self.die(EXIT_ERROR, 'run directory full: %d bytes free in %s (free space, then: %s --resume %s)'
                 % (free, self.s.run, PROG, q(self.s.run)))

    # fio
    def targets_now(self) -> Targets:
        return Targets(self.s.targets, self.s.kinds, self.target, self.s.slots)

    def fio(self, d: str, depth: int, label: str = '', total: Optional[int] = None) -> tuple[int, int]:
        """fio in d (its job.fio), the held targets as descriptors; (exit
        status, wall ns). A stop signal stops it and raises Interrupted."""
        env = fio_env(self.s.engine, self.s.size, self.targets_now(), depth, self.s.run, self.held.fds)
        every = STATUS_EVERY if label else 0
        fioproc.block_signals()
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        try:
            with open(os.path.join(d, 'fio.stdout'), 'wb') as o, open(os.path.join(d, 'fio.stderr'), 'wb') as e:
                t0 = time.monotonic_ns()
                fio = fioproc.Fio(FIO_ARGV, d, dict(os.environ, **env.run_env), o.fileno(), e.fileno(),
                                  env.fds, self.warn)
            try:
                rc = fio.wait(every, lambda t: _write(self.progress, status_text(label, t.elapsed, total)))
            except fioproc.Stopped as st:
                ignore_signals()
                raise Interrupted(st.sig) from None
            except Exception:
                # an error of ours (the progress line, say): fio is
                # stopped and reaped before it goes up (the sweep never
                # exits while a fio of its own runs)
                fio.stop(signal.SIGUSR1)
                raise
            wall = time.monotonic_ns() - t0
            if fio.leftovers():
                with open(os.path.join(d, 'fio.stderr'), 'a', encoding='utf-8') as e2:
                    e2.write('tswap fio guard: fio exited %d and left job processes running: killed\n' % rc)
        finally:
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, fioproc.TAKEN)
        return rc, wall

    def run_fio(self, d: str, depth: int) -> int:
        """exec-local.sh run_fio: fio's exit status; a target that changed
        stops the sweep (exit 2)."""
        if not self.held.open():
            if self.tmp:
                _remove(self.tmp)
            raise Exit(EXIT_USAGE)
        try:
            return self.fio(d, depth)[0]
        finally:
            self.held.close()

    # a point
    def run_point(self, line: str, runkey: str, rep: int, sub: str, label: str,
                  runtime: Optional[str] = None, ramp: Optional[str] = None) -> str:
        """exec-local.sh run_point and the point stage (now in-process):
        one run of line into RUN/sub/runkey; fio's wall seconds (3
        decimals). runtime, ramp: a --budget round's own."""
        from .point import before_read, job_text, run_sh, write_exec
        from ..plan.checkpoint import CheckpointError
        from ..plan.jobs import JobError
        s = self.s
        rt = s.runtime if runtime is None else runtime
        rp = s.ramp if ramp is None else ramp
        rw = line.split('\t')[2]
        self.precondition_before(rw)
        if not self.held.open():
            raise Exit(EXIT_USAGE)
        try:
            free = run_dir_free(s.run)
            d = '%s/%s/.tmp-%s.%d' % (s.run, sub, runkey, os.getpid())
            self.tmp = d
            if free is not None and free < RUN_SPACE_MIN:
                self.full_exit(free)
            _remove(d)
            os.makedirs(d)
            js = JobSettings(s.size_bytes, rt, rp, s.io_size, s.steady == 'on', SS_CRIT, SS_DUR, BWLOG_MSEC,
                             s.targets, s.kinds)
            job = d + '/job.fio'
            try:
                text = job_text(line, js)
            except JobError as e:
                with open(job, 'w', encoding='utf-8', errors='surrogateescape') as f:
                    f.write(e.text)
                self.warn(str(e))
                raise Exit(EXIT_USAGE) from None
            except (CheckpointError, IndexError, ValueError) as e:
                if line.split('\t', 2)[1:2] != ['checkpoint']:
                    raise
                open(job, 'w').close()
                _write(2, 'tswap: checkpoint-job: %s\n' % e)
                self.error_exit()
            with open(job, 'w', encoding='utf-8', errors='surrogateescape') as f:
                f.write(text)
            env = fio_env(s.engine, s.size, self.targets_now(), 2, s.run, self.held.fds)
            write_exec(d + '/run.sh', run_sh(s.grid, self.target, env))
            if rw == 'read':
                before_read()
            total = int(rp or 0) + int(rt) if rt else None
            rc, ns = self.fio(d, 2, label, total)
            wall = wall_text(ns)
            final = '%s/%s/%s' % (s.run, sub, runkey)
            try:
                self.hooks.result(d, line, runkey, str(rep), str(rc), wall, list(s.targets))
                _remove(final)
                os.rename(d, final)
            except OSError as e:
                _remove(d)
                _write(2, 'tswap: point: %s\n' % e)
                self.error_exit()
            self.tmp = ''
            return wall
        finally:
            self.held.close()

    def error_exit(self) -> None:
        """A stage's exit 3: a full run directory says so (space.sh)."""
        free = run_dir_free(self.s.run)
        if free is not None and free < RUN_SPACE_MIN:
            self.full_exit(free)
        raise Exit(EXIT_ERROR)

    def ceiling_prep(self, line: str, rep: int, label: str, runtime: Optional[str] = None,
                     ramp: Optional[str] = None) -> None:
        """exec-local.sh ceiling_prep."""
        f = line.split('\t')
        n = f[11] if len(f) > 11 else ''
        d = self.s.run + '/ceiling-prep'
        if not (f[1] == 'ceiling' and f[2] == 'write' and (n or '1') == '1' and rep == 1):
            return
        if not (self.kind == 'file' and os.path.isfile(self.s.run + '/prepare/done') and not os.path.exists(d)):
            return
        if self.precondition_wanted():
            return
        wall = self.run_point(line, f[0] + '.prep', 0, 'ceiling-prep', label + ' (preparation)', runtime, ramp)
        lines = _lines('%s/%s.prep/progress.txt' % (d, f[0]))
        res = lines[0].split('\t')[0] if lines else 'no result'
        self.note('the first write into the new target file ran before the write ceiling as preparation,'
                  ' not a repeat: %s in %s s (ceiling-prep/)' % (res, wall))

    # the executor interface (tswap.executor.loop)
    def head(self) -> str:
        """exec-local.sh exec_head."""
        s = self.s
        return '%s: grid %s on %s (%s, %s); run directory %s' % (PROG, s.grid, s.targets[0], self.kind_text, s.size,
                                                                 s.run)

    def begin(self, total: int) -> None:
        """Points left unfinished by an earlier run are removed."""
        for t in glob.glob(glob.escape(self.s.run) + '/points/.tmp-*'):
            _remove(t)

    def todo(self, runkey: str) -> tuple[str, ...]:
        return () if runkey in self.finished else ('',)

    def done_text(self, runkey: str) -> str:
        return 'done earlier: %s GB/s' % self.finished[runkey]

    def run(self, line: str, runkey: str, rep: int, label: str, places: Sequence[object]) -> str:
        """A write ceiling's preparation first (ceiling_prep), then the run."""
        self.ceiling_prep(line, rep, label)
        return self.run_point(line, runkey, rep, 'points', label)

    def result_text(self, runkey: str, label: str, eta: str, places: Sequence[object]) -> str:
        got = _lines('%s/points/%s/progress.txt' % (self.s.run, runkey))
        res = got[0].replace('\t', '  ', 1) if got else ''
        return '%s  %s  (eta %s)\n' % (label, res, eta)

    def stop(self, sig: int) -> None:
        """fio was stopped as the signal came (fioproc); its point's
        directory goes."""
        if self.tmp:
            _remove(self.tmp)
            self.tmp = ''

    def finish_args(self) -> list[str]:
        """The report's lines are the front end's (tswap.cli.run_local finish)."""
        return []

    def interrupted(self, sig: int, budget: bool) -> int:
        """stop, then the clean-up after a signal (interrupted): the status."""
        if self.tmp:
            _remove(self.tmp)
            self.tmp = ''
        return interrupted(self.s.run, sig, budget, self.warn)


def interrupted(run: str, sig: int, budget: bool, warn: Callable[[str], None]) -> int:
    """pipeline.sh on_signal after what ran was stopped (the executor's
    stop): this run's unfinished points and half-written outputs removed,
    the message; the status (130, 143, 129)."""
    ignore_signals()
    r = glob.escape(run)
    pid = os.getpid()
    for p in glob.glob('%s/points/.tmp-*.%d' % (r, pid)) + glob.glob('%s/rounds/.tmp-*.%d' % (r, pid)):
        _remove(p)
    for pat in ('/*.tmp', '/plots/*.tmp', '/hosts/*/*.tmp', '/rounds/*/*.tmp', '/points/*/*.tmp'):
        for p in glob.glob(r + pat):
            _remove(p)
    if budget:
        warn('interrupted: a --budget run cannot be resumed (its rounds are planned for one run\'s'
             ' wall time); start a new run')
    else:
        warn('interrupted: finished points are kept; finish with: %s --resume %s' % (PROG, q(run)))
    return SIGNALS[signal.Signals(sig)]
