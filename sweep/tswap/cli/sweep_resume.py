# SPDX-License-Identifier: GPL-2.0-only
"""--resume DIR: the run's own settings read back from DIR/sweep.json and
its plan from DIR/plan.json (an older run's plan.tsv), checked before
anything runs (docs/sweep.md "Run directory", "--resume"). A fleet run's
hosts come from sweep.json's "fleet" (docs/fleet.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .. import jqjson
from ..plan.deepspeed import release
from ..plan.expand import CEILING_JOBS_MAX, CEILING_QD_MAX
from ..plan.points import damage, parse
from ..plan.values import (EXIT_ERROR, EXIT_USAGE, REPEAT_MAX, SECS_MAX, Refusal, abspath,
                           is_uint, size_to_bytes, usage)
from . import PROG, StageError, read_json
from .sweep_args import Options
from .sweep_host import Home, read_text
from .sweep_start import memlock


@dataclass(frozen=True)
class Resumed:
    """A resumed run's state as the shell's globals (state.sh): values
    (NAME, text) and arrays (NAME, items), in the order set."""
    values: tuple[tuple[str, str], ...]
    arrays: tuple[tuple[str, tuple[str, ...]], ...]


def _alt(v: Any, default: Any) -> Any:
    # jq's `v // default`: null and false fall through
    return default if v is None or v is False else v


def _flag(v: Any) -> str:
    return '0' if v is None or v is False else '1'


def _plan_text(run: str) -> str:
    """The plan lines of the run: its plan.json (checked whole first:
    tswap.plan.points.damage, one line and exit 3), or the
    plan.tsv of a run from before plan.json (pipeline.sh plan_load)."""
    path = run + '/plan.json'
    if not os.path.isfile(path):
        path = run + '/plan.tsv'
        text = read_text(path).rstrip('\n')
        try:
            pts = parse(text)
        except ValueError as e:
            why: Any = str(e)
        else:
            why = damage({'points': pts})
        if why:
            raise Refusal(EXIT_ERROR, '%s: %s (damaged or edited by hand)' % (path, why))
        return text
    try:
        doc = read_json(path, 'plan')
        why = damage(doc)
        if why:
            raise StageError('%s: %s (damaged or edited by hand)' % (path, why))
    except StageError as e:
        raise Refusal(EXIT_ERROR, str(e), PROG) from None
    out = []
    for p in doc['points']:
        f = [p.get(k) for k in ('point', 'kind', 'rw', 'backend', 'tensor', 'block', 'qd', 'submit',
                                'window', 'threads', 'iodepth')]
        ranks = p.get('ranks')
        if isinstance(ranks, float) and ranks > 1:
            f.append(ranks)
        out.append('\t'.join(jqjson.text(x) for x in f))
    return '\n'.join(out)


class _Damaged(Exception):
    """A setting of sweep.json that the run cannot use: (key, rule, value)."""


def _whole(doc: dict[str, Any], key: str, lo: int, hi: int, default: Any = None) -> str:
    """doc[key] (default when absent or null) as the text of a whole
    number from lo to hi: a JSON number, or a string of digits (runtime,
    ramp); _Damaged otherwise. It goes into the run's shell arithmetic:
    nothing else may pass."""
    v = doc.get(key)
    v = default if v is None else v
    if isinstance(v, str) and is_uint(v):
        n = int(v)
    elif isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and \
            abs(v) < 2 ** 62 and v == int(v):
        n = int(v)
    else:
        raise _Damaged(key, 'not a whole number from %d to %d' % (lo, hi), v)
    if not lo <= n <= hi:
        raise _Damaged(key, 'not a whole number from %d to %d' % (lo, hi), v)
    return str(n) if not isinstance(v, str) else v


def _text(doc: dict[str, Any], key: str, allowed: tuple[str, ...] = (), default: Any = None,
          empty: bool = False) -> str:
    """doc[key] (default when absent or null): a string without a newline,
    one of allowed when given, non-empty unless empty; _Damaged otherwise."""
    v = doc.get(key)
    v = default if v is None else v
    if not isinstance(v, str) or '\n' in v or (allowed and v not in allowed) or \
            (not v and not empty):
        rule = 'empty' if v == '' else 'not a text of one line'
        if allowed:
            rule = 'not one of %s' % ', '.join(allowed) if allowed != ('',) else \
                'not empty (with io_size)'
        raise _Damaged(key, rule, v)
    return v


def _settings(o: Options, doc: dict[str, Any], fleet: bool) -> list[tuple[str, str]]:
    """The run's settings of sweep.json, each checked against what a run
    writes there (settings.sh save_config): _Damaged on the first that is
    not (a damaged or hand-edited file must not reach the shell)."""
    io_size = _text(doc, 'io_size', default='', empty=True)
    if io_size and size_to_bytes(io_size) is None:
        raise _Damaged('io_size', 'not a size', io_size)
    size = _text(doc, 'size')
    if size_to_bytes(size) is None:
        raise _Damaged('size', 'not a size', size)
    if io_size:
        # a run of --io-size bytes has no runtime or ramp
        runtime = _text(doc, 'runtime', ('',), '', empty=True)
        ramp = _text(doc, 'ramp', ('',), '', empty=True)
    else:
        runtime, ramp = _whole(doc, 'runtime', 1, SECS_MAX), _whole(doc, 'ramp', 0, SECS_MAX)
    # a fleet's target is each host's (fleet.hosts): "" here
    return [('TARGET', _text(doc, 'target', empty=fleet)), ('SIZE', size),
            ('SIZE_BYTES', _whole(doc, 'size_bytes', 1 << 20, (1 << 62) - 1)),
            ('G_NAME', _text(doc, 'grid')),
            ('G_DESC', jqjson.text(doc.get('grid_description'))), ('RUNTIME', runtime),
            ('RAMP', ramp), ('IO_SIZE', io_size),
            ('REPEAT', _whole(doc, 'repeat', 1, REPEAT_MAX)),
            ('CEILING_QD', _whole(doc, 'ceiling_qd', 1, CEILING_QD_MAX, 64)),
            ('CEILING_JOBS', _whole(doc, 'ceiling_jobs', 0, CEILING_JOBS_MAX, 1)),
            ('ENGINE', o.engine or _text(doc, 'engine')), ('CEILING', _flag(doc.get('ceiling'))),
            ('DS_VERSION', o.ds_version or _text(doc, 'ds_version', default='', empty=True)),
            # runs from before steady state: fixed runtime, no preconditioning
            ('STEADY', _text(doc, 'steady_state', ('on', 'off'), 'off')),
            ('FIXED_RUNTIME', _flag(doc.get('fixed_runtime'))),
            ('PRECONDITION', _text(doc, 'precondition', ('auto', 'on', 'off'), 'off'))]


def _fleet(o: Options, cfg: str, doc: dict[str, Any]) -> Resumed:
    """A fleet run's settings and hosts (once fleet.sh fleet_load_config); the
    fleet options given now win over the saved ones."""
    f = doc.get('fleet') if isinstance(doc.get('fleet'), dict) else {}
    vals = [('FLEET', '1'), ('HOSTS_FILE', jqjson.text(f.get('hosts_file')))]
    for name, given, key in (('OUTLIER_PCT', o.outlier_pct, 'outlier_pct'),
                             ('CONNECT_TIMEOUT', o.connect_timeout, 'connect_timeout'),
                             ('HOST_TIMEOUT', o.host_timeout, 'host_timeout'),
                             ('FIO_WANT', o.fio_want, 'fio_version')):
        if given:
            v = given
        elif name in ('CONNECT_TIMEOUT', 'HOST_TIMEOUT'):
            v = _whole(f, key, 1, 999999999)
        elif name == 'OUTLIER_PCT':
            x = f.get(key)
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 <= x <= 100:
                raise _Damaged('fleet.' + key, 'not a percentage from 0 to 100', x)
            v = jqjson.text(x)
        else:
            v = jqjson.text(f.get(key))
        if name in ('CONNECT_TIMEOUT', 'HOST_TIMEOUT') and v.isdigit():
            v = str(int(v))
        vals.append((name, v))
    hosts = [h for h in (f.get('hosts') or []) if isinstance(h, dict)]
    if not hosts:
        raise Refusal(EXIT_ERROR, '%s: no hosts in the fleet settings' % cfg)
    cols = (('H_ID', 'id'), ('H_LABEL', 'label'), ('H_ADDR', 'address'), ('H_TARGET', 'target'),
            ('H_ENGINE', 'engine'), ('H_OPTS', 'options'))
    # jq's `null + "\u0000"`: a missing field is empty
    arrays = [(name, tuple('\n'.join(map(jqjson.text, h.get(k) or [])) if k == 'options'
                           else '' if h.get(k) is None else jqjson.text(h.get(k))
                           for h in hosts)) for name, k in cols]
    return Resumed(tuple(vals), tuple(arrays))


def _workload(o: Options, cfg: str, doc: dict[str, Any], plan: str) -> str:
    """The run's workload, tensor or checkpoint: sweep.json's "workload",
    or for a run from before the key what its plan measures (checkpoint
    points: checkpoint; else tensor). Refusal when the key is damaged or
    says otherwise than the plan, or when --ds-version given now has no
    checkpoint writer for a checkpoint run (as for a new one)."""
    ckpt = '\tcheckpoint\t' in '\n' + plan
    try:
        w = _text(doc, 'workload', ('tensor', 'checkpoint'), 'checkpoint' if ckpt else 'tensor')
    except _Damaged as d:
        key, rule, v = d.args
        raise Refusal(EXIT_ERROR, '%s: %s: %s: %s (damaged or edited by hand)'
                      % (cfg, key, rule, jqjson.dumps(v, compact=True)[:120])) from None
    if (w == 'checkpoint') != ckpt:
        raise Refusal(EXIT_ERROR, '%s: workload: %s, but the plan has %s (damaged or edited by'
                      ' hand)' % (cfg, w, 'checkpoint points' if ckpt else 'no checkpoint point'))
    if ckpt and o.ds_version and not release(o.ds_version).checkpoint_writer:
        raise usage('--ds-version %s: a checkpoint run (--workload checkpoint), and DeepSpeed %s'
                    ' has no FastFileWriter (from 0.17.1)' % (o.ds_version, o.ds_version))
    return w


def load(h: Home, o: Options) -> Resumed:
    """The settings of the run in --resume's directory (settings.sh
    load_config): exit 2 when it is not a run directory, 3 when
    sweep.json does not parse or lacks a setting, or plan.json is
    damaged. --engine and --ds-version given now win. A checkpoint run
    this user cannot lock the buffers of: exit 3 (sweep_start.memlock)."""
    run = abspath(o.resume, h.pwd)
    cfg = run + '/sweep.json'
    if not os.path.isfile(cfg) or not (os.path.isfile(run + '/plan.json')
                                       or os.path.isfile(run + '/plan.tsv')):
        raise Refusal(EXIT_USAGE, '%s is not a tswap-sweep run directory (no sweep.json/plan.tsv)'
                      % run)
    try:
        text = read_text(cfg)
        # an empty file is no document, as jq reads it: no settings
        doc = jqjson.loads(text) if text.strip() else {}
    except (OSError, ValueError):
        doc = None
    if doc is None or doc is False:
        raise Refusal(EXIT_ERROR, '%s does not parse' % cfg)
    missing = Refusal(EXIT_ERROR, '%s: settings missing' % cfg)
    if not isinstance(doc, dict) or not text.strip():
        raise missing
    targets = _alt(doc.get('targets'), [doc.get('target')])
    if not isinstance(targets, list) or not targets:
        raise missing
    fleet = _flag(doc.get('fleet')) == '1'
    try:
        for x in targets:
            if not isinstance(x, str) or '\n' in x or not (x or fleet):
                raise _Damaged('targets', 'not a list of paths', targets)
        vals = [('RUN', run)] + _settings(o, doc, fleet)
    except _Damaged as d:
        key, rule, v = d.args
        raise Refusal(EXIT_ERROR, '%s: %s: %s: %s (damaged or edited by hand)'
                      % (cfg, key, rule, jqjson.dumps(v, compact=True)[:120])) from None
    arrays = [('TARGETS', tuple(targets))]
    plan = _plan_text(run)
    work = _workload(o, cfg, doc, plan)
    vals += [('PLAN_TEXT', plan), ('WORKLOAD', work)]
    # the points still to run lock their buffers as a new run's do
    if work == 'checkpoint' and not fleet and not o.dry_run:
        memlock(plan, int(dict(vals)['SIZE_BYTES']))
    res = Resumed(tuple(vals), tuple(arrays))
    if fleet:
        try:
            fl = _fleet(o, cfg, doc)
        except _Damaged as d:
            key, rule, v = d.args
            raise Refusal(EXIT_ERROR, '%s: %s: %s: %s (damaged or edited by hand)'
                          % (cfg, key, rule, jqjson.dumps(v, compact=True)[:120])) from None
        res = Resumed(res.values + fl.values, res.arrays + fl.arrays)
    if budget_run(doc):
        raise Refusal(EXIT_USAGE, '--resume: %s is a --budget run: its rounds were planned for one'
                      ' run\'s wall time and cannot be finished later; start a new run with'
                      ' --budget' % run)
    return res


def budget_run(doc: dict[str, Any]) -> bool:
    """True for a --budget run's sweep.json (budget.seconds set): its
    rounds were planned for one run's wall time, so it cannot be resumed
    (docs/sweep.md "Budget"). A budget that is not an object is none, as
    jq -e '.budget.seconds != null' failing on it said."""
    b = doc.get('budget')
    return isinstance(b, dict) and b.get('seconds') is not None
