# SPDX-License-Identifier: GPL-2.0-only
"""The rest of a new run's setup before anything is checked or written:
its budget (the default rule, the refusals of --budget: docs/sweep.md
"Budget: successive halving"; tswap.plan.budget_start), and the run
directory's first documents, sweep.json (tswap.plan.config) and
plan.json, which run.sh writes as they are once the run directory is
made (settings.sh save_config)."""

from __future__ import annotations

import os
import resource
import time
from typing import Any, Optional, Union

from .. import jqjson
from ..plan import budget_start as bs
from ..plan import checkpoint, points
from ..plan.config import Settings, sweep_json
from ..plan.values import usage
from .sweep_setup import Run, warn

Value = Union[str, tuple[str, ...]]

# the device ceiling's block size and steady state's criterion and window
# (state.sh CEILING_BS, SS_CRIT, SS_DUR)
CEILING_BS = '1m'
SS_CRIT = 'bw_slope:2%'


def budget(run: Run, given: str, exhaustive: bool, fleet: bool, t0: str) -> tuple[str, bool]:
    """The run's budget (s, "" for none) and whether the default rule set
    it (said on stderr then), or Refusal: --budget with --hosts or
    --io-size, or a budget too small to run round 1 once (budget.sh
    budget_setup). t0: the sweep's start ($EPOCHREALTIME), the budget's
    clock."""
    nlines = sum(1 for line in run.plan if line)
    plan_text = '\n'.join(run.plan)
    if not given:
        if exhaustive or fleet or run.io_size:
            return '', False
        runtime, ramp, repeat = int(run.runtime), int(run.ramp), int(run.repeat)
        runs, est = bs.auto_estimate(nlines, repeat, runtime, ramp)
        if est <= bs.AUTO_OVER:
            return '', False
        first = bs.first_plan(points.parse(plan_text), 0, run.steady, ramp, runtime, repeat)
        b = bs.auto_seconds(first, bs.reserve(nlines))
        warn(bs.auto_note(run.grid.name, runs, runtime + ramp + bs.OVER_EST, est, b))
        return str(b), True
    if fleet:
        raise usage('--budget: not in fleet mode (--hosts): each point runs on every host')
    if run.io_size:
        raise usage('--budget sets the runtime of each round: it takes no --io-size')
    reserve = bs.reserve(nlines)
    ramp = int(run.ramp or 0)
    first = bs.first_plan(points.parse(plan_text), int(given) - reserve, run.steady, ramp,
                          int(run.runtime), int(run.repeat))
    if first.get('fits') is True:
        return given, False
    elapsed = float(jqjson.fixed(time.time() - float(t0), 1))
    raise usage(bs.too_small(int(given), first, reserve, bs.spent(elapsed), run.ceiling))


def memlock(plan_text: str, size_bytes: int) -> None:
    """Refusal when this user cannot lock a checkpoint point's buffer
    (tswap.plan.checkpoint.memlock_check): RLIMIT_MEMLOCK's soft limit,
    CAP_IPC_LOCK from /proc/self/status CapEff (bit 14; fio inherits
    both), the page size."""
    soft = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]
    try:
        with open('/proc/self/status', encoding='ascii', errors='replace') as f:
            cap = next((int(x.split()[1], 16) for x in f if x.startswith('CapEff:')), 0)
    except (OSError, ValueError, IndexError):
        cap = 0
    checkpoint.memlock_check(tuple(plan_text.split('\n')), size_bytes,
                             None if soft == resource.RLIM_INFINITY else soft, bool(cap >> 14 & 1),
                             os.sysconf('SC_PAGESIZE'))


def _num(v: Value) -> float:
    assert isinstance(v, str)
    return float(jqjson.loads(v))


def sweep_doc(v: dict[str, Value], fio: Optional[str], fleet: Optional[dict[str, Any]],
              budget_s: str, budget_auto: bool) -> tuple[str, str, str]:
    """sweep.json's text from the run's globals v (as handed to run.sh),
    split where target_kind's value goes: the target check (ranks.sh
    check_targets) tells it; and its "budget" member's text ("" without
    a budget), which follows the "meta" that the run adds before it
    (settings.sh config_budget). fio: fio --version here (None:
    "unknown"); fleet: its part (created: now, host, kernel: this
    machine's). Refusal first when this host cannot lock a checkpoint
    point's buffer (memlock)."""
    def s(name: str, default: str = '') -> str:
        x = v.get(name, default)
        assert isinstance(x, str)
        return x

    if fleet is None and s('WORKLOAD') == 'checkpoint':
        memlock(s('PLAN_TEXT'), int(_num(v['SIZE_BYTES'])))
    doc = sweep_json(Settings(
        target=s('TARGET'), target_kind='', size=s('SIZE'), size_bytes=_num(v['SIZE_BYTES']),
        grid=s('G_NAME'), grid_desc=s('G_DESC'), runtime=s('RUNTIME'), ramp=s('RAMP'),
        io_size=s('IO_SIZE'), repeat=_num(v['REPEAT']), engine=s('ENGINE'),
        ceiling=_num(v['CEILING']), ceiling_bs=CEILING_BS, ceiling_qd=_num(v['CEILING_QD']),
        ceiling_jobs=_num(v['CEILING_JOBS']), ds_version=s('DS_VERSION'), steady=s('STEADY'),
        fixed_runtime=_num(v['FIXED_RUNTIME']), ss_crit=SS_CRIT, ss_dur=float(bs.SS_DUR),
        precondition=s('PRECONDITION', 'auto'),
        created=time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()), host=os.uname().nodename,
        kernel=os.uname().release, fio='unknown' if fio is None else fio,
        targets=list(v.get('TARGETS') or (s('TARGET'),)), fleet=fleet, workload=s('WORKLOAD', 'tensor')))
    member = ''
    if budget_s:
        b = {'seconds': float(budget_s), 'chosen_by_default': budget_auto,
                         'method': 'successive halving',
                         'keep': 'half per direction: the fastest, then the points tied with it'
                                 ' within the noise of the round (one tensor op + 5%) cheapest'
                                 ' first, then by GB/s',
                         'final_repeats_at_most': float(max(int(s('REPEAT')), bs.REPEAT))}
        # '  "budget": {...}', as jq prints it inside sweep.json
        member = jqjson.dumps({'budget': b})[2:-2]
    head, tail = jqjson.dumps(doc).split('"target_kind": ""', 1)
    return head + '"target_kind": ', tail, member


def plan_doc(plan_text: str) -> str:
    """plan.json's text (without its last newline): {points: [...]}
    (tswap.plan.points; pipeline.sh plan_doc)."""
    return jqjson.dumps({'points': points.parse(plan_text)})
