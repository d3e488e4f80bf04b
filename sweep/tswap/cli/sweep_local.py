# SPDX-License-Identifier: GPL-2.0-only
"""The set-up of a run on this host (not --hosts), before its executor
runs (tswap.cli.run_local): the targets checked
(tswap.cli.targets_check), the tools and the engine, the targets locked
(tswap.executor.locks), then a new run's directory made and locked with
its sweep.json, plan.json and meta.json, or a resumed run's directory
locked (and its plan.json made from an older run's plan.tsv), and the
runs done earlier (tswap.cli.load_done). What the executor needs of it comes back
as its state: RUN, the targets' kinds and owners, FINISHED.

The metadata collector (sh lib/meta-collect.sh TARGET) and git describe
run as child processes (tswap.early.Background: git describe from the
entry's start, the collector from the moment the run is known to be a
real one) until meta.json is written, so that they overlap the rest;
they are killed and reaped on every other way out (docs/sweep.md "Run
directory", "meta.json"; the bash it replaces: lock.sh, settings.sh
new_run_dir, meta.sh write_meta)."""

from __future__ import annotations

import glob
import os
import re
import time
from typing import Mapping, Optional, Union

from ..early import Background
from ..executor.locks import Locks, run_dir_empty
from ..plan import points
from ..plan.values import EXIT_ERROR, EXIT_USAGE, Refusal, abspath, comma_fields
from . import load_done, meta, targets_check
from . import sweep_host as host

Value = Union[str, tuple[str, ...], Mapping[str, str]]


def early_target(h: host.Home, target: str) -> str:
    """The first target of --target, made absolute, as the settings will
    have it (sweep_setup.target_list), so that the collector can start
    before the grid is read; "" when --target is not given or its first
    path is empty (then the collector starts once the settings are
    known)."""
    first = comma_fields(target)[0] if target else ''
    return abspath(first, h.pwd) if first else ''


def start_git(bg: Background, h: host.Home) -> None:
    """git describe of a checkout (meta.sh tswap_version), in the background."""
    bg.start_git(h.root)


def start_collector(bg: Background, h: host.Home, target: str, fio: Optional[str]) -> None:
    """lib/meta-collect.sh TARGET, with fio's version as the front end read
    it (TSWAP_FIO_VERSION; empty: the collector asks fio), in the
    background (meta.sh meta_json)."""
    env = dict(os.environ)
    env['TSWAP_FIO_VERSION'] = fio or ''
    bg.start('collector', ['sh', h.sweep_home + '/lib/meta-collect.sh', target], env)


def _subst(out: bytes) -> str:
    """A command's output as bash's $(...) gives it: NULs dropped, the
    last newlines cut."""
    return out.replace(b'\0', b'').decode('utf-8', 'surrogateescape').rstrip('\n')


def tswap_version(h: host.Home, bg: Background) -> str:
    """The release and, in a git checkout, the commit: "V (commit C)"
    (meta.sh tswap_version; git describe from bg)."""
    return tswap_version_of(h, bg.read('git') if h.root else None)


def tswap_version_of(h: host.Home, git: Optional[tuple[int, bytes]]) -> str:
    """tswap_version with git describe's (status, output), None when it
    did not run."""
    v, c = 'unknown', ''
    if h.root:
        text = host.read_text(h.root + '/Makefile')
        v = '\n'.join(re.findall(r'^TSWAP_VERSION[ \t\r\v\f]*:=[ \t\r\v\f]*(.*)$', text, re.M))
        if git is not None and git[0] == 0:
            c = _subst(git[1])
    elif os.path.isfile(h.sweep_home + '/VERSION'):
        v = host.read_text(h.sweep_home + '/VERSION').rstrip('\n')
    return '%s%s' % (v or 'unknown', ' (commit %s)' % c if c else '')


def _parent(p: str) -> str:
    """util.sh dirname_into: p's directory, trailing slashes ignored."""
    p = p.rstrip('/') or '/'
    if '/' not in p:
        return '.'
    return p.rsplit('/', 1)[0].rstrip('/') or '/'


def _out_empty(run: str) -> None:
    """Refusal (exit 2) unless the existing --out directory run is empty
    but for a sweep's .lock (settings.sh out_empty; rules:
    tswap.executor.locks run_dir_empty); an unreadable one counts as
    empty."""
    names: list[str] = []
    try:
        with os.scandir(run) as it:
            for e in it:
                if e.name != '.lock':
                    names.append(e.name)
                    break
    except OSError:
        pass
    f = run + '/.lock'
    lock: Optional[bytes] = None
    is_file = os.path.isfile(f) and not os.path.islink(f)
    if os.path.lexists(f):
        lock = b'x' * 17
        if is_file and os.path.getsize(f) <= 16:
            try:
                with open(f, 'rb') as x:
                    lock = x.read(17)
            except OSError:
                lock = b''
    if not run_dir_empty(names, lock, is_file):
        raise Refusal(EXIT_USAGE, '%s exists and is not empty (use --resume to finish it, or'
                      ' another --out)' % run)


def default_out(h: host.Home) -> str:
    """build/sweep/DATE-TIME (UTC) in a checkout, ./tswap-sweep-DATE-TIME
    installed (settings.sh default_out)."""
    stamp = time.strftime('%Y%m%d-%H%M%S', time.gmtime())
    return '%s/build/sweep/%s' % (h.root, stamp) if h.root else '%s/tswap-sweep-%s' % (h.pwd, stamp)


def new_run_dir(h: host.Home, out: str, locks: Locks) -> str:
    """A new run's directory, made with mkdir (atomic) and locked before
    anything is written in it: --out must be new or an empty directory;
    the default dated one gets a suffix (-2, -3, ...) when taken
    (settings.sh new_run_dir). Refusal (exit 2) otherwise, and when the
    default one cannot be made (its parent a file, not writable: --out
    is the way out)."""
    if out:
        run = abspath(out, h.pwd)
        parent = _parent(run)
        try:
            if not os.path.isdir(parent):
                os.makedirs(parent, exist_ok=True)
            os.mkdir(run)
        except OSError as e:
            if not os.path.isdir(run):
                raise Refusal(EXIT_USAGE, '--out %s: cannot create the run directory (%s)'
                              % (run, os.strerror(e.errno or 0))) from None
            # free and empty before the lock (a refusal writes no .lock into
            # a user's directory or a finished run), and once held
            locks.probe_run(run)
            _out_empty(run)
            locks.lock_run(run)
            _out_empty(run)
        return run
    base = default_out(h)
    parent = _parent(base)
    run, n = base, 1
    try:
        if not os.path.isdir(parent):
            os.makedirs(parent, exist_ok=True)
        while True:
            try:
                os.mkdir(run)
                return run
            except FileExistsError:
                n += 1
                if n > 999:
                    raise Refusal(EXIT_ERROR, 'cannot create a run directory %s-N' % base) from None
                run = '%s-%d' % (base, n)
    except OSError as e:
        raise Refusal(EXIT_USAGE, 'cannot create the default run directory in %s (%s): give --out DIR'
                      % (parent, os.strerror(e.errno or 0))) from None


def _write(path: str, text: str) -> None:
    """path through path.tmp and a rename (the shell's printf > .tmp; mv)."""
    with open(path + '.tmp', 'wb') as f:
        f.write(text.encode('utf-8', 'surrogateescape'))
    os.replace(path + '.tmp', path)


def _collected(bg: Background) -> str:
    """The collector's lines as meta.sh handed them on (bash's $(...), then
    <<<: one last newline); Refusal (exit 3) when it failed."""
    r = bg.read('collector')
    if r is None or r[0] != 0:
        raise Refusal(EXIT_ERROR, 'cannot read what the target and this host are'
                      ' (sh lib/meta-collect.sh %s)' % ('did not start' if r is None
                                                        else 'exit status %d' % r[0]))
    return (r[1].replace(b'\0', b'').rstrip(b'\n') + b'\n').decode('utf-8', 'replace')


def latest_link(h: host.Home, run: str) -> None:
    """A checkout's build/sweep/latest pointing at run (ln -sfn, best
    effort)."""
    if not h.root:
        return
    latest = h.root + '/build/sweep/latest'
    try:
        tmp = '%s.tmp.%d' % (latest, os.getpid())
        os.symlink(os.path.basename(run), tmp)
        try:
            os.replace(tmp, latest)
        except OSError:
            os.unlink(tmp)
    except OSError:
        pass


def first_documents(h: host.Home, run: str, v: Mapping[str, Value], kind: str,
                    bg: Background) -> None:
    """run/sweep.json and plan.json (settings.sh save_config: the front
    end's texts, target_kind the check's), the latest symlink of a
    checkout's default run directory, meta.json and sweep.json's "meta"
    (meta.sh write_meta), then a --budget run's "budget" after it
    (settings.sh config_budget)."""
    sj = v['SWEEP_JSON']
    assert isinstance(sj, tuple)
    _write(run + '/sweep.json', '%s"%s"%s\n' % (sj[0], kind, sj[1]))
    _write(run + '/plan.json', '%s\n' % v['PLAN_JSON'])
    if not v.get('OUT'):
        latest_link(h, run)
    ver = tswap_version(h, bg)
    kv = _collected(bg)
    if not meta.write_into(run, str(v['TARGET']), str(v.get('ENGINE') or ''), ver, kv):
        raise Refusal(EXIT_ERROR, 'cannot read what the target and this host are'
                      ' (sh lib/meta-collect.sh: not its output)')
    if len(sj) > 2 and sj[2]:
        with open(run + '/sweep.json', encoding='utf-8', errors='surrogateescape') as f:
            s = f.read().rstrip('\n')
        if s.endswith('\n}'):
            s = s[:-2]
        _write(run + '/sweep.json', '%s,\n%s\n}\n' % (s, sj[2]))


def full_or_raise(run: str) -> None:
    """A write in the run directory failed: when its filesystem has under
    RUN_SPACE_MIN bytes free, the half-written files go and a Refusal
    says so (exit 3, as space.sh run_dir_full_exit did from run.sh's ERR
    trap); otherwise it returns and the caller re-raises. For the set-up
    of a run on this host (setup) and of a fleet run (run_fleet.setup)."""
    from ..executor.base import PROG, RUN_SPACE_MIN, _remove, q, run_dir_free
    free = run_dir_free(run)
    if free is None or free >= RUN_SPACE_MIN:
        return
    r = glob.escape(run)
    for f in glob.glob(r + '/*.tmp') + glob.glob(r + '/points/*.tmp'):
        _remove(f)
    raise Refusal(EXIT_ERROR, 'run directory full: %d bytes free in %s (free space, then: %s --resume %s)'
                  % (free, run, PROG, q(run))) from None


def _targets(v: Mapping[str, Value]) -> tuple[str, ...]:
    t = v.get('TARGETS')
    if isinstance(t, tuple) and t:
        return t
    return (str(v['TARGET']),)


def setup(h: host.Home, v: Mapping[str, Value], bg: Background,
          held: Optional[list[Locks]] = None) -> dict[str, Value]:
    """The set-up of a run on this host from its state v (the declarations
    for run.sh: a new run's, or --resume's), in run.sh's order: the target
    check (it says its warnings; its refusal is the exit status), then
    unless a dry run, the tools and the engine, the targets' locks, the
    run directory and its documents, the runs done earlier. Returns what
    it adds to the state; Refusal on the first problem. held: gets the
    run's Locks (a run in this process: tswap.cli.run_local)."""
    facts = points.facts(str(v['PLAN_TEXT']))
    slots = [(int(float(r)), hd) for r, hd in (x.split('\t') for x in facts[2:])]
    default_dir = os.path.dirname(str(v['DEFAULT_TARGET']))
    checked = targets_check.check(_targets(v), slots, facts[0] == '1', v['DESTRUCTIVE'] == '1',
                                  v['FORCE'] == '1', str(v['SIZE']), int(str(v['SIZE_BYTES'])),
                                  default_dir, 'tswap-sweep')
    if isinstance(checked, int):
        raise SystemExit(checked)
    out: dict[str, Value] = dict(checked)
    if v.get('DRY_RUN') == '1':
        return out
    host.need_tools('fio')
    engine = str(v.get('ENGINE') or '')
    if not os.path.isfile(engine):
        raise Refusal(EXIT_ERROR, 'the tswap engine %s does not exist (run make, or pass'
                      ' --engine)' % engine)
    locks = Locks(os.getpid(), os.geteuid(), os.environ.get('XDG_RUNTIME_DIR', ''))
    kinds = checked['TARGET_KINDS']
    assert isinstance(kinds, tuple)
    locks.targets(_targets(v), kinds, slots)
    if held is not None:
        held.append(locks)
    if not v.get('RESUME'):
        run = new_run_dir(h, str(v.get('OUT') or ''), locks)
    else:
        run = str(v['RUN'])
    try:
        locks.lock_run(run)
        if not v.get('RESUME'):
            first_documents(h, run, v, str(checked['TARGET_KIND']), bg)
        elif not os.path.isfile(run + '/plan.json'):
            # a run made before plan.json: its plan.tsv converted
            from .sweep_start import plan_doc
            _write(run + '/plan.json', plan_doc(str(v['PLAN_TEXT'])) + '\n')
    except OSError:
        full_or_raise(run)
        raise
    out.update(RUN=run, FINISHED=done(run))
    return out


def done(run: str) -> dict[str, str]:
    """The runs done earlier: RUNKEY -> GB/s (pipeline.sh load_done)."""
    d: dict[str, str] = {}
    for line in load_done.entries(run + '/points'):
        k, _, val = line.partition('\t')
        if k:
            d[k] = val
    return d
