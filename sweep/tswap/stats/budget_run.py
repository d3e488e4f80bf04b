# SPDX-License-Identifier: GPL-2.0-only
"""A --budget run between its rounds (docs/sweep.md "Budget: successive
halving"): the budget's clock in the figures it prints, the plan fitted
to the seconds left and what is said when it falls short, what
budget.json keeps of a plan, what each pick group keeps for the next
round, and the progress lines. Pure: the seconds are given
(tswap.cli.budget_run reads the clock). The rules were budget.sh's and
budget-run.sh's, in jq; each figure is printed as jq printed it.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

from ..jqjson import fixed, text

Doc = dict[str, Any]
# a message: ('warn' | 'note' | 'say', its text)
Msg = tuple[str, str]


def _trunc(x: float) -> float:
    """C's trunc (jq's): toward zero, keeping the sign of a zero."""
    return math.copysign(float(math.trunc(x)), x)


def elapsed(t0: float, now: float) -> float:
    """Seconds since the script started (t0, now: epoch seconds), to 0.1 s
    (budget.sh budget_elapsed)."""
    return float(fixed(now - t0, 1))


def left(budget: float, spent: float, reserve: float) -> float:
    """Whole seconds of the budget left for runs after spent s and the
    outputs' reserve, possibly negative (budget.sh budget_left)."""
    return float(fixed(_trunc(budget - spent - reserve), 0))


def unspent(budget: float, t0: float, now: float) -> str:
    """Whole seconds of the budget not spent yet, no reserve kept: the
    progress line's "s left" (budget.sh budget_unspent)."""
    return fixed(_trunc(budget - elapsed(t0, now)), 0)


def brief(plan: Doc) -> Doc:
    """What budget.json keeps of a plan (the first, and each re-plan):
    the seconds left for runs, the start-up per run, the seconds planned
    (<= left_s unless fits is false), and the rounds."""
    out = {k: plan.get(k) for k in ('left_s', 'overhead_s', 'planned_s', 'fits', 'below_floor')}
    out['rounds'] = [{k: r.get(k) for k in ('final', 'runtime', 'ramp', 'repeats', 'runs',
                                            'planned_s')} for r in plan.get('rounds') or []]
    return out


def _truthy(v: Any) -> bool:
    return v is not None and v is not False


def below(plan: Doc) -> bool:
    """The plan's final round is below its floor or fio's steady-state
    window."""
    return _truthy(plan.get('below_floor')) or _truthy(plan.get('below_steady'))


def floor_text(plan: Doc, left_s: float, reps: int, reserve: float, spent: float) -> str:
    """What the final round of plan gets against its floor (reps repeats
    of final_floor s) and the steady-state window, in words, with the
    budget that gives it each (spent s so far, the plan's rounds, the
    outputs' reserve)."""
    f = (plan.get('rounds') or [{}])[-1]
    w = None
    if _truthy(plan.get('steady_window')):
        w = ("fio's steady-state window of %s s (a shorter final run is fixed and ranks each"
             " point's first seconds, such as a write cache's burst; no point can be flagged not"
             " steady)" % text(plan['steady_window']))
    head = 'the final round runs %s repeat(s) of %s s, below ' % (text(f.get('repeats')),
                                                              text(f.get('runtime')))

    def need(s: str) -> str:
        return text(math.ceil(plan[s] + reserve + spent))
    if _truthy(plan.get('below_floor')):
        out = (head + 'its floor of %d x %s s: the %s s left for runs give it no more; with the'
               ' first round still to run at 1 s it needs a budget of about %s s, the outputs'
               ' included' % (reps, text(plan.get('final_floor')), text(left_s), need('floor_s')))
        if w:
            out += ', and about %s s for %s' % (need('steady_floor_s'), w)
        return out
    return (head + '%s: with the first round still to run at 1 s it needs a budget of about %s s'
            ' for the window, the outputs included' % (text(w), need('steady_floor_s')))


def fitted(plan_for: Callable[[float], Doc], left_s: float, budget: str, reps: int,
           reserve: float, spent: float) -> tuple[Doc, list[Msg]]:
    """The plan for the seconds left now (plan_for(left) makes one),
    with left_s; below its minimum (the target's preparation, or a round,
    took longer than planned) the plan made at the minimum, fits kept
    false, and a warning: the run will end late. A final round below its
    floor or the steady-state window is said. budget: --budget as given."""
    plan = plan_for(left_s)
    fits = plan.get('fits')
    msgs: list[Msg] = []
    if fits is not True:
        m = text(plan.get('min_s'))
        msgs += [('warn', 'budget %s s: %s s left for the runs, below the %s s of one round at 1 s:'
                  ' running that until a run would end past the budget' % (budget, text(left_s), m)),
                 ('note', 'budget: %s s were left for the runs, below the %s s of one round at 1 s:'
                  ' it ran at its minimum, until a run would end past the budget'
                  % (text(left_s), m))]
        plan = plan_for(float(math.ceil(plan['min_s'])))
    elif below(plan):
        m = floor_text(plan, left_s, reps, reserve, spent)
        msgs += [('warn', 'budget %s s: %s' % (budget, m)), ('note', 'budget: ' + m)]
    return dict(plan, left_s=left_s, fits=fits), msgs


def keep(groups: Doc, rounds: list[Doc]) -> Doc:
    """What each pick group of a round that ran keeps: its count in the
    first round still to run that has it, else all it had."""
    out = {}
    for k, v in groups.items():
        n = next((r['groups'][k] for r in rounds if k in (r.get('groups') or {})), None)
        out[k] = v if n is None or n is False else n
    return out


def round_head(n: int, total: int, runs: int, spec: Doc, budget: str, left_s: float) -> str:
    """A round's progress line."""
    return ('round %d/%d: %d point(s) x %s repeat(s), runtime %s s, ramp %s s (planned %s s;'
            ' budget %s s: %s s left for runs)' % (
                n, total, runs, text(spec.get('repeats')), text(spec.get('runtime')),
                text(spec.get('ramp')), text(spec.get('planned_s')), budget, text(left_s)))


def pruned_line(n: int, prune: Doc, left_s: float) -> str:
    """The line after a pruning round."""
    return 'round %d: pruned %d point(s), %d go on; %s s left for runs' % (
        n, len(prune['pruned']), len(prune['kept']), text(left_s))


def dry_run_lines(plan: Doc, budget: str, left_s: float, reps: int, reserve: float,
                  spent: float) -> list[str]:
    """--dry-run's lines of a --budget run: the rounds as planned now
    (runs, runtime, ramp, seconds) and the number of fio runs."""
    out = ['budget %s s: successive halving; the rounds as planned now (re-planned after each'
           ' round with the measured fio start-up cost):' % budget]
    for i, r in enumerate(plan.get('rounds') or []):
        g = ', '.join('%s %s' % (k, text(v)) for k, v in (r.get('groups') or {}).items())
        c = r.get('ceilings')
        ceil = ' + %s ceiling(s)' % text(c) if isinstance(c, (int, float)) \
            and not isinstance(c, bool) and c > 0 else ''
        out.append('  round %d%s: %s%s, %s repeat(s), %s run(s), runtime %s s, ramp %s s:'
                   ' about %s s' % (i + 1, ' (final)' if _truthy(r.get('final')) else '', g, ceil,
                                    text(r.get('repeats')), text(r.get('runs')),
                                    text(r.get('runtime')), text(r.get('ramp')),
                                    text(r.get('planned_s'))))
    runs = [r.get('runs') for r in plan.get('rounds') or []]
    total: Optional[float] = sum(runs) if runs else None
    out.append('  %s fio run(s), about %s s of the %s s left for runs' % (
        text(total if total is not None else 0), text(plan.get('planned_s')), text(left_s)))
    if below(plan):
        out.append('  ' + floor_text(plan, left_s, reps, reserve, spent))
    return out
