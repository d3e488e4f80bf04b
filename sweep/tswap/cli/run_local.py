# SPDX-License-Identifier: GPL-2.0-only
"""A run on this host (not --hosts), after the front end's set-up
(tswap.cli.sweep_local), in the front end's own process: the dry run,
or the points (tswap.executor.local) under the signal handlers, then
the outputs (tswap.cli.finish, called here) and the exit status. The
bash it replaces: run.sh main, pipeline.sh run_all, dry_run,
finish_run; exec-local.sh exec_head, exec_dry_head, exec_finish_args;
steady.sh steady_line, bwlog.sh bwlog_line, precondition.sh
precondition_line."""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Union

from .. import jqjson
from ..executor import fioproc
from ..executor.local import (BWLOG_MSEC, DROP_PCT, PROG, SS_CRIT, SS_DUR, Exit, Hooks, Interrupted, Local,
                              Settings, _remove, _write, handle_signals, ignore_signals, interrupted, q, run_dir_free,
                              RUN_SPACE_MIN, BWLOG_MIN_SAMPLES, point_label)
from ..executor.loop import Executor, run_points
from ..executor.locks import Locks
from ..executor.point import fio_path
from ..plan import points
from ..plan.checkpoint import CheckpointError, job_file
from ..plan.jobs import JobError, JobSettings, point_job
from ..plan.values import EXIT_ERROR, EXIT_USAGE, Refusal, abspath
from . import StageError

if TYPE_CHECKING:
    # annotations only: a run on this host never imports the fleet's
    # executor (tswap.cli.run_fleet does)
    from ..executor.fleet import Fleet

Value = Union[str, tuple[str, ...], Mapping[str, str]]
# state.sh's limits of the pick (finish_run)
CV_FLAG = '0.05'
FINISH_LIMITS = ('--cvflag', CV_FLAG, '--cvrel', '2', '--cvmax', '0.20', '--cache', '1.10', '--costtol', '0.03')


def _s(v: Mapping[str, Value], k: str) -> str:
    x = v.get(k, '')
    return x if isinstance(x, str) else ''


def settings(v: Mapping[str, Value]) -> Settings:
    """The executor's settings from the front end's state."""
    plan = _s(v, 'PLAN_TEXT')
    facts = points.facts(plan)
    slots = tuple((int(float(r)), h) for r, h in (x.split('\t') for x in facts[2:]))
    targets = v.get('TARGETS')
    if not isinstance(targets, tuple) or not targets:
        targets = (_s(v, 'TARGET'),)
    kinds = v.get('TARGET_KINDS')
    assert isinstance(kinds, tuple)
    owns, seen = v.get('TARGET_OWNS', {}), v.get('TARGET_SEEN', {})
    assert not isinstance(owns, (str, tuple)) and not isinstance(seen, (str, tuple))
    return Settings(run=_s(v, 'RUN'), engine=_s(v, 'ENGINE'), targets=targets, kinds=kinds, owns=owns,
                    seen=seen, size=_s(v, 'SIZE'), size_bytes=int(_s(v, 'SIZE_BYTES')),
                    runtime=_s(v, 'RUNTIME'), ramp=_s(v, 'RAMP'), io_size=_s(v, 'IO_SIZE'),
                    steady=_s(v, 'STEADY'), repeat=int(_s(v, 'REPEAT') or 1), grid=_s(v, 'G_NAME'),
                    plan_text=plan, slots=slots, single=facts[1] == 'true', writes=facts[0] == '1',
                    destructive=_s(v, 'DESTRUCTIVE') == '1', force=_s(v, 'FORCE') == '1',
                    precondition=_s(v, 'PRECONDITION') or 'auto', quiet=_s(v, 'QUIET') == '1')


def _recheck(s: Settings):
    def recheck(path: str) -> tuple[int, str]:
        from . import targets_check as tc
        o = tc.Options(s.writes, s.destructive, s.force, s.size_bytes, s.size)
        rc, _, owned = tc._one(path, False, o, tc._Says(PROG), '', {}, {})
        sys.stderr.flush()
        return rc, owned
    return recheck


def _result(d: str, line: str, runkey: str, rep: str, rc: str, wall: str, targets: list) -> None:
    from .result import write_result
    try:
        write_result(d, line, runkey, rep, rc, wall, targets,
                     *(jqjson.loads(x) for x in (BWLOG_MSEC, BWLOG_MIN_SAMPLES, DROP_PCT)))
    except StageError as e:
        raise OSError(str(e)) from None


def rounds_args(v: Mapping[str, Value], run: str) -> argparse.Namespace:
    """tswap.cli.budget_run's options for this run (budget-run.sh
    run_budget, budget.sh budget_dry_run: RUN '' for --dry-run)."""
    from . import budget_run
    p = argparse.ArgumentParser(prog='tswap.cli.budget_run')
    budget_run.setup(p)
    args = [run] if run else ['--dry-run']
    args += ['--budget', _s(v, 'BUDGET'), '--auto', _s(v, 'BUDGET_AUTO') or '0', '--t0', _s(v, 'BUDGET_T0'),
             '--steady', _s(v, 'STEADY'), '--ramp', _s(v, 'RAMP') or '0', '--runtime', _s(v, 'RUNTIME'),
             '--repeat', _s(v, 'REPEAT') or '1', '--cvflag', CV_FLAG]
    return p.parse_args(args)


def _since(us0: int) -> str:
    """pipeline.sh since: the seconds since us0 (microseconds), 3 decimals."""
    ms = (time.time_ns() // 1000 - us0 + 500) // 1000
    return '%d.%03d' % (ms // 1000, ms % 1000)


def run_budget(x: Local, v: Mapping[str, Value]) -> None:
    """budget-run.sh run_budget and budget_one: the rounds
    (tswap.cli.budget_run.Rounds decides them) in this process. Before
    a write the preconditioning and, once, the write ceiling's
    preparation at the round's runtime and ramp (timed apart: PRE, not a
    cost per run), then the run (COST; fio's own: WALL)."""
    from .budget_run import Rounds
    run = x.s.run
    lines = [ln for ln in x.s.plan_text.split('\n') if ln]
    clines = [ln for ln in lines if ln.split('\t')[1:2] == ['ceiling']]
    for sub in ('points', 'rounds'):
        os.makedirs(os.path.join(run, sub), exist_ok=True)
        for t in glob.glob(glob.escape(run) + '/%s/.tmp-*' % sub):
            _remove(t)

    def emit(kind: str, msg: str) -> None:
        {'say': x.say, 'warn': x.warn, 'note': x.note}[kind](msg)

    def ask(ACT: str, I: int, DIR: str, KEY: str, REP: int, RT: str, RAMP: str, HEAD: str,
            TAIL: str) -> list[str]:
        line = lines[I]
        label = '%s %s%s' % (HEAD, point_label(line), TAIL)
        rw = line.split('\t')[2]
        us0 = time.time_ns() // 1000
        x.precondition_before(rw)
        if rw == 'write' and not os.path.exists(run + '/ceiling-prep'):
            for c in clines:
                x.ceiling_prep(c, 1, point_label(c), RT, RAMP)
        pre = _since(us0)
        us0 = time.time_ns() // 1000
        wall = x.run_point(line, KEY, int(REP), DIR, label, RT, RAMP)
        return [pre, _since(us0), wall, label]

    try:
        Rounds(rounds_args(v, run), lines, emit, ask).run()
    except StageError as e:
        _write(2, 'tswap: %s\n' % e)
        x.error_exit()


def dry_run(v: Mapping[str, Value]) -> int:
    """pipeline.sh dry_run with exec-local.sh exec_dry_head: each point's
    job file per repeat, nothing run (a --budget run's: its rounds first,
    each point once)."""
    s = settings(v)
    lines = [x for x in s.plan_text.split('\n') if x] if s.plan_text else ['']
    if _s(v, 'BUDGET'):
        # budget.sh budget_dry_run: the rounds as planned now, first
        from .budget_run import Rounds, dry_run_text
        try:
            text = dry_run_text(Rounds(rounds_args(v, ''), [x for x in lines if x], print, print))
        except StageError as e:
            sys.stderr.write('tswap: %s\n' % e)
            return EXIT_ERROR
        sys.stdout.write(text)
    reps = 1 if _s(v, 'BUDGET') else s.repeat
    total = len(lines) * reps
    out = sys.stdout
    kind = _s(v, 'TARGET_KIND')
    if _s(v, 'BUDGET'):
        out.write('dry run: the job file of each of the %d point(s) at the grid\'s runtime (a round runs it'
                  ' with its own runtime and ramp) on %s (%s, %s), grid %s; nothing is run\n'
                  % (total, s.targets[0], kind, s.size, s.grid))
    else:
        out.write('dry run: %d fio run(s) on %s (%s, %s), grid %s; nothing is run\n'
                  % (total, s.targets[0], kind, s.size, s.grid))
    out.write('environment: TSWAP_ENGINE=%s TSWAP_TARGET=%s TSWAP_SIZE=%s\n'
              % (_dry_path(s.engine, 'engine.so'), _dry_path(s.targets[0], 'target'), s.size))
    js = JobSettings(s.size_bytes, s.runtime, s.ramp, s.io_size, s.steady == 'on', SS_CRIT, SS_DUR,
                     BWLOG_MSEC, s.targets, s.kinds)
    idx = 0
    for line in lines:
        key, kind = (line.split('\t') + [''])[:2]
        for rep in range(1, reps + 1):
            idx += 1
            out.write('\n### [%d/%d] %s.r%d\n' % (idx, total, key, rep))
            try:
                out.write(job_file(line, s.size_bytes) if kind == 'checkpoint' else point_job(line, js))
            except JobError as e:
                out.write(e.text)
                out.flush()
                sys.stderr.write('%s: %s\n' % (PROG, e))
                return EXIT_USAGE
            except (CheckpointError, IndexError, ValueError) as e:
                if kind != 'checkpoint':
                    raise
                out.flush()
                sys.stderr.write('tswap: checkpoint-job: %s\n' % e)
                return EXIT_ERROR
    out.flush()
    return 0


def _dry_path(path: str, link: str) -> str:
    """jobs.sh fio_path without a run directory."""
    from ..executor.point import fio_unsafe
    if fio_unsafe(path) or (link == 'engine.so' and ':' in path):
        return '<RUN>/%s (a symlink: fio cannot take this path as is)' % link
    return fio_path(path, link, 2, '')


def steady_line(v: Mapping[str, Value], rt: str, ramp: str) -> str:
    """steady.sh steady_line (rt, ramp: the grid's, or a budget's final
    round's)."""
    w = int(ramp or 0) + SS_DUR + 2
    if _s(v, 'IO_SIZE'):
        return ''
    steady, budget = _s(v, 'STEADY'), _s(v, 'BUDGET')
    if steady == 'on' and int(rt) >= w:
        return ('- steady state: fio steadystate=%s, ss_dur=%d s, ss_ramp=%s s, capped by the %s s runtime; a'
                ' point that does not attain it, and whose last window moved by more than one tensor op'
                ' (docs/sweep.md, steady within one op), is flagged "not steady" (points of several'
                ' handles keep the fixed runtime)' % (SS_CRIT, SS_DUR, ramp or '0', rt))
    if steady == 'on' and budget:
        return ("- fixed runtime: the budget's final round of %s s is shorter than a steady-state window"
                ' needs (%d s: ramp + 1 s + %d s of samples + 1 s); a larger --budget gives it one (the'
                ' caution at the top)' % (rt, w, SS_DUR))
    if _s(v, 'FIXED_RUNTIME') == '1':
        return '- fixed runtime: no steady-state detection (--fixed-runtime)'
    return ('- fixed runtime: the %s s runtime is shorter than a steady-state window needs (%d s: ramp + 1 s'
            ' + %d s of samples + 1 s); --runtime %d or more turns it on' % (rt, w, SS_DUR, w))


def bwlog_line() -> str:
    return ('- bandwidth over time: fio write_bw_log with log_avg_msec=%s (points/POINT.rN/bw_bw.N.log); a run'
            ' whose last third averages more than %s%% below its first third "drops during the run"'
            ' (Warnings, plots/bw-POINT.png): a warning, not a reason to distrust the point'
            % (BWLOG_MSEC, DROP_PCT))


def precondition_line(run: str, v: Mapping[str, Value], writes: bool) -> str:
    """precondition.sh precondition_line."""
    try:
        with open(run + '/precondition.json', encoding='utf-8') as f:
            d = jqjson.loads(f.read())
    except FileNotFoundError:
        d = None
    if d is not None:
        t = jqjson.text
        return ('- preconditioned before the first write point: %s sequential passes of %s bytes over %s (fio'
                ' libaio, bs=%s, iodepth=%s, O_DIRECT): %s bytes in %s s, %s GB/s (precondition.json)'
                % (t(d['passes']), t(d['size_bytes']), ', '.join('`%s`' % t(x['path']) for x in d['targets']),
                   t(d['bs']), t(d['iodepth']), t(d['bytes']), t(d['seconds']),
                   t(jqjson.jround(d['gbs'] * 1000) / 1000)))
    if _s(v, 'PRECONDITION') == 'off':
        return '- not preconditioned (--no-precondition)'
    return ('- not preconditioned (%s; --precondition fills the target twice before the first write point)'
            % ('a file target' if writes else 'no write point'))


def finish(v: Mapping[str, Value], s: Settings, pwd: str) -> int:
    """pipeline.sh finish_run for a run on this host: its report lines
    (exec-local.sh exec_finish_args) among the finish stage's options."""
    args = [s.run, *FINISH_LIMITS, '--ds-version', _s(v, 'DS_VERSION'), '--min-read', _s(v, 'MIN_READ'),
            '--min-write', _s(v, 'MIN_WRITE'), '--budget', _s(v, 'BUDGET'), '--budget-t0', _s(v, 'BUDGET_T0'),
            '--bwlog-msec', BWLOG_MSEC, '--steady=' + steady_line(v, s.runtime, s.ramp),
            '--bwlog=' + bwlog_line(), '--precondition=' + precondition_line(s.run, v, s.writes)]
    if _s(v, 'COMPARE'):
        args += ['--compare', abspath(_s(v, 'COMPARE'), pwd)]
    return finish_stage(s.run, args)


def finish_stage(run: str, args: list[str]) -> int:
    """pipeline.sh finish_run: tswap.cli.finish with args (the run
    directory first) in this process, --rerun added; a status of 3 from a
    full run directory says so (space.sh run_dir_full_exit)."""
    from . import finish as fin
    p = argparse.ArgumentParser(prog='tswap.cli.finish')
    fin.setup(p)
    a = p.parse_args(args + ['--rerun', q(run)])
    try:
        status = fin.run(a)
    except StageError as e:
        sys.stderr.write('tswap: %s\n' % e)
        status = EXIT_ERROR
    except OSError as e:
        sys.stderr.write('tswap: finish: %s\n' % e)
        status = EXIT_ERROR
    sys.stderr.flush()
    if status == EXIT_ERROR:
        free = run_dir_free(run)
        if free is not None and free < RUN_SPACE_MIN:
            sys.stderr.write('%s: run directory full: %d bytes free in %s (free space, then: %s --resume %s)\n'
                             % (PROG, free, run, PROG, q(run)))
            for pat in ('/*.tmp', '/points/*.tmp'):
                for f in glob.glob(glob.escape(run) + pat):
                    try:
                        os.unlink(f)
                    except OSError:
                        pass
    return status


def internal_error(x: Optional[Union[Local, Fleet]], e: Exception) -> int:
    """run.sh on_err, the last resort: an exception nothing expected.
    A full run directory says so (space.sh run_dir_full_exit, exit 3);
    anything else is one line, `tswap-sweep: internal error: TYPE: TEXT
    (at FILE:LINE)` (the innermost frame), and exit 3: never a traceback."""
    free = run_dir_free(x.s.run) if x is not None else None
    if x is not None and free is not None and free < RUN_SPACE_MIN:
        try:
            x.full_exit(free)
        except Refusal as r:
            _write(2, '%s: %s\n' % (PROG, r.message.replace('\n', '\\n')))
            return r.code
    import traceback  # here: only an internal error needs it
    tb = traceback.extract_tb(e.__traceback__)
    at = ' (at %s:%s)' % (os.path.basename(tb[-1].filename), tb[-1].lineno) if tb else ''
    text = ('%s: %s' % (type(e).__name__, e) if str(e) else type(e).__name__).replace('\n', '\\n')
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except (OSError, ValueError):
            pass
    _write(2, '%s: internal error: %s%s\n' % (PROG, text, at))
    return EXIT_ERROR


def loop(x: Executor, run: str, lines: list[str], repeat: int, progress: int) -> None:
    """The points (tswap.executor.loop run_points) after the head line."""
    _write(progress, x.head() + '\n')
    run_points(x, run, lines, repeat, progress)


def execute(x: Union[Local, Fleet], run: str, body: Callable[[], None], fin: Callable[[], int],
            budget: bool) -> int:
    """The run of executor x under the signal handlers (pipeline.sh
    run_all, on_signal; run.sh on_err): body (the points), then fin (the
    outputs): the exit status. A stop signal stops what runs (x.stop),
    removes this run's unfinished points and half-written outputs and
    says how to finish it (exit 130, 143, 129)."""
    handle_signals()
    try:
        try:
            fioproc.guard('%d.' % os.getpid())
            body()
            return fin()
        except Exit as e:
            return e.code
        except Refusal as r:
            _write(2, '%s: %s\n' % (PROG, r.message.replace('\n', '\\n')))
            return r.code
        except Exception as e:
            # the last resort, as run.sh on_err
            return internal_error(x, e)
    except Interrupted as i:
        for f in (sys.stdout, sys.stderr):
            if f is not None:
                try:
                    f.flush()
                except OSError:
                    pass
        ignore_signals()
        x.stop(i.sig)
        return interrupted(run, i.sig, budget, x.warn)
    finally:
        ignore_signals()


def run(v: Mapping[str, Value], locks: Optional[Locks], pwd: str) -> int:
    """The run on this host from the state v (after sweep_local.setup):
    its exit status."""
    if _s(v, 'DRY_RUN') == '1':
        try:
            return dry_run(v)
        except Exception as e:
            return internal_error(None, e)
    s = settings(v)
    assert locks is not None
    progress = os.open(os.devnull, os.O_WRONLY) if s.quiet else 2
    fin = v.get('FINISHED', {})
    assert not isinstance(fin, (str, tuple))
    x = Local(s, Hooks(_result, _recheck(s)), progress, locks.target_inode, fin, _s(v, 'TARGET_KIND'))

    def body() -> None:
        x.say(x.head())
        x.prepare_targets()
        lines = _s(v, 'PLAN_LINES')
        if not lines:
            from .sweep_main import plan_lines
            with open(s.run + '/plan.json', encoding='utf-8') as f:
                lines = plan_lines(jqjson.loads(f.read()))
        if _s(v, 'BUDGET'):
            run_budget(x, v)
        else:
            run_points(x, s.run, lines.split('\n'), s.repeat, progress)
    return execute(x, s.run, body, lambda: finish(v, s, pwd), bool(_s(v, 'BUDGET')))
