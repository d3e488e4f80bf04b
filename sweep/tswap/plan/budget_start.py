# SPDX-License-Identifier: GPL-2.0-only
"""A new run's budget, decided before anything runs (docs/sweep.md
"Budget: successive halving"): the default rule (a grid whose exhaustive
run would take longer than AUTO_OVER s runs with a budget), the first
plan of the rounds (tswap.plan.budget), and the refusal of a budget too
small to run round 1 once. The rounds themselves: tswap.stats.budget_run
and tswap.cli.budget_run (tswap.cli.run_local runs their points).
"""

from __future__ import annotations

import math
from typing import Any, Optional

from .. import jqjson
from .budget import BudgetInput, plan
from .points import Point
from .values import fmt_secs

# seconds of fio start-up a run is estimated to cost (fio's start, the
# engine's buffers, a read's sync, job file and result.json)
OVER_EST = 1
# seconds kept for the outputs, plus 0.02 s a plan line
RESERVE = 5
# the outputs cost about this many times the sweep's own work per run
RESERVE_RUNS = 10
# the final round's repeats at least
REPEAT = 3
# a grid whose exhaustive run would take longer (s) runs with a budget
AUTO_OVER = 3600
# the final round's runtime floor (s; at most the grid's runtime)
FINAL_MIN = 5
# fio's steady-state window (s, one sample a second: steady.sh SS_DUR)
SS_DUR = 5


def reserve(nlines: int, sweep_s: float = 0) -> int:
    """Seconds kept for the outputs after the runs: RESERVE + 0.02 s per
    plan line, or RESERVE_RUNS x the sweep's own seconds per run when
    more, rounded up (tswap.cli.budget_run; sweep_s is 0 before a
    round measured it)."""
    return math.floor(max(RESERVE + 0.02 * nlines, RESERVE_RUNS * sweep_s) + 0.999)


def steady_window(points: list[Point], steady: bool, ramp: int) -> Optional[int]:
    """The runtime (s) a final-round run needs for fio's steady-state
    detection after a ramp s ramp_time (ramp + 1 s, SS_DUR samples, one
    more: steady.sh steady_window_at), or None when no final-round run
    would use it (steady state off, or only points of several handles)."""
    if not steady or not any(p['kind'] == 'tswap' and p['rw'] != 'readwrite'
                             and (p.get('ranks') or 1) == 1 for p in points):
        return None
    return ramp + SS_DUR + 2


def plan_at(points: list[Point], left: float, steady: bool, ramp: float, runtime: float,
            repeat: int, over: float = OVER_EST, first: float = 0,
            shape: Optional[list[dict[str, Any]]] = None) -> dict[str, Any]:
    """The rounds fitted into left seconds at over s of start-up a run
    (formerly budget.sh budget_plan): a new plan from the points' pick
    groups and ceilings, or with shape (the rounds still to run) a re-plan
    after `first` rounds. The final round's floor is the steady-state
    window when there is one (steady_window) and above FINAL_MIN; when
    that does not fit, the plan at the FINAL_MIN floor, plus
    steady_window, steady_floor_s and below_steady."""
    groups: Optional[dict[str, float]] = None
    nceil = 0.0
    if shape is None:
        groups = {}
        for p in sorted((p for p in points if p['kind'] == 'tswap'), key=lambda p: p['ckey']):
            groups[p['ckey']] = groups.get(p['ckey'], 0.0) + 1
        nceil = float(sum(1 for p in points if p['kind'] == 'ceiling'))

    def at(floor: float) -> dict[str, Any]:
        return plan(BudgetInput(left=float(left), ramp=float(ramp), over=float(over),
                                tmax=float(runtime), reps=float(max(repeat, REPEAT)),
                                floor=floor, first=float(first), groups=groups, shape=shape,
                                ceilings=nceil))

    w = steady_window(points, steady, int(ramp))
    if w is not None and w > FINAL_MIN:
        p = at(float(w))
        if p.get('below_floor') is not True:
            return p
        below = at(float(FINAL_MIN))
        rounds = below.get('rounds') or []
        last = rounds[-1].get('runtime') if rounds else None
        last = 0 if last is None or last is False else last
        return {**below, 'steady_window': w, 'steady_floor_s': p['floor_s'],
                'below_steady': last < w}
    return at(float(FINAL_MIN))


def first_plan(points: list[Point], left: float, steady: bool, ramp: int, runtime: int,
               repeat: int) -> dict[str, Any]:
    """The rounds of a new plan fitted into left seconds at OVER_EST s of
    start-up a run (plan_at)."""
    return plan_at(points, left, steady, ramp, runtime, repeat)


def auto_estimate(nlines: int, repeat: int, runtime: int, ramp: int) -> tuple[int, int]:
    """(runs, seconds) of an exhaustive run: every plan line repeat
    times, each ramp + runtime + OVER_EST s."""
    runs = nlines * repeat
    return runs, runs * (runtime + ramp + OVER_EST)


def auto_seconds(first: dict[str, Any], reserve_s: int) -> int:
    """The default budget: 1.5 x the budget that gives the final round
    its floor (the steady-state window's when there is one), plus the
    outputs' reserve, and at least AUTO_OVER s (once budget.sh budget_setup)."""
    v = first.get('steady_floor_s')
    v = first['floor_s'] if v is None or v is False else v
    m = math.ceil(v)
    return max((m * 3 + 1) // 2 + reserve_s, AUTO_OVER)


def auto_note(grid: str, runs: int, per: int, est: int, budget: int) -> str:
    """The note on stderr when the default rule sets the budget."""
    return ('note: grid %s is %d fio run(s) of about %d s, about %s exhaustively: running it with'
            ' --budget %d (successive halving, docs/sweep.md "Budget"); --exhaustive runs every'
            ' point' % (grid, runs, per, fmt_secs(est), budget))


def spent(elapsed: float) -> int:
    """Whole seconds of the budget's clock taken before the runs: the
    time so far (to 0.1 s) and 1 s more, rounded up (the script's start
    is on the budget's clock too)."""
    return math.floor(float(jqjson.fixed(elapsed, 1)) + 1.999)


def too_small(budget: int, first: dict[str, Any], reserve_s: int, spent_s: int,
              ceiling: bool) -> str:
    """Why a budget whose first plan does not fit is refused: the budget
    that runs round 1 once (every point, and ceiling, once at 1 s) and
    the one that gives the final round its floor."""
    need = math.ceil(first['min_s']) + reserve_s + spent_s
    floor = math.ceil(first['floor_s']) + reserve_s + spent_s
    what = 'every point and ceiling' if ceiling else 'every point'
    return ('--budget %d: too small to run round 1 once (%s once at 1 s, about %d s of fio'
            ' start-up each, and the outputs): at least %d s, plus the target\'s preparation;'
            ' %d s gives the final round its %s s runtime'
            % (budget, what, OVER_EST, need, floor, jqjson.text(first['final_floor'])))
