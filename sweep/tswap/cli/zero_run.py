# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero's replay: the --out claim, the per-run folders under the
targets (created fresh, never reused, removed at the end unless --keep),
the room check, fio (zero_fio: stopped on SIGINT/TERM/HUP within its
grace period), the device ceiling and the per-step report.

Writes in --out: layout.fio.json, ceiling.fio, ceiling.fio.json,
ceiling.json, LABEL-stepN.fio.json, LABEL-stepN.json, LABEL-steps.json
(LABEL base, or aio for --aio); under each target: tswap-zero-RUNID/ (the
swap files only).
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import sys
from typing import Any, Optional

from .. import jqjson
from ..jqjson import jround
from ..jqjson import number as num
from ..plan.zero_fiojob import folders, job_text, too_many_jobs, totals
from ..results.zero_figures import against_ceiling, ceiling_figures, step_figures
from .zero_common import DIO_UNIT, EXIT_ERROR, Exit, ZeroArgs, dirname, make_plan, say, usage_error, warn
from .zero_fio import Fio, Interrupted

# The ceiling: seconds per direction (fio runtime); bs; the least and the
# most iodepth (as tswap-sweep's ceiling points); the least region per rank.
CEILING_SECONDS = 2
CEILING_BS, CEILING_BS_BYTES = '1m', 1024 * 1024
CEILING_QD_MIN, CEILING_QD_MAX = 64, 4096
CEILING_MIN_BYTES = 256 * 1024 * 1024
_NOT_DIR = 'not a directory (tswap-zero lays out swap files in a folder, like nvme_path)'


class OutClaim:
    """--out: a new folder, or an existing empty one, made this run's
    output folder atomically (DIR/.tswap-zero-out created exclusively, so
    a second run on it is refused); given back as it was (the claim
    removed, the folder too if this run made it) when the run ends before
    plan.json exists. Nothing of the user's is written to or replaced."""

    def __init__(self, d: str):
        self.d, self.made = d, False

    def __enter__(self) -> 'OutClaim':
        d = self.d
        if os.path.islink(d.rstrip('/') or d):
            raise usage_error('--out %s: a symbolic link (never followed: give the folder it names, new or empty)'
                              % d)
        if os.path.exists(d) and not os.path.isdir(d):
            raise usage_error('--out %s: not a directory (a new or empty folder for plan.json, the fio jobs and '
                              'results)' % d)
        self.made = not os.path.isdir(d)
        try:
            os.makedirs(d, exist_ok=True)
        except OSError:
            raise usage_error('--out %s: cannot create it' % d) from None
        try:
            nonempty = any(True for _ in os.scandir(d))
        except OSError:
            nonempty = False  # an unreadable folder counts as empty here, as it always has
        if nonempty:
            raise usage_error('--out %s: not empty (tswap-zero writes only into a new or empty folder)' % d)
        try:
            os.close(os.open(d + '/.tswap-zero-out', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except OSError:
            raise usage_error('--out %s: another tswap-zero run is using it' % d) from None
        return self

    def __exit__(self, *exc: Any) -> None:
        if os.path.exists(self.d + '/plan.json'):
            return
        for f in ('/.tswap-zero-out', '/plan.json.tmp'):
            try:
                os.unlink(self.d + f)
            except OSError:
                pass
        if self.made:
            try:
                os.rmdir(self.d)
            except OSError:
                pass


def check_target(t: str) -> None:
    """A missing target needs a writable parent, an existing one must be
    a writable directory (usage error otherwise; nothing created)."""
    if not os.path.lexists(t):
        p = dirname(t)
        if not os.path.isdir(p):
            raise usage_error('--target %s: its parent directory %s does not exist (tswap-zero creates only the '
                              'target folder)' % (t, p))
        if not os.access(p, os.W_OK):
            raise usage_error('--target %s: cannot create the directory (read-only or no permission)' % t)
        return
    if not os.path.isdir(t):
        raise usage_error('--target %s: %s' % (t, _NOT_DIR))
    if not os.access(t, os.W_OK):
        raise usage_error('--target %s: cannot write into it (read-only or no permission)' % t)


def target_dir(t: str) -> None:
    """The target folder, created when missing (not its parents)."""
    check_target(t)
    if not os.path.lexists(t):
        try:
            os.mkdir(t)
        except OSError:
            raise usage_error('--target %s: cannot create the directory (read-only or no permission)' % t) from None
    if not os.path.isdir(t):
        raise usage_error('--target %s: %s' % (t, _NOT_DIR))
    if not os.access(t, os.W_OK):
        raise usage_error('--target %s: cannot write into it (read-only or no permission)' % t)


def check_room(need: list[float], tmap: list[str]) -> None:
    """Refuse when a file system's free space is below the swap files of
    the ranks whose targets it holds (+1%; targets on one file system are
    summed by device number)."""
    per: dict[str, float] = {}
    for t, b in sorted(zip(tmap, need), key=lambda x: x[0]):
        per[t] = per.get(t, 0) + b
    fs_need: dict[int, int] = {}
    fs_name: dict[int, list[str]] = {}
    for t, b in per.items():
        try:
            dev = os.stat(t).st_dev
        except OSError:
            raise usage_error('--target %s: cannot stat it' % t) from None
        fs_need[dev] = fs_need.get(dev, 0) + int(b)
        fs_name.setdefault(dev, []).append(t)
    for dev, n in fs_need.items():
        t = ','.join(fs_name[dev])
        try:
            st = os.statvfs(fs_name[dev][0])
            avail = st.f_bavail * st.f_frsize
        except OSError:
            raise usage_error('--target %s: cannot read its free space (df)' % t) from None
        if n + n // 100 > avail:
            raise usage_error('--target %s: needs %d bytes for its ranks\' swap files, %d free on its file system'
                              % (t, n, avail))


def ceiling_size(ranks: int, plans: list[dict[str, Any]]) -> tuple[int, int]:
    """The ceiling's iodepth and per-rank bytes for the plans' aio settings:
    as many 1 MiB blocks as one handle keeps in flight,
    intra_op_parallelism x queue_depth x block_size bytes (DeepSpeed's aio
    handle: each of its threads queues queue_depth blocks;
    csrc/aio/py_lib/deepspeed_aio_thread.cpp), at least 64, at most 4096
    and fs.aio-max-nr over the ranks' jobs (a note on stderr when capped)."""
    m = max(p['config']['intra_op_parallelism'] * p['config']['queue_depth'] * p['config']['block_size']
            for p in plans)
    depth = max(CEILING_QD_MIN, int(min(math.ceil(m / CEILING_BS_BYTES), 1048576)))
    cap, aiomax = CEILING_QD_MAX, '?'
    try:
        with open('/proc/sys/fs/aio-max-nr', encoding='utf-8') as f:
            aiomax = f.read().strip()
        if aiomax.isdigit() and int(aiomax) // ranks < cap:
            cap = int(aiomax) // ranks
    except OSError:
        pass
    if depth > cap:
        warn('device ceiling: the aio settings keep %d x %s in flight per handle; the ceiling runs at iodepth %d '
             '(the most %d job(s) get from fs.aio-max-nr=%s and %d), so it may read low'
             % (depth, CEILING_BS, cap, ranks, aiomax, CEILING_QD_MAX))
        depth = cap
    return depth, max(2 * depth * CEILING_BS_BYTES, CEILING_MIN_BYTES)


def ceiling_job(dirs: list[str], qd: int, size: int) -> str:
    """The ceiling job file: a write group (it lays out the files), then a
    read group, one job per rank, rank R on dirs[R]."""
    out = ["; tswap-zero: the device ceiling: fio's libaio, one job per rank, %s sequential, iodepth %d"
           % (CEILING_BS, qd), '[global]', 'ioengine=libaio', 'direct=1', 'thread', 'bs=' + CEILING_BS,
           'iodepth=%d' % qd, 'size=%d' % size, 'fallocate=none', 'time_based', 'runtime=%d' % CEILING_SECONDS, '']
    for rw in ('write', 'read'):
        for r, d in enumerate(dirs):
            out += ['[ceiling.%s.r%d]' % (rw, r), 'filename=%s/ceiling.r%d.swp' % (d, r), 'rw=' + rw]
            out += ['stonewall'] if r == 0 else []
            out.append('')
    return '\n'.join(out) + '\n'


def _r(x: float, m: int) -> str:
    return num(jround(x * m) / m)


def _write_json(path: str, doc: Any) -> None:
    with open(path, 'w', encoding='utf-8') as f:
        f.write(jqjson.dumps(doc) + '\n')


def run_steps(fio: Fio, label: str, job: str, steps: int, out: str, tot: dict[str, Any],
              ceiling: Optional[dict[str, Any]]) -> list[dict[str, Any]]:
    """The step steps times; every step must move exactly the planned
    replay bytes; a line per step (and one against the ceiling);
    out/LABEL-steps.json."""
    all_steps = []
    for i in range(1, steps + 1):
        fj = '%s/%s-step%d.fio.json' % (out, label, i)
        fio.run(job, fj)
        with open(fj, encoding='utf-8') as f:
            f_ = against_ceiling(step_figures(jqjson.loads(f.read())), ceiling)
        if (f_['read'], f_['write']) != (tot['read'], tot['write']):
            raise Exit(EXIT_ERROR, 'step %d (%s) moved %s B read, %s B written, the plan says %s and %s'
                       % (i, label, num(f_['read']), num(f_['write']), num(tot['read']), num(tot['write'])))
        _write_json('%s/%s-step%d.json' % (out, label, i), f_)
        say('%s step %d: %s; total %s s, %s GB/s' % (
            label, i, ', '.join('%s %s s' % (p['phase'], _r(p['seconds'], 1000)) for p in f_['phases']),
            _r(f_['seconds'], 1000), _r(f_['gbs'], 100)))
        if ceiling is not None:
            say('%s step %d against the device ceiling: %s; step %s of %s GB/s (%s%%)' % (
                label, i, ', '.join('%s %s of %s GB/s (%s%%)' % (p['phase'], _r(p['gbs'], 100),
                                                               _r(p['ceiling_gbs'], 100), num(jround(p['pct_of_ceiling'])))
                                    for p in f_['phases']),
                _r(f_['gbs'], 100), _r(f_['ceiling_gbs'], 100), num(jround(f_['pct_of_ceiling']))))
        sys.stdout.flush()
        all_steps.append(f_)
    _write_json('%s/%s-steps.json' % (out, label), all_steps)
    return all_steps


def merge_aio(cfg: Any, aio_doc: Any) -> Any:
    """The ds_config with --aio's "aio" block merged in (jq's *)."""
    return _merge(cfg, {'aio': aio_doc['aio']})


def _merge(a: Any, b: Any) -> Any:
    """jq's a * b: objects merged recursively, b's values winning."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return b
    m = dict(a)
    for k, v in b.items():
        m[k] = _merge(m[k], v) if k in m and isinstance(m[k], dict) and isinstance(v, dict) else v
    return m


class Replay:
    """The run folders and the fio of one replay; clean() removes the
    folders it created (unless --keep)."""

    def __init__(self, keep: bool):
        self.fio, self.keep, self.created = Fio(), keep, []

    def clean(self) -> None:
        if self.keep:
            return
        for d in self.created:
            if os.path.isfile(d + '/.tswap-zero-run'):
                shutil.rmtree(d, ignore_errors=True)

    def make_dirs(self, runid: str, targets: list[str]) -> None:
        """TARGET/tswap-zero-RUNID in each target; refused when it exists:
        nothing of the user's is ever written to."""
        for t in targets:
            if os.path.exists(t) and not os.path.isdir(t):
                raise usage_error('--target %s: %s' % (t, _NOT_DIR))
            target_dir(t)
            d = '%s/tswap-zero-%s' % (t, runid)
            if os.path.lexists(d):
                raise usage_error('--target %s: %s already exists and was not created by this run: refusing to '
                                  'write into it' % (t, d))
            try:
                os.mkdir(d)
            except OSError:
                raise usage_error('--target %s: cannot create %s (read-only or no permission)' % (t, d)) from None
            open(d + '/.tswap-zero-run', 'w').close()
            self.created.append(d)


def _on_signal(name: str, code: int) -> Any:
    def h(signum: int, frame: Any) -> None:
        raise Interrupted(name, code)
    return h


def run_replay(home: str, a: ZeroArgs, plan: dict[str, Any], cfg: Any, tmap: list[str], dirs: list[str],
               engine: str) -> int:
    """Lay out the swap files, run the ceiling and the steps (and the
    --aio ones) of plan (cfg's: the ds_config) with engine; tmap: each
    rank's target, dirs: its run folder there; remove the run folders at
    the end unless --keep."""
    out, aio, scale, steps = a.out, a.aio, a.scale, a.steps
    tot = totals(plan, DIO_UNIT, scale)
    need = [tot['per_rank_layout'] for _ in tmap]
    plans, fios = [plan], [out + '/step.fio', out + '/layout.fio']
    aplan, atot = None, None
    aiod = [d + '/aio' for d in dirs]
    based = [d + '/base' for d in dirs]
    if aio:
        acfg = merge_aio(cfg, a.aio_doc)
        _write_json(out + '/ds_config.aio.json', acfg)
        aplan = make_plan('--aio ' + aio, acfg, a, out + '/plan.aio.json')
        with open(out + '/step.aio.fio', 'w', encoding='utf-8') as f:
            f.write(job_text(aplan, 'step', aiod, DIO_UNIT, scale, engine, '; tswap-zero: the step with --aio ' + aio))
        with open(out + '/layout.aio.fio', 'w', encoding='utf-8') as f:
            f.write(job_text(aplan, 'layout', aiod, DIO_UNIT, scale, engine,
                             "; tswap-zero: the swap files' initial write (--aio)"))
        atot = totals(aplan, DIO_UNIT, scale)
        need = [n + atot['per_rank_layout'] for n in need]
        plans.append(aplan)
        fios += [out + '/step.aio.fio', out + '/layout.aio.fio']
    for p, mode, f in zip((plan, plan, aplan, aplan), ('step', 'layout') * 2, fios):
        m = too_many_jobs(p, mode)
        if m:
            raise usage_error('%s: needs %s' % (f.rsplit('/', 1)[-1], m))
    qd, cbytes = CEILING_QD_MIN, CEILING_MIN_BYTES
    if a.ceiling:
        qd, cbytes = ceiling_size(a.ranks, plans)
        need = [n + cbytes for n in need]
    uniq = sorted(set(tmap))
    for t in uniq:
        target_dir(t)
    check_room(need, tmap)
    rp = Replay(a.keep)
    for name, sig, code in (('INT', signal.SIGINT, 130), ('TERM', signal.SIGTERM, 143), ('HUP', signal.SIGHUP, 129)):
        signal.signal(sig, _on_signal(name, code))
    # stdout closed (`| head`): a write fails with EPIPE, and the run ends
    # as on a signal, its folders removed, exit 141 (128 + SIGPIPE)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    try:
        rp.make_dirs(a.runid, uniq)
        for d in folders(plan, based) + (folders(aplan, aiod) if aplan else []):
            os.makedirs(d, exist_ok=True)
        _layout(rp.fio, out + '/layout.fio', tot)
        c = None
        if a.ceiling:
            c = _ceiling(rp.fio, out, dirs, qd, cbytes)
        base = run_steps(rp.fio, 'base', out + '/step.fio', steps, out, tot, c)
        if aplan is not None and atot is not None:
            _layout(rp.fio, out + '/layout.aio.fio', atot)
            tuned = run_steps(rp.fio, 'aio', out + '/step.aio.fio', steps, out, atot, c)
            b = sum(s['seconds'] for s in base) / len(base)
            t = sum(s['seconds'] for s in tuned) / len(tuned)
            say('with --aio: %s s per step against %s s: %s s saved per step' % (_r(t, 1000), _r(b, 1000),
                                                                                 _r(b - t, 1000)))
        say('results: %s/base-steps.json' % out)
        return 0
    except (Interrupted, BrokenPipeError) as x:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # a second signal does not cut the clean-up short
        e = x if isinstance(x, Interrupted) else Interrupted('PIPE', 141)
        if e.name == 'PIPE':
            # nobody reads stdout any more: what is left of it goes nowhere
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, 1)
            os.close(fd)
        rp.clean()
        try:
            warn('interrupted (SIG%s%s): fio stopped, %s; partial results in --out'
                 % (e.name, ': standard output closed' if e.name == 'PIPE' else '',
                    'swap files kept' if a.keep else 'swap files removed'))
        except OSError:
            pass
        return e.code
    finally:
        rp.clean()


def _layout(fio: Fio, job: str, tot: dict[str, Any]) -> None:
    """Write the files that exist before the step, unless there are none
    (--step init starts from an empty folder, as deepspeed.initialize)."""
    if tot['layout_jobs'] == 0:
        return
    say('')
    say('laying out %s bytes of swap files ...' % num(tot['layout']))
    sys.stdout.flush()
    fio.run(job, job + '.json')


def _ceiling(fio: Fio, out: str, dirs: list[str], qd: int, size: int) -> dict[str, Any]:
    """Run the ceiling, write out/ceiling.json, print one line; a ceiling
    of 0 GB/s in a direction is a run error."""
    with open(out + '/ceiling.fio', 'w', encoding='utf-8') as f:
        f.write(ceiling_job(dirs, qd, size))
    fio.run(out + '/ceiling.fio', out + '/ceiling.fio.json')
    with open(out + '/ceiling.fio.json', encoding='utf-8') as f:
        c = ceiling_figures(jqjson.loads(f.read()), qd, CEILING_BS, CEILING_SECONDS)
    if not (c['read_gbs'] > 0 and c['write_gbs'] > 0):
        raise Exit(EXIT_ERROR, 'the device ceiling moved no bytes in a direction (see %s/ceiling.fio.json)' % out)
    _write_json(out + '/ceiling.json', c)
    say('device ceiling (fio libaio, %d jobs, %s sequential, iodepth %d, %d s each): read %s GB/s, write %s GB/s'
        % (c['jobs_per_direction'], c['bs'], qd, CEILING_SECONDS, _r(c['read_gbs'], 100), _r(c['write_gbs'], 100)))
    sys.stdout.flush()
    return c
