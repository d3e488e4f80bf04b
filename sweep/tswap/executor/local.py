# SPDX-License-Identifier: GPL-2.0-only
"""The run of a sweep on this host, in the front end's own process
(issue 36): the targets prepared (a target file written in full once,
the rank files), the preconditioning, the points' loop with its
progress lines, each point's fio (tswap.executor.fioproc) and the
signals that stop it. The bash it replaces: pipeline.sh run_points,
point_label, on_signal; exec-local.sh run_point, run_fio, ceiling_prep;
ranks.sh prepare_targets, target_recheck; target.sh prepare_target;
precondition.sh. Every progress line, message, exit status and file is
the same (tests/sweep*.bats).

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
import shutil
import signal
import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping, Optional

from .. import jqjson
from ..plan.jobs import JobSettings
from ..plan.values import EXIT_ERROR, EXIT_USAGE, Refusal, bytes_to_size
from . import fioproc
from .point import FIO_ARGV, Targets, fio_env
from .targets import Held, allocate, identity, scratch_create

PROG = 'tswap-sweep'
# state.sh's constants
SS_CRIT, SS_DUR = 'bw_slope:2%', 5
BWLOG_MSEC, DROP_PCT, BWLOG_MIN_SAMPLES = '250', '20', '8'
PRECOND_BS, PRECOND_BS_BYTES, PRECOND_QD, PRECOND_LOOPS = '1m', 1 << 20, 32, 2
STATUS_EVERY = 10
RUN_SPACE_MIN = 1 << 20
SIGNALS = MappingProxyType({signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129})
PREPARE_JOB = ('[global]\nioengine=libaio\nfilename=${TSWAP_TARGET}\nsize=${TSWAP_SIZE}\ndirect=1\nbs=1m\n'
               'iodepth=16\n\n[prepare]\nrw=write\nend_fsync=1\n')


class Interrupted(BaseException):
    """A stop signal: its number; the run cleans up and exits 128 + it."""

    def __init__(self, sig: int) -> None:
        super().__init__(sig)
        self.sig = sig


class Exit(BaseException):
    """The run stops with this status; its message (if any) was said."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _on_signal(sig: int, _frame: object) -> None:
    ignore_signals()
    raise Interrupted(sig)


def ignore_signals() -> None:
    """trap '' INT TERM HUP."""
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)


def handle_signals() -> None:
    """INT, TERM and HUP raise Interrupted from here on (run_all's traps)."""
    for s in SIGNALS:
        signal.signal(s, _on_signal)


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


def q(s: str) -> str:
    """bash's printf %q."""
    from .point import bash_q
    return bash_q(s)


def fmt_secs(s: int) -> str:
    """util.sh fmt_secs: M:SS or H:MM:SS."""
    if s >= 3600:
        return '%d:%02d:%02d' % (s // 3600, s % 3600 // 60, s % 60)
    return '%d:%02d' % (s // 60, s % 60)


def point_label(line: str) -> str:
    """pipeline.sh point_label: a point's progress label."""
    f = line.split('\t')
    f += [''] * (12 - len(f))
    _, kind, rw, be, t, b, qd, s, w, p, d, n = f[:12]
    tn = bytes_to_size(int(t))
    if kind == 'ceiling':
        label = '%-5s ceiling (fio libaio bs=%s iodepth=%s%s)' % (
            rw, tn, qd, ' over %s jobs' % p if int(p or 0) > 1 else '')
    elif kind == 'checkpoint':
        label = 'checkpoint io_buffer=%s %s b=%s q=%s %s/%s p=%s' % (
            tn, 'double' if int(d or 0) == 2 else 'single', bytes_to_size(int(b)), qd, s, w, p)
    else:
        label = '%-5s %-8s t=%s b=%s q=%s %s/%s p=%s d=%s' % (rw, be, tn, bytes_to_size(int(b)), qd, s, w, p, d)
    return label if (n or '1') == '1' else '%s n=%s' % (label, n)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.unlink(path)


def run_dir_free(run: str) -> Optional[int]:
    """space.sh run_dir_free: bytes available on run's filesystem."""
    try:
        st = os.statvfs(run)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def wall_text(ns: int) -> str:
    ms = (ns // 1000 + 500) // 1000
    return '%d.%03d' % (ms // 1000, ms % 1000)


class Local:
    """One run on this host: its settings, the target of now and its
    owner, the held targets, the point being written (tmp) and the
    progress stream (fd)."""

    def __init__(self, s: Settings, hooks: Hooks, progress: int, target_lock: Callable[[str], None]) -> None:
        self.s, self.hooks, self.progress = s, hooks, progress
        self.target_lock = target_lock
        self.target = s.targets[0]
        self.kind = s.kinds[0]
        self.owned = ''
        self.held = Held(self.warn)
        self.tmp = ''
        self.drop_noted = False
        self.warned: set[str] = set()

    # messages (util.sh say, warn, note)
    def say(self, msg: str) -> None:
        _write(self.progress, msg + '\n')

    def warn(self, msg: str) -> None:
        _write(2, '%s: %s\n' % (PROG, msg))

    def note(self, msg: str) -> None:
        with open(self.s.run + '/notes.txt', 'a', encoding='utf-8', errors='surrogateescape') as f:
            f.write(msg + '\n')

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

    # targets
    def prepare_target(self, d: str) -> None:
        """target.sh prepare_target."""
        s = self.s
        if self.kind != 'file':
            return
        have = alloc = 0
        need = s.size_bytes
        ident = ''
        if self.owned == 'new':
            scratch_create(self.target, s.run, self.warn)
            ident = 'x'
            self.owned = 'ours'
        if not ident and os.path.isfile(self.target):
            try:
                st = os.stat(self.target)
            except OSError:
                self.die(EXIT_ERROR, 'cannot stat target %s for its lock' % self.target)
            have, alloc = st.st_size, st.st_blocks * 512
        self.target_lock(self.target)
        if self.owned == 'theirs' and not s.destructive:
            if have < need:
                self.die(EXIT_USAGE, 'refusing target %s: an existing file the sweep did not create, shorter'
                         ' than --size %s' % (self.target, s.size))
        elif os.path.isdir(d) and not os.path.isfile(d + '/done'):
            have = 0
        if have >= need:
            if alloc < need:
                self.note('the target file has holes (%d of %d bytes allocated): reads of a hole never'
                          ' reach the device; write the file first' % (alloc, need))
                self.say('note: %s has holes: reads of holes never reach the device' % self.target)
            return
        self.say('preparing %s: writing %s with fio (O_DIRECT) so reads hit the device' % (self.target, s.size))
        if os.path.lexists(d):
            _remove(d)
        os.makedirs(d)
        if not allocate(self.target, need):
            self.die(EXIT_ERROR, 'cannot create %s' % self.target)
        with open(d + '/job.fio', 'w') as f:
            f.write(PREPARE_JOB)
        rc = self.run_fio(d, 1)
        if rc != 0:
            tail = _lines(d + '/fio.stderr')[-3:]
            self.die(EXIT_ERROR, 'could not write %s with O_DIRECT (fio exit %d): %s'
                     % (self.target, rc, ' '.join(tail)))
        open(d + '/done', 'w').close()

    def recheck(self) -> None:
        """ranks.sh target_recheck."""
        self.owned = self.s.owns.get(self.target, '')
        if identity(self.target) == self.s.seen.get(self.target, ''):
            return
        rc, owned = self.hooks.recheck(self.target)
        if rc:
            raise Exit(rc)
        self.owned = owned

    def rank_file(self, r: int, h: str) -> str:
        return self.targets_now().rank_file(r, h)

    def prepare_targets(self) -> None:
        """ranks.sh prepare_targets."""
        s = self.s
        if s.single:
            if self.kind == 'file':
                self.recheck()
            self.prepare_target(s.run + '/prepare')
        for r, h in s.slots:
            if s.kinds[r % len(s.targets)] != 'file':
                continue
            self.target = self.rank_file(r, h)
            self.kind = 'file'
            self.recheck()
            self.prepare_target('%s/prepare.rank%d%s' % (s.run, r, '.write' if h == 'write' else ''))
        self.target, self.kind = s.targets[0], s.kinds[0]
        self.held.keep(self.precondition_targets())

    # preconditioning
    def precondition_wanted(self) -> bool:
        p = self.s.precondition
        return p == 'on' or (p != 'off' and 'block' in self.s.kinds)

    def precondition_targets(self) -> list[str]:
        out = [self.target] if self.s.single else []
        out += [self.rank_file(r, h) for r, h in self.s.slots]
        return list(dict.fromkeys(out))

    def precondition_before(self, rw: str) -> None:
        """precondition.sh precondition_before."""
        s = self.s
        d = s.run + '/precondition'
        if rw not in ('write', 'readwrite') or os.path.isfile(d + '/done') or not self.precondition_wanted():
            return
        paths = self.precondition_targets()
        size = s.size_bytes // PRECOND_BS_BYTES * PRECOND_BS_BYTES
        if size <= 0:
            self.die(EXIT_USAGE, '--precondition: --size %s is smaller than one %s block'
                     % (bytes_to_size(s.size_bytes), PRECOND_BS))
        sz = bytes_to_size(size)
        _remove(d)
        _remove(s.run + '/precondition.json')
        os.makedirs(d)
        main = self.target
        sums = []
        for n, t in enumerate(paths, 1):
            dn = '%s/%d' % (d, n)
            os.makedirs(dn)
            self.say('preconditioning %s: %d sequential passes of %s (fio libaio, bs=%s, iodepth=%d, O_DIRECT)'
                     % (t, PRECOND_LOOPS, sz, PRECOND_BS, PRECOND_QD))
            with open(dn + '/job.fio', 'w') as f:
                f.write('; tswap-sweep preconditioning: %d sequential passes over the target (SNIA SSS PTS)\n'
                        '[global]\nioengine=libaio\nfilename=${TSWAP_TARGET}\nsize=%d\ndirect=1\nbs=%s\n'
                        'iodepth=%d\nloops=%d\nend_fsync=1\n\n[precondition]\nrw=write\n'
                        % (PRECOND_LOOPS, size, PRECOND_BS, PRECOND_QD, PRECOND_LOOPS))
            self.target = t
            try:
                rc = self.run_fio(dn, 2)
            finally:
                self.target = main
            try:
                with open(dn + '/fio.stdout', encoding='utf-8') as f:
                    doc = jqjson.loads(f.read())
                nbytes = jqjson.add([j['write']['io_bytes'] for j in doc['jobs']])
                nbytes = 0 if nbytes is None else nbytes
            except (OSError, ValueError, KeyError, TypeError):
                doc, nbytes = None, 0
            want = size * PRECOND_LOOPS
            if rc != 0 or nbytes != want:
                err = [x for x in _lines(dn + '/fio.stderr') if x.strip()][-2:]
                self.die(EXIT_ERROR, 'preconditioning %s failed (fio exit %d, %s of %d bytes written): %s'
                         % (t, rc, jqjson.text(nbytes), want, ''.join(x + ' ' for x in err)))
            os.replace(dn + '/fio.stdout', dn + '/fio.json')
            secs = jqjson.jmax([j['job_runtime'] for j in doc['jobs']]) / 1000
            summ = {'path': t, 'bytes': nbytes, 'seconds': secs}
            summ['gbs'] = nbytes / secs / 1e9
            with open(dn + '/summary.json', 'w', encoding='utf-8', errors='surrogateescape') as f:
                f.write(jqjson.dumps(summ, compact=True) + '\n')
            sums.append(summ)
            self.say('preconditioned %s: %s bytes in %s s, %s GB/s' % (
                t, jqjson.text(nbytes), jqjson.text(secs), jqjson.text(jqjson.jround(summ['gbs'] * 1000) / 1000)))
        tb = jqjson.add([x['bytes'] for x in sums])
        ts = jqjson.add([x['seconds'] for x in sums])
        doc = {'passes': PRECOND_LOOPS, 'bs': PRECOND_BS, 'iodepth': PRECOND_QD, 'size_bytes': size,
               'targets': sums, 'bytes': tb, 'seconds': ts, 'gbs': tb / ts / 1e9}
        with open(s.run + '/precondition.json.tmp', 'w', encoding='utf-8', errors='surrogateescape') as f:
            f.write(jqjson.dumps(doc) + '\n')
        os.replace(s.run + '/precondition.json.tmp', s.run + '/precondition.json')
        open(d + '/done', 'w').close()

    # a point
    def run_point(self, line: str, runkey: str, rep: int, sub: str, label: str,
                  runtime: Optional[str] = None, ramp: Optional[str] = None) -> str:
        """exec-local.sh run_point and the point stage (now in-process):
        one run of line into RUN/sub/runkey; fio's wall seconds (3
        decimals). runtime, ramp: a --budget round's own."""
        from .point import drop_caches, job_text, run_sh, write_exec
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
                why = drop_caches(s.run)
                if why and not self.drop_noted:
                    self.drop_noted = True
                    _write(self.progress, 'note: %s\n' % why)
                    self.note(why)
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

    def run_points(self, lines: list[str], finished: Mapping[str, str]) -> None:
        """pipeline.sh run_points: every point REPEAT times in whole
        passes; runs done earlier skipped; progress on the stream."""
        repeat = self.s.repeat
        total = len(lines) * repeat
        os.makedirs(self.s.run + '/points', exist_ok=True)
        for t in glob.glob(glob.escape(self.s.run) + '/points/.tmp-*'):
            _remove(t)
        idx = spent = ran = 0
        for rep in range(1, repeat + 1):
            for line in lines:
                idx += 1
                runkey = '%s.r%d' % (line.split('\t', 1)[0], rep)
                label = point_label(line)
                if repeat != 1:
                    label += ' r%d' % rep
                pre = '[%*d/%d] %s' % (len(str(total)), idx, total, label)
                if runkey in finished:
                    _write(self.progress, '%s  done earlier: %s GB/s\n' % (pre, finished[runkey]))
                    continue
                self.ceiling_prep(line, rep, pre)
                wall = self.run_point(line, runkey, rep, 'points', pre)
                ran += 1
                spent += int(wall.replace('.', ''))
                eta = fmt_secs((total - idx) * ((spent + 500 * ran) // (1000 * ran)))
                got = _lines('%s/points/%s/progress.txt' % (self.s.run, runkey))
                res = got[0].replace('\t', '  ', 1) if got else ''
                _write(self.progress, '%s  %s  (eta %s)\n' % (pre, res, eta))

    def interrupted(self, sig: int, budget: bool) -> int:
        """pipeline.sh on_signal after fio stopped: this run's unfinished
        points and half-written outputs removed, the message; the status."""
        ignore_signals()
        if self.tmp:
            _remove(self.tmp)
            self.tmp = ''
        r = glob.escape(self.s.run)
        pid = os.getpid()
        for p in glob.glob('%s/points/.tmp-*.%d' % (r, pid)) + glob.glob('%s/rounds/.tmp-*.%d' % (r, pid)):
            _remove(p)
        for pat in ('/*.tmp', '/plots/*.tmp', '/hosts/*/*.tmp', '/rounds/*/*.tmp', '/points/*/*.tmp'):
            for p in glob.glob(r + pat):
                _remove(p)
        if budget:
            self.warn('interrupted: a --budget run cannot be resumed (its rounds are planned for one run\'s'
                      ' wall time); start a new run')
        else:
            self.warn('interrupted: finished points are kept; finish with: %s --resume %s' % (PROG, q(self.s.run)))
        return SIGNALS[signal.Signals(sig)]


def status_text(label: str, el: int, total: Optional[int]) -> str:
    """status.sh: the status line of a running point."""
    if total is None:
        return '    %s: %d s, --io-size: no estimate\n' % (label, el)
    if el <= total:
        return '    %s: %d s of %d s, %d s left\n' % (label, el, total, total - el)
    return '    %s: %d s of %d s, winding down\n' % (label, el, total)


def _lines(path: str) -> list[str]:
    try:
        with open(path, encoding='utf-8', errors='surrogateescape') as f:
            return f.read().splitlines()
    except OSError:
        return []


def _write(fd: int, text: str) -> None:
    data = text.encode('utf-8', 'surrogateescape')
    try:
        while data:
            n = os.write(fd, data)
            data = data[n:]
    except OSError:
        pass
