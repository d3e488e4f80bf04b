# SPDX-License-Identifier: GPL-2.0-only
"""A fleet run (--hosts, docs/fleet.md), after the front end's options and
settings (tswap.cli.sweep_main, sweep_fleet, sweep_resume), in the front
end's own process: the targets under /dev/ refused for writes without
--destructive --force, then the dry run, or the tools, the run directory
(a new one made and locked with its sweep.json, hosts.txt and plan.json;
a resumed one locked), and the points through tswap.executor.fleet,
driven by the one loop of tswap.cli.run_local. The bash it replaces:
run.sh main and fleet_setup, fleet.sh fleet_check_targets, settings.sh
new_run_dir and save_config, pipeline.sh dry_run with exec-fleet.sh's
exec_dry_head."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Mapping, Optional, Union

from .. import jqjson
from ..executor.fleet import Fleet, FleetHooks, FleetHost, FleetSettings, job_or_exit
from ..executor.fleet_rules import device_check
from ..executor.base import BWLOG_MSEC, SS_CRIT, SS_DUR
from ..executor.locks import Locks
from ..plan import points
from ..plan.jobs import JobSettings
from ..plan.values import EXIT_OK, abspath
from . import sweep_host as host

Value = Union[str, tuple[str, ...], Mapping[str, str]]


def _s(v: Mapping[str, Value], k: str) -> str:
    x = v.get(k, '')
    return x if isinstance(x, str) else ''


def _t(v: Mapping[str, Value], k: str) -> tuple[str, ...]:
    x = v.get(k, ())
    return x if isinstance(x, tuple) else ()


def hosts(v: Mapping[str, Value]) -> tuple[FleetHost, ...]:
    """The hosts of the state's H_* arrays."""
    cols = [_t(v, k) for k in ('H_ID', 'H_LABEL', 'H_ADDR', 'H_TARGET', 'H_ENGINE', 'H_OPTS')]
    n = len(cols[2])
    cols = [c + ('',) * (n - len(c)) for c in cols]
    return tuple(FleetHost(i, *(c[i] for c in cols)) for i in range(n))


def job_settings(v: Mapping[str, Value]) -> JobSettings:
    """The points' job settings (jobs.sh jobs_make: a target without a
    kind is a file)."""
    targets = _t(v, 'TARGETS')
    kinds = _t(v, 'TARGET_KINDS')
    kinds = tuple(kinds[i] if i < len(kinds) and kinds[i] else 'file' for i in range(len(targets)))
    return JobSettings(int(_s(v, 'SIZE_BYTES')), _s(v, 'RUNTIME'), _s(v, 'RAMP'), _s(v, 'IO_SIZE'),
                       _s(v, 'STEADY') == 'on', SS_CRIT, SS_DUR, BWLOG_MSEC, targets, kinds)


def version(h: host.Home) -> str:
    """The sweep's release and, in a git checkout, its commit (meta.sh
    tswap_version)."""
    from .sweep_local import tswap_version_of
    git: Optional[tuple[int, bytes]] = None
    if h.root:
        try:
            r = subprocess.run(['git', '-C', h.root, 'describe', '--always', '--dirty', '--tags'],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
            git = (r.returncode, r.stdout)
        except OSError:
            git = None
    return tswap_version_of(h, git)


def settings(h: host.Home, v: Mapping[str, Value], lines: list[str]) -> FleetSettings:
    """The fleet executor's settings from the front end's state; lines:
    the plan lines the points run."""
    targets = _t(v, 'TARGETS') or (_s(v, 'TARGET'),)
    first = next((ln for ln in lines if ln.split('\t')[1:2] == ['tswap']), '')
    return FleetSettings(
        run=_s(v, 'RUN'), grid=_s(v, 'G_NAME'), hosts_file=_s(v, 'HOSTS_FILE'), hosts=hosts(v),
        jobs=job_settings(v), size=_s(v, 'SIZE'), repeat=int(_s(v, 'REPEAT') or 1), targets=targets,
        writes=points.facts(_s(v, 'PLAN_TEXT'))[0] == '1', destructive=_s(v, 'DESTRUCTIVE') == '1',
        force=_s(v, 'FORCE') == '1', connect_timeout=_s(v, 'CONNECT_TIMEOUT'),
        host_timeout=_s(v, 'HOST_TIMEOUT'), fio_want=_s(v, 'FIO_WANT'), outlier_pct=_s(v, 'OUTLIER_PCT'),
        junit_out=_s(v, 'JUNIT_OUT'), first=first, collector=h.sweep_home + '/lib/meta-collect.sh',
        tswap=version(h))


def hooks() -> FleetHooks:
    """The layers after the executor, as the fleet calls them."""
    from ..report.fleet_text import progress
    from ..results.meta import kv_lines, meta
    from .run_local import _result

    def meta_of(target: str, engine: str, tswap: str, kv: str) -> Optional[dict]:
        m = kv_lines(kv)
        return None if m is None else meta(target, engine, tswap, m)
    return FleetHooks(_result, progress, meta_of)


def check_targets(v: Mapping[str, Value]) -> None:
    """fleet.sh fleet_check_targets: a target under /dev/ is taken for a
    block device; the sweep cannot look at it on its host, so writing to
    one needs --destructive --force (Refusal, exit 2; else a warning)."""
    writes = points.facts(_s(v, 'PLAN_TEXT'))[0] == '1'
    for hh in hosts(v):
        d = device_check(hh.target, hh.label, writes, _s(v, 'DESTRUCTIVE') == '1', _s(v, 'FORCE') == '1')
        if d.refuse:
            from ..plan.values import EXIT_USAGE, Refusal
            raise Refusal(EXIT_USAGE, d.refuse)
        if d.warn:
            sys.stderr.write('tswap-sweep: %s\n' % d.warn)
            sys.stderr.flush()


def dry_run(v: Mapping[str, Value]) -> int:
    """pipeline.sh dry_run with exec-fleet.sh exec_dry_head: each point's
    job file per repeat and host, nothing run."""
    out = sys.stdout
    lines = _s(v, 'PLAN_TEXT').split('\n')
    reps = int(_s(v, 'REPEAT') or 1)
    hs = hosts(v)
    total = len(lines) * reps
    out.write("dry run: %d fio run(s) on each of %d host(s) through fio's client mode, grid %s, %s of each"
              ' target; nothing is run\n' % (total, len(hs), _s(v, 'G_NAME'), _s(v, 'SIZE')))
    for hh in hs:
        opts = ', options: %s' % hh.opts.replace('\n', ' ') if hh.opts else ''
        out.write('host %s: fio --client=%s, target %s, engine %s%s\n' % (hh.label, hh.addr, hh.target, hh.engine,
                                                                          opts))
    js = job_settings(v)
    idx = 0
    for line in lines:
        key = line.split('\t', 1)[0]
        for rep in range(1, reps + 1):
            idx += 1
            for hh in hs:
                out.write('\n### [%d/%d] %s.r%d on %s\n' % (idx, total, key, rep, hh.label))
                text, err = job_or_exit(line, js, hh)
                out.write(text)
                if err:
                    out.flush()
                    sys.stderr.write(err[1] + '\n')
                    return err[0]
    out.flush()
    return EXIT_OK


def save_config(h: host.Home, run: str, v: Mapping[str, Value]) -> None:
    """settings.sh save_config: sweep.json (target_kind fleet), the hosts
    file kept as hosts.txt, plan.json; then the checkout's latest link."""
    from .sweep_local import _write, latest_link
    sj = _t(v, 'SWEEP_JSON')
    _write(run + '/sweep.json', '%s"%s"%s\n' % (sj[0], _s(v, 'TARGET_KIND'), sj[1]))
    shutil.copyfile(_s(v, 'HOSTS_FILE'), run + '/hosts.txt')
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(run + '/hosts.txt', os.stat(_s(v, 'HOSTS_FILE')).st_mode & 0o7777 & ~mask)
    _write(run + '/plan.json', '%s\n' % _s(v, 'PLAN_JSON'))
    if not _s(v, 'OUT'):
        latest_link(h, run)


def setup(h: host.Home, v: Mapping[str, Value]) -> tuple[str, Locks, str]:
    """run.sh fleet_setup after the target check: the tools, a new run's
    directory (made, locked, its first documents) or a resumed one's
    (locked; plan.json from an older run's plan.tsv). Returns the run
    directory, its lock and the plan lines of its points."""
    from .sweep_local import _write, full_or_raise, new_run_dir
    host.need_tools('fio')
    locks = Locks(os.getpid(), os.geteuid(), os.environ.get('XDG_RUNTIME_DIR', ''))
    run = _s(v, 'RUN') if _s(v, 'RESUME') else new_run_dir(h, _s(v, 'OUT'), locks)
    lines = _s(v, 'PLAN_LINES')
    try:
        if not _s(v, 'RESUME'):
            locks.lock_run(run)
            save_config(h, run, v)
        locks.lock_run(run)
        if not os.path.isfile(run + '/plan.json'):
            from .sweep_start import plan_doc
            _write(run + '/plan.json', plan_doc(_s(v, 'PLAN_TEXT')) + '\n')
            lines = ''
    except OSError:
        full_or_raise(run)
        raise
    if not lines:
        from .sweep_main import plan_lines
        with open(run + '/plan.json', encoding='utf-8') as f:
            lines = plan_lines(jqjson.loads(f.read()))
    return run, locks, lines


def run(h: host.Home, v: Mapping[str, Value]) -> int:
    """The fleet run from the state v: its exit status (run.sh main)."""
    from . import run_local
    check_targets(v)
    if _s(v, 'DRY_RUN') == '1':
        try:
            return dry_run(v)
        except Exception as e:
            return run_local.internal_error(None, e)
    rd, locks, text = setup(h, v)
    assert locks.run == rd
    lines = text.split('\n')
    st = dict(v)
    st['RUN'] = rd
    s = settings(h, st, lines)
    progress = os.open(os.devnull, os.O_WRONLY) if _s(v, 'QUIET') == '1' else 2
    from .sweep_local import done
    x = Fleet(s, hooks(), progress, done(rd))
    args = [rd, *run_local.FINISH_LIMITS, '--ds-version', _s(v, 'DS_VERSION'), '--min-read', _s(v, 'MIN_READ'),
            '--min-write', _s(v, 'MIN_WRITE'), '--bwlog-msec', BWLOG_MSEC]
    if _s(v, 'COMPARE'):
        args += ['--compare', abspath(_s(v, 'COMPARE'), h.pwd)]
    # locks (a local of this frame) holds the run's lock, fd 9, until the end
    return run_local.execute(x, rd, lambda: run_local.loop(x, rd, lines, s.repeat, progress),
                             lambda: run_local.finish_stage(rd, args + x.finish_args()), False)

