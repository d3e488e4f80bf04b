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
from ..plan.points import damage
from ..plan.values import EXIT_ERROR, EXIT_USAGE, Refusal, abspath
from . import PROG, StageError, read_json
from .sweep_args import Options
from .sweep_host import Home, read_text


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
    """The plan lines of the run: its plan.json (checked whole first: one
    line and exit 3 as `python3 -m tswap plan --check` says it), or the
    plan.tsv of a run from before plan.json (pipeline.sh plan_load)."""
    path = run + '/plan.json'
    if not os.path.isfile(path):
        return read_text(run + '/plan.tsv').rstrip('\n')
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


def _fleet(o: Options, cfg: str, doc: dict[str, Any]) -> Resumed:
    """A fleet run's settings and hosts (fleet.sh fleet_load_config); the
    fleet options given now win over the saved ones."""
    f = doc.get('fleet') if isinstance(doc.get('fleet'), dict) else {}
    vals = [('FLEET', '1'), ('HOSTS_FILE', jqjson.text(f.get('hosts_file')))]
    for name, given, key in (('OUTLIER_PCT', o.outlier_pct, 'outlier_pct'),
                             ('CONNECT_TIMEOUT', o.connect_timeout, 'connect_timeout'),
                             ('HOST_TIMEOUT', o.host_timeout, 'host_timeout'),
                             ('FIO_WANT', o.fio_want, 'fio_version')):
        v = given or jqjson.text(f.get(key))
        if name in ('CONNECT_TIMEOUT', 'HOST_TIMEOUT') and v.isdigit():
            v = str(int(v))
        vals.append((name, v))
    hosts = [h for h in (f.get('hosts') or []) if isinstance(h, dict)]
    if not hosts:
        raise Refusal(EXIT_ERROR, '%s: no hosts in the fleet settings' % cfg)
    cols = (('H_ID', 'id'), ('H_LABEL', 'label'), ('H_ADDR', 'address'), ('H_TARGET', 'target'),
            ('H_ENGINE', 'engine'), ('H_OPTS', 'options'), ('H_WHERE', 'where'))
    # jq's `null + "\u0000"`: a missing field is empty
    arrays = [(name, tuple('\n'.join(map(jqjson.text, h.get(k) or [])) if k == 'options'
                           else '' if h.get(k) is None else jqjson.text(h.get(k))
                           for h in hosts)) for name, k in cols]
    arrays.append(('H_LOST', ('',) * len(hosts)))
    return Resumed(tuple(vals), tuple(arrays))


def load(h: Home, o: Options) -> Resumed:
    """The settings of the run in --resume's directory (settings.sh
    load_config): exit 2 when it is not a run directory, 3 when
    sweep.json does not parse or lacks a setting, or plan.json is
    damaged. --engine and --ds-version given now win."""
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
    t = jqjson.text
    vals = [('RUN', run), ('TARGET', t(doc.get('target'))), ('SIZE', t(doc.get('size'))),
            ('SIZE_BYTES', t(doc.get('size_bytes'))), ('G_NAME', t(doc.get('grid'))),
            ('G_DESC', t(doc.get('grid_description'))), ('RUNTIME', t(doc.get('runtime'))),
            ('RAMP', t(doc.get('ramp'))), ('IO_SIZE', t(doc.get('io_size'))),
            ('REPEAT', t(doc.get('repeat'))),
            ('CEILING_QD', t(_alt(doc.get('ceiling_qd'), 64.0))),
            ('CEILING_JOBS', t(_alt(doc.get('ceiling_jobs'), 1.0))),
            ('ENGINE', o.engine or t(doc.get('engine'))), ('CEILING', _flag(doc.get('ceiling'))),
            ('DS_VERSION', o.ds_version or t(_alt(doc.get('ds_version'), ''))),
            # runs from before steady state: fixed runtime, no preconditioning
            ('STEADY', t(_alt(doc.get('steady_state'), 'off'))),
            ('FIXED_RUNTIME', _flag(doc.get('fixed_runtime'))),
            ('PRECONDITION', t(_alt(doc.get('precondition'), 'off')))]
    arrays = [('TARGETS', tuple(t(x) for x in targets))]
    vals.append(('PLAN_TEXT', _plan_text(run)))
    if _flag(doc.get('fleet')) == '1':
        fl = _fleet(o, cfg, doc)
        return Resumed(tuple(vals) + fl.values, tuple(arrays) + fl.arrays)
    return Resumed(tuple(vals), tuple(arrays))
