# SPDX-License-Identifier: GPL-2.0-only
"""tswap-sweep's front end (sweep/tswap-sweep execs it): the options, every
refusal before anything runs, --help, --version, --list-grids and
--emit-jobs; for a run (or a dry run), a new run's settings and plan,
its fleet hosts and budget, and the text of its sweep.json and plan.json.
Then the run itself, in this process: on this host tswap.cli.sweep_local
and run_local, on the hosts of --hosts tswap.cli.run_fleet (docs/design.md
"The sweep").

Exit codes (docs/sweep.md): 0 done (help, version, grids, job files); 2
usage error; 3 a run error (fio missing, an engine fio cannot
read); the run's own after that."""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union

from .. import jqjson
from ..plan.values import EXIT_ERROR, EXIT_OK, Refusal
from ..early import Background
from . import sweep_host as host
from . import run_local, sweep_local
from ..executor.locks import Locks
from . import sweep_start
from .sweep_args import USAGE, Options, declared, parse
from .sweep_setup import Run, emit, list_grids, new_run

if TYPE_CHECKING:
    from .sweep_resume import Resumed

PROG = 'tswap-sweep'
Value = Union[str, tuple[str, ...], Mapping[str, str]]


def _out(stream: object, text: str) -> None:
    buf = getattr(stream, 'buffer')
    buf.write(text.encode('utf-8', 'surrogateescape'))
    buf.flush()


def state(h: host.Home, o: Options, run: Optional[Run], t0: str,
          resumed: Optional[Resumed] = None, fio: Optional[list[Optional[str]]] = None
          ) -> dict[str, Value]:
    """The run's state, a value per setting (state.sh's names): the
    options, and for a new run its settings, grid and plan, its hosts,
    budget and first documents (_start); for --resume the run's own
    (tswap.cli.sweep_resume). fio: fio --version's text when already read
    ([text], [None]: fio failed)."""
    v: dict[str, Value] = dict(declared(o))
    v['BUDGET_T0'] = t0
    v['DEFAULT_TARGET'] = host.default_target(h)
    v['FLEET'] = '1' if o.hosts_file and not o.resume else '0'
    if run is not None:
        g = run.grid
        plan = '\n'.join(run.plan)
        v.update(TARGET=run.target, TARGETS=run.targets, ENGINE=run.engine, SIZE=run.size,
                 SIZE_BYTES=str(run.size_bytes), RUNTIME=run.runtime, RAMP=run.ramp,
                 IO_SIZE=run.io_size, REPEAT=run.repeat, CEILING='1' if run.ceiling else '0',
                 CEILING_QD=str(run.ceiling_qd), CEILING_JOBS=str(run.ceiling_jobs),
                 PLAN_TEXT=plan,
                 STEADY='on' if run.steady else 'off', NOTES=run.notes,
                 G_NAME=g.name, G_DESC=g.desc)
    if resumed is not None:
        v.update(resumed.values)
        v.update(resumed.arrays)
        if os.path.isfile(str(v['RUN']) + '/plan.json'):
            # its plan text is plan.json's lines (sweep_resume._plan_text)
            v['PLAN_LINES'] = v['PLAN_TEXT']
    if run is not None:
        v.update(_start(h, o, run, t0, v, fio if fio is not None else []))
    return v


def _start(h: host.Home, o: Options, run: Run, t0: str, v: dict[str, Value],
           fio: list[Optional[str]]) -> dict[str, Value]:
    """A new run's setup after its plan: the fleet's hosts and settings
    (tswap.cli.sweep_fleet), the budget (tswap.cli.sweep_start), and
    unless a dry run, the run directory's first documents as run.sh
    writes them (SWEEP_JSON: sweep.json's text before and after
    target_kind's value; PLAN_JSON: plan.json's)."""
    out: dict[str, Value] = {}

    def fio_version() -> Optional[str]:
        if not fio:
            from .sweep_fleet import fio_version as read
            fio.append(read())
        return fio[0]

    fleet = None
    if run.fleet:
        # imported by a fleet run only
        from . import sweep_fleet
        fleet = sweep_fleet.setup(h, o.hosts_file, run.target, run.engine, o.outlier_pct,
                                  o.connect_timeout, o.host_timeout, o.fio_want,
                                  None if o.fio_want else fio_version())
        out.update(TARGET_KIND='fleet', HOSTS_FILE=fleet.hosts_file,
                   OUTLIER_PCT=fleet.outlier_pct, CONNECT_TIMEOUT=fleet.connect_timeout,
                   HOST_TIMEOUT=fleet.host_timeout, FIO_WANT=fleet.fio_want,
                   H_ADDR=tuple(x.addr for x in fleet.hosts),
                   H_LABEL=tuple(x.label for x in fleet.hosts),
                   H_ID=tuple(x.id for x in fleet.hosts),
                   H_TARGET=tuple(x.target for x in fleet.hosts),
                   H_ENGINE=tuple(x.engine for x in fleet.hosts),
                   H_OPTS=tuple('\n'.join(x.opts) for x in fleet.hosts))
    budget, auto = sweep_start.budget(run, o.budget, o.exhaustive, run.fleet, t0)
    out.update(BUDGET=budget, BUDGET_AUTO='1' if auto else '0')
    if not o.dry_run:
        out['SWEEP_JSON'] = sweep_start.sweep_doc({**v, **out}, fio_version(),
                                                  fleet.config() if fleet else None, budget, auto)
        out['PLAN_JSON'] = sweep_start.plan_doc(str(v['PLAN_TEXT']))
        out['PLAN_LINES'] = plan_lines(jqjson.loads(out['PLAN_JSON']))
    return out


def plan_lines(doc: dict[str, Any]) -> str:
    """The points of a plan.json document as pipeline.sh plan_lines's jq
    gives them (tab-separated: point, kind, rw, backend, tensor, block,
    qd, submit, window, threads, iodepth, and ranks above 1; each field
    as jq's tostring; no last newline), so that run.sh runs no jq for
    them (the same lines as tswap.cli.sweep_resume's plan text)."""
    out = []
    for p in doc['points']:
        f = [p.get(k) for k in ('point', 'kind', 'rw', 'backend', 'tensor', 'block', 'qd', 'submit',
                                'window', 'threads', 'iodepth')]
        ranks = p.get('ranks')
        if isinstance(ranks, (int, float)) and not isinstance(ranks, bool) and ranks > 1:
            f.append(ranks)
        out.append('\t'.join(jqjson.text(x) for x in f))
    return '\n'.join(out)


def name_process() -> None:
    """This process's name (comm: ps, top, pgrep -x) set to tswap-sweep,
    best effort."""
    try:
        with open('/proc/self/comm', 'w') as f:
            f.write(PROG)
    except OSError:
        pass


def main(script: str, sweep_home: str, argv: list[str], bg: Optional[Background] = None) -> int:
    """The whole front end of `tswap-sweep ARGS` (script: the entry's
    path, symlinks resolved; argv: ARGS); exits with its status, or
    becomes the run (hand_over). bg: the children the entry started
    before it imported this (tswap.early.start: fio --version, git
    describe), read by a run on this host, killed and reaped on every
    other way out."""
    t0 = host.now()
    name_process()
    # the run inherits these: SIGPIPE must not stay ignored (Python's
    # default), or bash and fio could never die of it
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    h = host.home(os.path.dirname(script), sweep_home)
    if bg is None:
        bg = Background()
    try:
        return _main(h, script, argv, t0, bg)
    finally:
        bg.stop()


def _main(h: host.Home, script: str, argv: list[str], t0: str, bg: Background) -> int:
    """main's options, refusals and hand-over; bg: the set-up's child
    processes (killed and reaped by main on every way out)."""
    try:
        o = parse(argv)
        if o.action or o.emit_dir or o.resume or o.hosts_file or o.dry_run:
            # only a real run on this host reads what the entry started
            bg.stop()
        if o.action == 'help':
            _out(sys.stdout, USAGE)
            return EXIT_OK
        if o.action == 'version':
            _out(sys.stdout, host.version_text(h, PROG, o.engine))
            return EXIT_OK
        if o.action == 'list-grids':
            _out(sys.stdout, list_grids(h))
            return EXIT_OK
        host.paths_check(h, o.compare, o.emit_dir, o.resume, o.dry_run)
        host.need_tools('python3')
        if o.emit_dir:
            emit(h, o)
            return EXIT_OK
        if o.resume:
            from .sweep_resume import load as load_run
            v = state(h, o, None, t0, load_run(h, o))
        elif o.hosts_file or o.dry_run:
            v = state(h, o, new_run(h, o), t0)
        else:
            # a real run on this host: what meta.json needs starts now, to
            # run while the rest is set up (tswap.cli.sweep_local)
            fio = [bg.fio_version()]
            if bg.root != h.root:
                sweep_local.start_git(bg, h)
            early = sweep_local.early_target(h, o.target)
            if early:
                sweep_local.start_collector(bg, h, early, fio[0])
            run = new_run(h, o)
            if run.target != early:
                bg.stop()
                sweep_local.start_git(bg, h)
                sweep_local.start_collector(bg, h, run.target, fio[0])
            v = state(h, o, run, t0, None, fio)
        if v['FLEET'] != '1':
            # the run in this process (tswap.cli.run_local)
            held: list[Locks] = []
            v.update(sweep_local.setup(h, v, bg, held))
            bg.stop()
            return run_local.run(v, held[0] if held else None, h.pwd)
        bg.stop()
        # a fleet's run, in this process too (tswap.cli.run_fleet)
        from . import run_fleet
        return run_fleet.run(h, v)
    except Refusal as r:
        # one line, whatever value it quotes
        _out(sys.stderr, '%s: %s\n' % (r.prog or PROG, r.message.replace('\n', '\\n')))
        return r.code
    except OSError as e:
        # what cannot be read or written here (the run's own checks come later)
        _out(sys.stderr, '%s: %s\n' % (PROG, e))
        return EXIT_ERROR
    except Exception as e:
        # the last resort (run.sh on_err): one line and exit 3, no traceback
        return run_local.internal_error(None, e)
