# SPDX-License-Identifier: GPL-2.0-only
"""The rounds of a --budget run: successive halving fitted into the
seconds left (docs/sweep.md "Budget: successive halving").

Halving: a pick group of N points (a direction at one rank count) keeps
ceil(N/2) per round until 2 or fewer are left; those (the pick and its
runner-up) are the final round, measured with `reps` repeats. A group
already down to its final size sits out the later pruning rounds.

The final round is reserved first: the pick is made from its runs only,
so its runtime is the longest from tmax down to the floor for which it
and the first round at 1 s fit. The pruning rounds get what is left: the
second round is dropped (the round before prunes harder), again, until
they fit at 1 s per run; then their runtimes double from round to round
(successive halving's resource rule), at most the final round's. Only
when not even the floor fits does the old rule apply (below_floor): the
whole schedule at 1 s per run, dropping rounds, then fewer final repeats
(3, 2, 1), then one round of every point once (no pruning), the final
runtime from what is left.

A round is a dict as budget.json keeps it: final, groups ({CKEY: N}),
ceilings (runs), and once planned: repeats, ramp, runtime (s), runs,
overhead_s, planned_s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

Round = dict[str, Any]


@dataclass(frozen=True)
class BudgetInput:
    """What a plan is fitted to. groups: {CKEY: tswap points} for a new
    plan, or None with shape: the rounds still to run (a re-plan after a
    round); ceilings: ceiling runs, run once in the final round; left:
    seconds for the fio runs (budget - spent - the outputs' reserve);
    ramp: the grid's ramp (s), the final round's (pruning rounds ramp
    min(ramp, 1) s); over: seconds per run beyond ramp + runtime (fio's
    start-up, the job file, a read's sync, the result stage: estimated,
    then measured); tmax: the longest runtime of a round (s); reps: the
    final round's repeats; floor: the final round's runtime floor (s,
    budget_start.FINAL_MIN, capped by tmax); first: rounds already run."""
    left: float
    ramp: float
    over: float
    tmax: float
    reps: float
    floor: float
    first: float = 0
    groups: Optional[dict[str, float]] = None
    shape: Optional[list[Round]] = None
    ceilings: float = 0


def halving(n: float) -> list[float]:
    """The points a group keeps, round by round: n, ceil(n/2), ... down to
    2 or fewer."""
    out = [n]
    while n > 2:
        n = float(math.floor((n + 1) / 2))
        out.append(n)
    return out


def _r1(x: float) -> float:
    return _round(x * 10) / 10


def _round(x: float) -> float:
    a = abs(x)
    f = math.floor(a)
    return math.copysign(f + 1 if a - f >= 0.5 else f, x)


class _Plan:
    """plan()'s functions over one BudgetInput (pure: nothing kept
    between calls of plan())."""

    def __init__(self, b: BudgetInput) -> None:
        self.b = b

    def rramp(self, r: Round) -> float:
        # the final round ramps like an exhaustive point; a pruning round,
        # or the one round of once, ramps at most 1 s
        if r.get('final') and not r.get('once'):
            return self.b.ramp
        return min(self.b.ramp, 1)

    def runs(self, r: Round, reps: float) -> float:
        g = r.get('groups') or {}
        n = sum(g.values()) if g else 0
        return n * (reps if r.get('final') else 1) + (r.get('ceilings') or 0)

    def rcost(self, r: Round, reps: float, t: float) -> float:
        return self.runs(r, reps) * (t + self.rramp(r) + self.b.over)

    def mincost(self, s: list[Round], reps: float) -> float:
        return sum(self.rcost(r, reps, 1) for r in s) if s else 0

    def shape(self) -> list[Round]:
        g = [(k, halving(v)) for k, v in (self.b.groups or {}).items()]
        rounds = max(len(s) for _, s in g)
        out = []
        for k in range(rounds):
            final = k == rounds - 1
            groups = {}
            for key, s in g:
                if final:
                    groups[key] = s[-1]
                elif k < len(s) - 1:
                    groups[key] = s[k]
            out.append({'final': final, 'groups': groups,
                        'ceilings': self.b.ceilings if final else 0})
        return out

    def once(self, s: list[Round]) -> list[Round]:
        # one round of every point once: the last resort and the minimum
        merged: dict[str, float] = {}
        for r in s:
            for k, v in (r.get('groups') or {}).items():
                merged[k] = max(merged[k], v) if k in merged else v
        r0 = dict(s[0])
        r0.update({'final': True, 'once': True,
                   'ceilings': sum(r.get('ceilings') or 0 for r in s),
                   'groups': dict(sorted(merged.items()))})
        return [r0]

    def fit(self, s: list[Round], reps: float) -> Optional[tuple[list[Round], float]]:
        while True:
            if self.mincost(s, reps) <= self.b.left:
                return s, reps
            if len(s) > 2:
                s = s[:1] + s[2:]
            elif reps > 1:
                reps -= 1
            elif len(s) <= 2 and not s[0].get('once'):
                s, reps = self.once(s), 1
            else:
                return None

    def fitpre(self, p: list[Round], lim: float) -> Optional[list[Round]]:
        while True:
            if self.mincost(p, 1) <= lim:
                return p
            if len(p) > 1:
                p = p[:1] + p[2:]
            else:
                return None

    @staticmethod
    def lastok(a: float, b: float, ok: Callable[[float], bool]) -> Optional[float]:
        """The last of a, a+1, ... below b for which ok holds, by bisection
        (ok holds up to some value, not after: costs grow with the
        runtime); None when not even a does. A scan would spin for a
        runtime of days."""
        n = math.ceil(b - a)
        if n < 1 or not ok(a):
            return None
        lo, hi = 0, n - 1
        while lo < hi:
            m = (lo + hi + 1) // 2
            if ok(a + m):
                lo = m
            else:
                hi = m - 1
        return a + lo

    def times(self, s: list[Round], x: float, cap: float) -> list[float]:
        # round i runs x * 2^i s (whole seconds, 1 to cap): as the points
        # halve the runtime doubles, so each round costs about the same
        return [max(min(float(math.floor(x * 2.0 ** (i + self.b.first))), cap), 1)
                for i in range(len(s))]

    def cost(self, s: list[Round], reps: float, t: list[float]) -> float:
        return sum(self.rcost(s[i], reps, t[i]) for i in range(len(s))) if s else 0

    def bestx(self, s: list[Round], reps: float, lim: float, cap: float) -> float:
        x = self.lastok(1, cap * 8 + 1,
                        lambda v: self.cost(s, reps, self.times(s, v / 8, cap)) <= lim)
        return (x if x is not None else 1) / 8

    def spec(self, s: list[Round], reps: float, t: list[float]) -> list[Round]:
        out = []
        for i, r in enumerate(s):
            x = dict(r)
            x.update({'repeats': reps if r.get('final') else 1, 'ramp': self.rramp(r),
                      'runtime': t[i], 'runs': self.runs(r, reps), 'overhead_s': self.b.over,
                      'planned_s': _r1(self.rcost(r, reps, t[i]))})
            out.append(x)
        return out

    def distribute(self, s: list[Round], reps: float) -> list[Round]:
        # the old rule (below the floor): what the rounding of the
        # pruning rounds leaves goes to the final round
        b = self.b
        t0 = self.times(s, self.bestx(s, reps, b.left, b.tmax), b.tmax)
        before = self.cost(s[:-1], reps, t0[:-1])
        kf = self.runs(s[-1], reps)
        if kf == 0:
            last = t0[-1]
        else:
            last = max(min(float(math.floor((b.left - before) / kf - self.rramp(s[-1]) - b.over)),
                           b.tmax), t0[-1])
        return self.spec(s, reps, t0[:-1] + [last])

    def reserve(self, s: list[Round], fl: float) -> Optional[list[Round]]:
        b = self.b
        fin, pre = s[-1], s[:-1]
        pmin = self.mincost(pre[:1], 1)
        tf = self.lastok(fl, b.tmax + 1, lambda t: self.rcost(fin, b.reps, t) + pmin <= b.left)
        if tf is None:
            return None
        lp = b.left - self.rcost(fin, b.reps, tf)
        p = self.fitpre(pre, lp) if pre else []
        p = p or []
        t = self.times(p, self.bestx(p, 1, lp, tf), tf) if p else []
        return self.spec(p + [fin], b.reps, t + [tf])

    def plan(self) -> dict[str, Any]:
        b = self.b
        s0 = self.shape() if b.groups is not None else list(b.shape or [])
        fl = min(b.floor, b.tmax)
        once0 = self.once(s0)
        doc: dict[str, Any] = {
            'min_s': math.ceil(self.mincost(once0, 1) * 10) / 10,
            'min_runs': self.runs(once0[0], 1),
            'min_ramp': self.rramp(once0[0]),
            'floor_s': math.ceil((self.mincost(s0[:-1][:1], 1) + self.rcost(s0[-1], b.reps, fl))
                                 * 10) / 10,
            'final_floor': fl,
            'overhead_s': b.over,
        }
        res = self.reserve(s0, fl)
        if res is not None:
            rounds, below = res, False
        else:
            f = self.fit(s0, b.reps)
            if f is None:
                doc.update({'fits': False, 'below_floor': True, 'rounds': [], 'planned_s': 0})
                return doc
            rounds = self.distribute(*f)
            last = rounds[-1]
            below = last['runtime'] < fl or last['repeats'] < b.reps or bool(last.get('once'))
        doc.update({'fits': True, 'below_floor': below, 'rounds': rounds,
                    'planned_s': _r1(sum(r['planned_s'] for r in rounds))})
        return doc


def plan(b: BudgetInput) -> dict[str, Any]:
    """The budget plan: {min_s, min_runs, min_ramp, floor_s, final_floor,
    overhead_s, fits, below_floor, rounds, planned_s}. min_s: every point
    once at 1 s (the least budget; min_runs and min_ramp its runs and
    ramp); floor_s: the first round at 1 s and the final round at its
    floor with reps repeats; fits: False when not even min_s fits (then
    no rounds); below_floor: the final round got less than its floor or
    fewer than reps repeats, or there is no pruning."""
    return _Plan(b).plan()
