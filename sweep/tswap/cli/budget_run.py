# SPDX-License-Identifier: GPL-2.0-only
"""The rounds of a --budget run (docs/sweep.md "Budget: successive
halving"), decided in the sweep's own process beside the executor that
runs the points (tswap.cli.run_local run_budget; its --dry-run:
dry_run_text). setup(parser) holds the rounds' settings (run_local
rounds_args): RUN (or --dry-run) --budget S --auto 0|1 --t0 T --steady
on|off --ramp S --runtime S --repeat N --cvflag F. The rounds write
RUN/budget.json, move a pruning round's runs to points/ when it becomes
the final round, and read the rounds' result.json files to prune. The
clock: --t0 (the sweep's start, epoch seconds) and this host's time.
"""

from __future__ import annotations

import argparse
import glob
import math
import os
import time
from typing import Any, Callable, Optional

from .. import jqjson
from ..plan import budget_start as bs
from ..plan.points import parse
from ..stats import budget_run as br
from ..stats.budget import check, prune, round_record
from . import StageError, read_json
from .files import write_text

Doc = dict[str, Any]


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('rundir', nargs='?', metavar='RUN')
    p.add_argument('--dry-run', action='store_true')
    p.add_argument('--budget', required=True, metavar='S')
    p.add_argument('--auto', default='0', choices=('0', '1'))
    p.add_argument('--t0', type=float, required=True, metavar='EPOCH')
    p.add_argument('--steady', default='off', choices=('on', 'off'))
    p.add_argument('--ramp', type=float, default=0, metavar='S')
    p.add_argument('--runtime', type=float, required=True, metavar='S')
    p.add_argument('--repeat', type=int, required=True, metavar='N')
    p.add_argument('--cvflag', type=float, default=0, metavar='F')


Emit = Callable[[str, str], None]
Ask = Callable[..., list[str]]


class Rounds:
    """One run's rounds: the settings, the plan's lines and points, and
    the runner: emit(KIND, MESSAGE) says (say, warn or note) and ask(ACT=
    'run', I, DIR, KEY, REP, RT, RAMP, HEAD, TAIL) runs plan line I as
    run KEY into RUN/DIR at the round's runtime RT and ramp RAMP, with
    the label's HEAD and TAIL, and answers [PRE, COST, WALL, LABEL]
    (seconds as text, 3 decimals; the full label): the executor's in
    this process (tswap.cli.run_local)."""

    def __init__(self, a: argparse.Namespace, lines: list[str], emit: Emit, ask: Ask) -> None:
        self.a, self.lines, self.emit, self.ask = a, lines, emit, ask
        try:
            self.points = parse(''.join(x + '\n' for x in lines))
        except ValueError as e:
            raise StageError('plan: %s' % e) from None
        self.budget = float(jqjson.loads(a.budget))
        self.reps = max(a.repeat, bs.REPEAT)  # the final round's
        self.sweep_s = 0.0
        self.path = os.path.join(a.rundir or '.', 'budget.json')
        self.doc: Doc = {}

    # the clock and the seconds of the budget
    def spent(self) -> float:
        return br.elapsed(self.a.t0, time.time())

    def reserve(self) -> float:
        return float(bs.reserve(len(self.lines), self.sweep_s))

    def left(self) -> float:
        return br.left(self.budget, self.spent(), self.reserve())

    def emit_all(self, msgs: list[br.Msg]) -> None:
        for kind, msg in msgs:
            self.emit(kind, msg)

    def save(self) -> None:
        tmp = self.path + '.tmp'
        with open(tmp, 'w', encoding='utf-8') as f:
            f.write(jqjson.dumps(self.doc) + '\n')
        os.replace(tmp, self.path)

    def plan(self, ndone: int, over: float, shape: Optional[list[Doc]]) -> Doc:
        """The plan for the time left now (tswap.stats.budget_run.fitted)."""
        a = self.a

        def plan_for(left: float) -> Doc:
            return bs.plan_at(self.points, left, a.steady == 'on', a.ramp, a.runtime, a.repeat,
                              over, ndone, shape)
        p, msgs = br.fitted(plan_for, self.left(), a.budget, self.reps, self.reserve(),
                            self.spent())
        self.emit_all(msgs)
        return p

    def to_final(self, n: int, keys: list[str]) -> None:
        """Round n, a pruning round, becomes the final round: the runs of
        keys it made move from rounds/KEY.sN to points/KEY.r1, where the
        pick reads them. Each result.json gets its new runkey in
        rounds/KEY.sN first (through result.json.tmp there: pipeline.sh
        on_signal removes RUN/rounds/*/*.tmp), then the directory is
        renamed: points/ never holds a half-made point nor a *.tmp."""
        run = self.a.rundir
        for key in keys:
            src = os.path.join(run, 'rounds', '%s.s%d' % (key, n))
            f = os.path.join(src, 'result.json')
            doc = read_json(f, 'result')
            doc['runkey'] = key + '.r1'
            write_text(f, jqjson.dumps(doc) + '\n')
            os.rename(src, os.path.join(run, 'points', key + '.r1'))

    def check(self, what: str, n: int, reserve: float, spec: Doc, ndone: float, reps: float,
              later: Any, costs: list[float], allc: list[float], allw: list[float]) -> Doc:
        return check(what, n, self.budget, self.a.t0, time.time(), reserve, bs.RESERVE_RUNS,
                     spec['runtime'], spec['ramp'], self.a.ramp, ndone, reps, later, costs, allc,
                     allw)

    def result_text(self, d: str, runkey: str) -> str:
        with open(os.path.join(self.a.rundir, d, runkey, 'progress.txt'), encoding='utf-8') as f:
            return f.readline().rstrip('\n').split('\t')[0]

    def run(self) -> None:
        a, run = self.a, self.a.rundir
        ckey = {p['point']: p.get('ckey') for p in self.points}
        alive = {p['point'] for p in self.points if p['kind'] != 'ceiling'}
        kind = [x.split('\t')[1] if '\t' in x else '' for x in self.lines]
        tl = [i for i, k in enumerate(kind) if k != 'ceiling']
        cl = [i for i, k in enumerate(kind) if k == 'ceiling']
        key = [x.split('\t')[0] for x in self.lines]
        over: float = bs.OVER_EST
        start = self.spent()
        nall = len(tl) + len(cl)
        self.doc = {'seconds': self.budget, 'chosen_by_default': a.auto == '1',
                    'overhead_estimate_s': bs.OVER_EST, 'reserve_s': self.reserve(),
                    'runs_start_s': start, 'rounds': []}
        self.save()
        plan = self.plan(0, over, None)
        w = bs.steady_window(self.points, a.steady == 'on', int(a.ramp))
        self.doc.update({
            'steady_window_s': w,
            'steady_budget_s': math.ceil(plan['steady_floor_s'] + self.reserve() + start)
            if plan.get('below_steady') not in (None, False) else None,
            'plan': br.brief(plan)})
        self.save()
        n = 0
        stop: Optional[Doc] = None
        while True:
            n += 1
            spec = dict(plan['rounds'][0])
            total = n - 1 + len(plan['rounds'])
            final = spec.get('final') is True
            reps = int(spec['repeats'])
            groups = set(spec.get('groups') or {})
            todo = [i for i in tl if key[i] in alive and ckey.get(key[i]) in groups]
            npass = len(todo)
            if not spec.get('ceilings'):
                pass
            elif spec.get('once') is True:
                todo += cl
            else:
                todo = cl + todo
            self.emit('say', br.round_head(n, total, len(todo), spec, a.budget, self.left()))
            t0 = time.time()
            ran = idx = nrep = 0
            costs: list[float] = []
            allc: list[float] = []
            allw: list[float] = []
            pres: list[float] = []
            passed: Optional[Doc] = None
            later = plan['rounds'][1:]
            reserve = self.reserve()
            keys: list[str] = []
            for rep in range(1, reps + 1):
                if rep > 1:
                    # the next repeat at the seconds per run this round
                    # took so far, or none when it no longer fits
                    passed = self.check('repeat', npass, reserve, spec, nrep, reps, [], costs,
                                        allc, allw)
                    if not passed['fits']:
                        self.emit_all([('warn', 'budget %s s: %s' % (a.budget, passed['why'])),
                                       ('note', 'budget: ' + passed['why'])])
                        break
                    passed = None
                i = 0
                while i < len(todo):
                    li = todo[i]
                    i += 1
                    if kind[li] == 'ceiling' and rep > 1:
                        continue
                    if not final and ran >= 2:
                        # behind: when the rest of this round and the least
                        # of the rounds after it no longer fit, this round
                        # is the last
                        e = self.check('round', len(todo) - i + 1, reserve, spec, 0, 1, later,
                                       costs, allc, allw)
                        if not e['fits']:
                            self.emit_all([('warn', 'budget %s s: round %d: %s' % (a.budget, n, e['why'])),
                                           ('note', 'budget: round %d: %s' % (n, e['why']))])
                            self.to_final(n, keys)
                            final, total = True, n
                            todo += cl
                            spec.update({'final': True, 'once': True, 'ceilings': float(len(cl)),
                                         'runs': spec['runs'] + len(cl),
                                         'became_final': {k: v for k, v in e.items() if k != 'why'}})
                    # the deadline: a run that would end past the budget
                    # is not started
                    e = self.check('next', 1, reserve, spec, 0, 1,
                                   {'over': over, 'all': nall, 'start': start}, costs, allc, allw)
                    if not e['fits']:
                        stop, nrep = e, rep
                        break
                    idx += 1
                    if final or kind[li] == 'ceiling':
                        d, runkey = 'points', '%s.r%d' % (key[li], rep)
                    else:
                        d, runkey = 'rounds', '%s.s%d' % (key[li], n)
                    pre, cost, wall, label = self.ask(
                        ACT='run', I=li, DIR=d, KEY=runkey, REP=rep, RT=jqjson.text(spec['runtime']),
                        RAMP=jqjson.text(spec['ramp']), HEAD='[round %d/%d %d]' % (n, total, idx),
                        TAIL='' if reps == 1 else ' r%d' % rep)
                    ran += 1
                    self.emit('say', '%s  %s  (budget %s s: %s s left)' % (
                        label, self.result_text(d, runkey), a.budget,
                        br.unspent(self.budget, a.t0, time.time())))
                    pres.append(float(pre))
                    allc.append(float(cost))
                    allw.append(float(wall))
                    if kind[li] != 'ceiling':
                        costs.append(float(cost))
                    if not final:
                        keys.append(key[li])
                if stop is not None:
                    break
                nrep = rep
            rwall = float('%.3f' % (time.time() - t0))
            if stop is not None:
                self.emit_all([('warn', 'budget %s s: round %d: %s' % (a.budget, n, stop['why'])),
                               ('note', 'budget: round %d: %s' % (n, stop['why']))])
                if not final:
                    self.to_final(n, keys)
                    final = True
                    spec.update({'final': True, 'once': True})
            rec = round_record(spec, n, rwall, pres, ran, nrep, passed, allc, allw)
            self.sweep_s = rec['sweep_s']
            if stop is not None:
                rec['stopped'] = stop
            if final:
                self.doc['rounds'].append(dict(rec, kept=sorted(alive), pruned=[]))
                self.save()
                return
            # the rounds after this one, from the time left, at the
            # start-up per run this round measured
            over = rec['overhead_s']
            plan = self.plan(n, over, plan['rounds'][1:])
            rec['replan'] = br.brief(plan)
            files = sorted(glob.glob(os.path.join(glob.escape(run), 'rounds',
                                                  '*.s%d' % n, 'result.json')))
            pr = prune([read_json(f, 'result') for f in files], self.points,
                       br.keep(spec.get('groups') or {}, plan['rounds']), a.cvflag)
            alive -= {x['point'] for x in pr['pruned']}
            self.doc['rounds'].append(dict(rec, kept=pr['kept'], pruned=pr['pruned']))
            self.save()
            self.emit('say', br.pruned_line(n, pr, self.left()))


def dry_run_text(r: Rounds) -> str:
    """--dry-run's lines of the rounds as planned now (budget.sh
    budget_dry_run)."""
    a = r.a
    left = br.left(r.budget, r.spent(), r.reserve())
    plan = bs.plan_at(r.points, left, a.steady == 'on', a.ramp, a.runtime, a.repeat)
    return ''.join(x + '\n' for x in br.dry_run_lines(plan, a.budget, left, r.reps, r.reserve(), r.spent()))

