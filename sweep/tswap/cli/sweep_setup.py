# SPDX-License-Identifier: GPL-2.0-only
"""A new run's settings and plan, resolved before anything runs: the
options over the grid's values over the defaults, the targets, the
points and the device ceiling (docs/sweep.md "Options", "Grid files",
"The device ceiling"); and the grid's job files (--emit-jobs)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from typing import Callable

from ..executor.target_facts import dev_size, is_block
from ..plan import checkpoint, expand, grid, jobs
from ..plan.values import (EXIT_ERROR, EXIT_USAGE, Refusal, abspath, bytes_to_size, comma_fields,
                           is_uint, size_to_bytes, usage)
from . import sweep_host as host
from .sweep_args import Options


@dataclass(frozen=True)
class Run:
    """A new run's resolved settings, as the shell's globals name them
    (state.sh): runtime and ramp in s ("" with --io-size),
    io_size its notation ("" without), size its shortest notation and
    size_bytes the bytes used; targets absolute; plan the plan lines with
    the ceilings; ceiling_qd and ceiling_jobs the ceiling's iodepth and
    fio jobs; steady on or off; notes for the report."""
    grid: grid.Grid
    notes: tuple[str, ...]
    target: str
    targets: tuple[str, ...]
    engine: str
    size: str
    size_bytes: int
    runtime: str
    ramp: str
    io_size: str
    repeat: str
    ceiling: bool
    ceiling_qd: int
    ceiling_jobs: int
    plan: tuple[str, ...]
    steady: bool
    fleet: bool


def warn(msg: str) -> None:
    """One line on stderr, "tswap-sweep: MSG" (util.sh warn)."""
    sys.stderr.buffer.write(('tswap-sweep: %s\n' % msg).encode('utf-8', 'surrogateescape'))
    sys.stderr.buffer.flush()


def _threads_max(h: host.Home, engine: str) -> Callable[[], int]:
    return lambda: host.engine_max(h, engine, 'tswap_threads')


def load_grid(h: host.Home, o: Options) -> tuple[grid.Grid, tuple[str, ...]]:
    """--grid's grid with its defaults and the list options over it, and
    its notes."""
    tmax = _threads_max(h, o.engine)
    path = host.grid_file(h, o.grid)
    # a file that grew since its check: read no more than a grid may have
    g, notes = grid.load(path, host.read_text(path, host.GRID_BYTES_MAX + 1), h.pwd, tmax)
    checkpoint.grid_check(g, o.workload)
    if o.workload == 'checkpoint':
        # one file, written: no tensor (the file is --size bytes)
        g = replace(grid.with_defaults(g), rw=('write',), tensor=(), iodepth=(), ranks=('1',))
    else:
        opts = (('rw', '--rw', o.rw_opt), ('ranks', '--ranks', o.ranks_opt),
                ('backend', '--backend', o.backend_opt), ('tensor', '--tensor-size', o.tensor_opt))
        g = grid.with_options(grid.with_defaults(g), opts, tmax)
    n = expand.combinations(g)
    if n > expand.POINTS_MAX:
        raise usage('grid %s: its lists make %d points (the product of their lengths), more'
                    ' than %d: split it into smaller grids, or give fewer values'
                    % (g.name, n, expand.POINTS_MAX))
    return g, notes


def engine_limits(h: host.Home, o: Options, g: grid.Grid) -> None:
    """The grid's queue depths against the backends' limits: io_uring's
    ring (the engine's range), libaio's fs.aio-max-nr (grid.sh
    check_engine_limits; docs/engine.md)."""
    aiomax = host.aio_max_nr()
    for be in g.backend:
        umax = host.engine_max(h, o.engine, 'tswap_queue_depth', 'io_uring') if be == 'io_uring' else 0
        for q in g.qd:
            if be == 'io_uring' and int(q) > umax:
                raise Refusal(EXIT_USAGE, 'grid %s: qd %s is above %d, the most SQ entries an'
                              ' io_uring ring can have (backend io_uring)' % (g.name, q, umax))
            if be == 'libaio' and is_uint(aiomax) and int(q) > int(aiomax):
                raise Refusal(EXIT_USAGE, 'grid %s: qd %s is above fs.aio-max-nr=%s, the most'
                              ' io_setup can give (backend libaio; raise it with sysctl'
                              ' fs.aio-max-nr)' % (g.name, q, aiomax))


def io_size_check(io_size: str, g: grid.Grid) -> None:
    """--io-size at least the largest tensor: each point moves at least one
    whole tensor per handle (grid.sh io_size_check)."""
    if not io_size:
        return
    io = size_to_bytes(io_size) or 0
    most = max((size_to_bytes(t) or 0 for t in g.tensor), default=0)
    if io < most:
        tn = bytes_to_size(most)
        raise usage('--io-size %s: below the largest tensor size %s (fio bs): each point must'
                    ' move at least one whole tensor per handle; give --io-size %s or more, or'
                    ' a smaller --tensor-size' % (bytes_to_size(io), tn, tn))


def target_list(h: host.Home, target: str) -> tuple[str, ...]:
    """--target's paths, absolute: none empty, none named twice by path
    or by what it names (ranks.sh target_list)."""
    items = comma_fields(target)
    if not items:
        raise usage('--target: no path')
    seen, same, out = set(), {}, []
    for t in items:
        if not t:
            raise usage("--target: an empty path in the list '%s'" % target)
        t = abspath(t, h.pwd)
        if t in seen:
            raise usage('--target: %s is named twice' % t)
        seen.add(t)
        key = host.target_key(t)
        if key in same:
            kind, what = key.split(' ', 1)
            what = {'block': 'block device as %s (%s)', 'file': 'file as %s (DEV:INODE %s)'}.get(
                kind, 'path as %s (%s)') % (same[key], what)
            raise usage('--target: %s is the same %s: a target named twice' % (t, what))
        same[key] = t
        out.append(t)
    return tuple(out)


def new_run(h: host.Home, o: Options) -> Run:
    """A new run's settings and plan (settings.sh setup_new_run), the
    warnings said on stderr as they come; Refusal on a bad grid, option
    or target."""
    if not o.hosts_file:
        # before fio --enghelp reads it (the grid's thread range)
        engine = abspath(o.engine or host.default_engine(h), h.pwd)
        why = host.engine_problem(engine)
        if why:
            raise Refusal(EXIT_ERROR, 'the tswap engine %s is %s' % (engine, why))
    g, notes = load_grid(h, o)
    engine_limits(h, o, g)
    io_size_check(o.io_size, g)
    runtime, ramp, io_size = o.runtime, o.ramp, o.io_size
    if not io_size:
        runtime, ramp = runtime or g.runtime or '5', ramp or g.ramp or '1'
    else:
        runtime, ramp, io_size = '', '', bytes_to_size(size_to_bytes(io_size) or 0)
    repeat = str(int(o.repeat or g.repeat or '1'))
    size = o.size or g.size or '1g'
    ceiling = o.ceiling and g.ceiling != 'off'
    fleet = bool(o.hosts_file)
    target, engine = o.target, o.engine
    if fleet:
        engine = engine or host.fleet_default_engine(h)
        if ' '.join(g.ranks) != '1' or 'readwrite' in ' '.join(g.rw) or ',' in target:
            raise usage('--hosts: ranks above 1, rw readwrite and several targets are not'
                        ' supported in fleet mode')
        targets: tuple[str, ...] = ()
    else:
        target = target or g.targets or host.default_target(h)
        targets = target_list(h, target)
        target = targets[0]
        engine = abspath(engine or host.default_engine(h), h.pwd)
    size_bytes = size_to_bytes(size) or 0
    max_t = max((size_to_bytes(t) or 0 for t in g.tensor), default=0)
    if not fleet and is_block(target):
        dev = dev_size(target)
        if dev is None:
            raise Refusal(EXIT_ERROR, 'cannot read the size of %s' % target)
        if size_bytes > dev:
            warn('--size %s is larger than %s (%d bytes): using the whole device' % (size, target, dev))
            size_bytes = dev // 4096 * 4096
    size = bytes_to_size(size_bytes)
    if size_bytes < 1 << 20:
        raise usage('--size %s: at least 1m (one 1 MiB block: the target\'s preparation, the'
                    ' ceiling and preconditioning write 1m blocks)' % size)
    if max_t > size_bytes:
        raise usage('tensor size %s does not fit in --size %s' % (bytes_to_size(max_t), size))
    ckpt = o.workload == 'checkpoint'
    ex = checkpoint.expand_points(g) if ckpt else expand.expand(g)
    if ex.skipped:
        warn(checkpoint.skipped_warning(ex.skipped) if ckpt
             else expand.skipped_warning(ex.skipped) or '')
    if not ex.lines:
        raise usage('the grid has no valid point')
    plan, qd, njobs = ex.lines, expand.CEILING_QD_MIN, 1
    if ceiling:
        depth = expand.ceiling_depth(plan, host.aio_max_nr())
        if depth.warning:
            warn(depth.warning)
        qd = depth.qd
        njobs = expand.ceiling_jobs(plan, qd)
        plan = expand.add_ceilings(plan, qd, njobs)
    steady = expand.steady_on(o.fixed_runtime, io_size, fleet, runtime, ramp)
    if o.precondition == 'on' and not expand.writes(plan):
        raise usage('--precondition: the plan has no write point (preconditioning runs before'
                    ' the first one)')
    return Run(g, notes, target, targets, engine, size, size_bytes, runtime, ramp, io_size,
               repeat, ceiling, qd, njobs, plan, steady, fleet)


def _first_line(path: str) -> str:
    if os.path.islink(path) or not os.path.isfile(path):
        return ''
    try:
        with open(path, 'rb') as f:
            return f.readline().rstrip(b'\n').replace(b'\0', b'').decode('utf-8', 'surrogateescape')
    except OSError:
        return ''


def emit(h: host.Home, o: Options) -> None:
    """--emit-jobs DIR: the grid's job files DIR/GRID-RW.fio, one per
    direction but readwrite, and a line each on stdout; DIR is made if
    missing. A file of that name is replaced only when this wrote it (its
    first line), else Refusal before anything is written (jobs.sh
    emit_grid_jobs, emit_jobs)."""
    d = o.emit_dir
    g, _ = load_grid(h, o)
    io_size_check(o.io_size, g)
    runtime, ramp = (o.runtime or g.runtime or '5', o.ramp or g.ramp or '1') if not o.io_size \
        else (o.runtime, o.ramp)
    lines = expand.expand(g)
    if lines.skipped:
        warn(expand.skipped_warning(lines.skipped) or '')
    dirs = [rw for rw in g.rw if rw != 'readwrite']
    for rw in dirs:
        f = '%s/%s-%s.fio' % (d, g.name, rw)
        if os.path.lexists(f) and not _first_line(f).startswith(jobs.generated_mark(g.name, rw)):
            raise Refusal(EXIT_USAGE, '--emit-jobs %s: %s exists and is not a job file tswap-sweep'
                          ' wrote: not overwritten (remove it, or another directory)' % (d, f))
    try:
        os.makedirs(d, exist_ok=True)
    except OSError as e:
        raise Refusal(EXIT_USAGE, '--emit-jobs %s: cannot be made (%s)' % (d, e.strerror)) from None
    run = jobs.run_options(o.io_size, runtime, ramp)
    for rw in dirs:
        f = '%s/%s-%s.fio' % (d, g.name, rw)
        text, n = jobs.job_file(g.name, g.desc, rw, lines.lines, run)
        tmp = '%s.tmp.%d' % (f, os.getpid())
        with open(tmp, 'wb') as out:
            out.write(text.encode('utf-8', 'surrogateescape'))
        os.replace(tmp, f)
        sys.stdout.buffer.write(('%s: %d point(s)\n' % (f, n)).encode('utf-8', 'surrogateescape'))
    sys.stdout.buffer.flush()


def list_grids(h: host.Home) -> str:
    """--list-grids' text: each built-in grid's name and first
    description line."""
    out = []
    for name in host.grid_names(h):
        path = host.grid_file(h, name)
        desc = ''
        for line in host.read_text(path).split('\n'):
            if line.startswith('description'):
                desc = line[len('description'):].lstrip(' \t\n\r\f\v')
                break
        out.append('%-16s %s\n' % (name, desc))
    return ''.join(out)
