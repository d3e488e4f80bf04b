# SPDX-License-Identifier: GPL-2.0-only
"""The plan: a grid's points as plan lines, and the device-ceiling lines
before them (docs/sweep.md "Points", "The device ceiling").

A plan line, tab separated, sizes in bytes (tswap.plan.points names the
fields): key kind rw backend tensor block qd submit window threads
iodepth [ranks]. kind is tswap, or ceiling (fio's libaio: backend
fio-libaio, tensor = bs, block 0, qd = iodepth, submit/window "-",
threads its fio jobs, 0 for one). ranks is there only above 1, and the
key of a point of N > 1 ranks ends in -nN: a point of 1 rank reading or
writing has the key it had before ranks existed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .grid import Grid
from .values import bytes_to_size, is_uint, size_to_bytes

# The device ceiling: fio's libaio at bs CEILING_BS (bytes: 1m), iodepth
# at least CEILING_QD_MIN, at most CEILING_QD_MAX; at most CEILING_JOBS_MAX
# fio jobs per handle (state.sh).
CEILING_BS = 1 << 20
CEILING_QD_MIN, CEILING_QD_MAX, CEILING_JOBS_MAX = 64, 4096, 64
# Steady state (tswap steady.sh): fio's window in seconds
SS_DUR = 5
ALIGN = 4096


@dataclass(frozen=True)
class Expanded:
    """expand()'s answer: the plan lines (each key once) and how many
    points were left out for an unaligned tensor part or block."""
    lines: tuple[str, ...]
    skipped: int


# the most points a grid may have (its lists' product): every point runs
# at least once, about 3 s (a budget's first round), so more is a day of
# fio runs; and the plan is held in memory and handed to the run
POINTS_MAX = 10000


def combinations(g: Grid) -> int:
    """How many points g's lists make at most (the product of their
    numbers of distinct values, an empty list counting 1: a checkpoint
    grid has no tensor or iodepth, a tensor grid no io_buffer_size;
    expand() and checkpoint.expand_points() may leave some out)."""
    n = 1
    for vals in (g.ranks, g.rw, g.backend, g.tensor, g.iodepth, g.threads, g.window, g.submit,
                 g.block, g.qd, g.io_buffer_size, g.io_buffer_double):
        n *= max(1, len(set(vals)))
    return n


def _dec(s: str) -> int:
    return int(s, 10)


def expand(g: Grid) -> Expanded:
    """The cartesian product of g's lists (defaults filled in) as plan
    lines, ranks outermost, then rw, backend, tensor, iodepth, threads,
    window, submit, block, qd. A tensor that threads cannot cut into
    4096-aligned parts, or a block that is not a multiple of 4096, is left
    out and counted; a key given twice keeps its first line (grid.sh
    expand_grid, unique_points)."""
    out: list[str] = []
    seen = set()
    skipped = 0
    per_thread = len(g.window) * len(g.submit) * len(g.block) * len(g.qd)
    for n in map(_dec, g.ranks):
        nk = '' if n == 1 else '-n%d' % n
        ncol = '' if n == 1 else '\t%d' % n
        for rw in g.rw:
            for be in g.backend:
                for t in g.tensor:
                    tb = size_to_bytes(t) or 0
                    tn = bytes_to_size(tb)
                    for d in map(_dec, g.iodepth):
                        for p in map(_dec, g.threads):
                            if tb % p or (tb // p) % ALIGN:
                                skipped += per_thread
                                continue
                            for w in g.window:
                                for s in g.submit:
                                    for b in g.block:
                                        bb = size_to_bytes(b) or 0
                                        if bb % ALIGN:
                                            skipped += len(g.qd)
                                            continue
                                        bn = bytes_to_size(bb)
                                        for q in map(_dec, g.qd):
                                            key = '%s-%s-t%s-b%s-q%d-%s-%s-p%d-d%d%s' % (
                                                rw, be, tn, bn, q, s, w, p, d, nk)
                                            if key in seen:
                                                continue
                                            seen.add(key)
                                            out.append('%s\ttswap\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t%d%s' % (
                                                key, rw, be, tb, bb, q, s, w, p, d, ncol))
    return Expanded(tuple(out), skipped)


def skipped_warning(skipped: int) -> Optional[str]:
    """The warning for points expand() left out, or None."""
    if not skipped:
        return None
    return ('left out %d point(s) whose tensor size is not divisible into 4096-aligned parts'
            ' per thread, or whose block size is not a multiple of 4096' % skipped)


def _fields(line: str) -> list[str]:
    f = line.split('\t')
    return f + [''] * (12 - len(f))


@dataclass(frozen=True)
class Depth:
    """ceiling_depth()'s answer: the iodepth, and when fs.aio-max-nr capped
    it, the warning to give."""
    qd: int
    warning: Optional[str]


def ceiling_depth(lines: tuple[str, ...], aio_max_nr: str) -> Depth:
    """The ceiling's iodepth: as many 1m blocks as the deepest tswap point
    keeps in flight per handle, min(tensor, threads x qd x block) bytes, at
    least CEILING_QD_MIN, at most CEILING_QD_MAX and fs.aio-max-nr (its
    text as read, "" when unreadable) over the jobs a ceiling runs at once
    (ranks; readwrite 2 per rank), with a warning when capped
    (grid.sh ceiling_depth, util.sh aio_depth_cap; docs/performance.md)."""
    most = 0
    jobs = 1
    for line in lines:
        f = _fields(line)
        if f[1] != 'tswap':
            continue
        most = max(most, min(int(f[9]) * int(f[6]) * int(f[5]), int(f[4])))
        n = int(f[11] or 1) * (2 if f[2] == 'readwrite' else 1)
        jobs = max(jobs, n)
    depth = max((most + CEILING_BS - 1) // CEILING_BS, CEILING_QD_MIN)
    cap = CEILING_QD_MAX
    if is_uint(aio_max_nr) and int(aio_max_nr) // jobs < cap:
        cap = int(aio_max_nr) // jobs
    if depth <= cap:
        return Depth(depth, None)
    return Depth(cap, 'device ceiling: the deepest point keeps %s in flight, %d x 1m; the'
                 ' ceiling runs at iodepth %d (the most %d job(s) get from fs.aio-max-nr=%s'
                 ' and %d), so it may read low for that point'
                 % (bytes_to_size(most), depth, cap, jobs, aio_max_nr or '?', CEILING_QD_MAX))


def ceiling_jobs(lines: tuple[str, ...], ceiling_qd: int) -> int:
    """The ceiling's fio jobs per handle: the most intra-op threads of a
    single-handle point (each tswap worker submits on its own io context:
    DeepSpeed csrc/aio/common deepspeed_aio_thread_t), at least 1, at most
    CEILING_JOBS_MAX and ceiling_qd (grid.sh ceiling_jobs)."""
    most = 1
    for line in lines:
        f = _fields(line)
        if f[1] == 'tswap' and (f[11] or '1') == '1' and f[2] != 'readwrite':
            most = max(most, int(f[9]))
    return min(most, CEILING_JOBS_MAX, ceiling_qd)


def _ceiling_line(key: str, rw: str, jobs: int, qd: int, ncol: str) -> str:
    return '%s\tceiling\t%s\tfio-libaio\t%d\t0\t%d\t-\t-\t%d\t%d%s' % (
        key, rw, CEILING_BS, qd, jobs, qd, ncol)


def add_ceilings(lines: tuple[str, ...], qd: int, jobs: int) -> tuple[str, ...]:
    """lines with a ceiling line before the first point of each direction
    and rank count: fio's libaio with as many jobs as the point has
    handles. One rank reading or writing with jobs > 1 gets two: one fio
    job, and jobs jobs (key suffix -jJ); the faster is its ceiling
    (tswap.stats.aggregate; grid.sh add_ceilings)."""
    out: list[str] = []
    seen = set()
    for line in lines:
        f = _fields(line)
        rw, n = f[2], int(f[11] or 1)
        nk, ncol, j = ('', '', 0) if n == 1 else ('-n%d' % n, '\t%d' % n, 0)
        if n == 1 and rw != 'readwrite' and jobs > 1:
            j, nk = jobs, '-j%d' % jobs
        if (rw, n) not in seen:
            seen.add((rw, n))
            key = 'ceiling-%s-fio-libaio-bs1m-qd%d' % (rw, qd)
            if j > 1:
                out.append(_ceiling_line(key, rw, 0, qd, ''))
            out.append(_ceiling_line(key + nk, rw, j, qd, ncol))
        out.append(line)
    return tuple(out)


def steady_window(ramp: str, ss_dur: int = SS_DUR) -> int:
    """The shortest runtime (s) that gives fio two steady-state verdicts
    after a ramp_time of ramp s: ramp + 1 s before the first sample (fio
    resets the job's epoch when ramp_time ends), ss_dur samples, one more
    (docs/sweep.md "Steady state"; steady.sh steady_window_at)."""
    return int(ramp or '0') + ss_dur + 2


def steady_on(fixed_runtime: bool, io_size: str, fleet: bool, runtime: str, ramp: str) -> bool:
    """Steady-state detection for a new run: off with --fixed-runtime,
    --io-size, in a fleet, and when the runtime (s) is shorter than the
    window (steady_window)."""
    if fixed_runtime or io_size or fleet:
        return False
    return int(runtime) >= steady_window(ramp)


def writes(lines: tuple[str, ...]) -> bool:
    """A point of the plan writes (write, readwrite)."""
    return any(_fields(x)[2] in ('write', 'readwrite') for x in lines)
