# SPDX-License-Identifier: GPL-2.0-only
"""A --budget run between its rounds (docs/sweep.md "Budget: successive
halving"; tswap.stats.budget_run, tswap.plan.budget_start.plan_at): the
budget's clock as it is printed, the plan fitted to the seconds left and
what is said when it falls short, budget.json's brief of a plan, what a
group keeps, the progress and --dry-run lines. Formerly budget.sh's and
budget-run.sh's jq. No fio, no wall clock: the seconds are given. The
real runs: tests/sweep-budget.bats."""

import json
import os
import signal
from types import SimpleNamespace

import pytest

from tswap.cli.budget_run import Rounds
from tswap.executor import local
from tswap.plan import budget_start as bs
from tswap.stats import budget_run as br


def pts(n, ceilings=2, rw=('read', 'write'), ranks=1):
    out = [{'point': 'ceiling-%d' % i, 'kind': 'ceiling', 'rw': 'read', 'ckey': 'read',
            'ranks': 1} for i in range(ceilings)]
    for d in rw:
        out += [{'point': '%s-%d' % (d, i), 'kind': 'tswap', 'rw': d, 'ckey': d, 'ranks': ranks}
                for i in range(n)]
    return out


def test_clock_figures_as_printed():
    # elapsed: 0.1 s, as printf %.1f rounds the binary value
    assert br.elapsed(100.0, 103.25) == 3.2 and br.elapsed(100.0, 103.26) == 3.3
    # left: budget - spent - reserve, truncated toward zero
    assert br.left(60, 3.2, 5) == 51 and br.left(10, 7.5, 5) == -2
    # unspent: no reserve; what the progress line says
    assert br.unspent(40, 100.0, 117.96) == '22' and br.unspent(40, 100.0, 141.5) == '-1'


def test_reserve_grows_with_the_sweeps_own_seconds_per_run():
    assert bs.reserve(10) == 6 and bs.reserve(10, 0.4) == 6 and bs.reserve(10, 0.75) == 8


def test_plan_at_replans_the_rounds_left_with_the_steady_window_floor():
    p = bs.plan_at(pts(4), 300, True, 1, 20, 1)
    assert p['fits'] and p['rounds'][-1]['runtime'] >= bs.steady_window(pts(4), True, 1)
    rest = p['rounds'][1:]
    q = bs.plan_at(pts(4), 100, True, 1, 20, 1, over=2, first=1, shape=rest)
    assert q['fits'] and len(q['rounds']) == len(rest) and q['overhead_s'] == 2
    # below the window: the FINAL_MIN plan, saying what the window needs
    q = bs.plan_at(pts(4), 60, True, 1, 20, 1, over=2, first=1, shape=rest)
    assert q['below_steady'] and q['steady_window'] == 8 and q['steady_floor_s'] > 60
    # several handles only: no window
    assert 'steady_window' not in bs.plan_at(pts(4, ranks=2), 60, True, 1, 20, 1)


def test_fitted_below_the_minimum_keeps_fits_false_with_a_warning():
    # budget-plan.bats' budget_fitted_plan test, as it was: 34 s left after
    # round 1 for a final round of 4 points and 2 ceilings at 3.68 s of
    # start-up a run
    shape = [{'final': True, 'groups': {'read': 2, 'write': 2}, 'ceilings': 2}]

    def plan_for(left):
        return bs.plan_at(pts(4), left, False, 2, 2, 1, 3.68, 1, shape)
    p, msgs = br.fitted(plan_for, 34, '120', 3, 6, 60)
    assert p['fits'] is False and p['left_s'] == 34 and p['planned_s'] > 34
    assert len(p['rounds']) == 1
    assert [k for k, _ in msgs] == ['warn', 'note']
    assert msgs[0][1] == ('budget 120 s: 34 s left for the runs, below the 34.1 s of one round at'
                          ' 1 s: running that until a run would end past the budget')
    assert msgs[1][1].startswith('budget: 34 s were left for the runs, below the 34.1 s')
    p, msgs = br.fitted(plan_for, 60, '120', 3, 6, 60)
    assert p['fits'] is True and p['left_s'] == 60 and p['planned_s'] <= 60


def test_fitted_below_the_floor_says_the_budget_that_gives_it():
    p, msgs = br.fitted(lambda left: bs.plan_at(pts(4), left, False, 1, 10, 3), 53, '60', 3,
                        6, 1.2)
    assert p['fits'] and p['below_floor'] and [k for k, _ in msgs] == ['warn', 'note']
    assert msgs[0][1].startswith('budget 60 s: the final round runs ')
    assert ', below its floor of 3 x 5 s: the 53 s left for runs give it no more; with the first' \
        ' round still to run at 1 s it needs a budget of about ' in msgs[0][1]
    assert msgs[1][1] == 'budget: ' + msgs[0][1][len('budget 60 s: '):]
    # a plan at its floor says nothing
    p, msgs = br.fitted(lambda left: bs.plan_at(pts(4), left, False, 1, 10, 3), 500, '600', 3,
                        6, 1.2)
    assert not p['below_floor'] and msgs == []


def test_floor_text_names_the_window_and_its_budget():
    plan = {'rounds': [{'repeats': 3, 'runtime': 5}], 'below_floor': False,
            'steady_window': 8, 'steady_floor_s': 100.2}
    assert br.floor_text(plan, 80, 3, 6, 2.5) == (
        "the final round runs 3 repeat(s) of 5 s, below fio's steady-state window of 8 s (a"
        " shorter final run is fixed and ranks each point's first seconds, such as a write"
        " cache's burst; no point can be flagged not steady): with the first round still to run"
        " at 1 s it needs a budget of about 109 s for the window, the outputs included")
    plan.update(below_floor=True, final_floor=5, floor_s=70.1)
    t = br.floor_text(plan, 50, 3, 6, 2.5)
    assert t.startswith('the final round runs 3 repeat(s) of 5 s, below its floor of 3 x 5 s: the'
                        ' 50 s left for runs give it no more;')
    assert t.endswith('about 79 s, the outputs included, and about 109 s for fio\'s steady-state'
                      ' window of 8 s (a shorter final run is fixed and ranks each point\'s first'
                      ' seconds, such as a write cache\'s burst; no point can be flagged not'
                      ' steady)')


def test_brief_keeps_the_plan_figures_and_the_rounds_shape():
    p = bs.plan_at(pts(4), 100, False, 1, 5, 1)
    b = br.brief(dict(p, left_s=100))
    assert list(b) == ['left_s', 'overhead_s', 'planned_s', 'fits', 'below_floor', 'rounds']
    assert [list(r) for r in b['rounds']] == [['final', 'runtime', 'ramp', 'repeats', 'runs',
                                               'planned_s']] * len(p['rounds'])
    assert br.brief({})['left_s'] is None and br.brief({})['rounds'] == []


def test_keep_is_the_next_round_that_has_the_group():
    rounds = [{'groups': {'read': 4}}, {'groups': {'read': 2, 'write': 2}}]
    assert br.keep({'read': 8, 'write': 8}, rounds) == {'read': 4, 'write': 2}
    # a group no later round has keeps all it had
    assert br.keep({'read': 8, 'rw': 3}, rounds) == {'read': 4, 'rw': 3}


def test_progress_lines():
    spec = {'repeats': 1, 'runtime': 1, 'ramp': 1, 'planned_s': 24}
    assert br.round_head(1, 2, 10, spec, '60', 53) == (
        'round 1/2: 10 point(s) x 1 repeat(s), runtime 1 s, ramp 1 s (planned 24 s; budget 60 s:'
        ' 53 s left for runs)')
    assert br.pruned_line(1, {'pruned': [{}] * 4, 'kept': ['a'] * 4}, 20) == (
        'round 1: pruned 4 point(s), 4 go on; 20 s left for runs')


def test_dry_run_lines():
    p = bs.plan_at(pts(4), 53, False, 1, 1, 1)
    lines = br.dry_run_lines(p, '60', 53, 3, 7, 1.2)
    assert lines[0].startswith('budget 60 s: successive halving; the rounds as planned now')
    assert lines[1] == '  round 1: read 4, write 4, 1 repeat(s), 8 run(s), runtime 1 s, ramp 1 s:' \
        ' about 24 s'
    assert lines[2].startswith('  round 2 (final): read 2, write 2 + 2 ceiling(s), ')
    assert lines[3] == '  14 fio run(s), about 42 s of the 53 s left for runs'
    assert lines[4].startswith('  the final round runs 1 repeat(s) of 1 s, below its floor of 3 x')
    # no rounds (nothing fits): 0 runs
    assert br.dry_run_lines({'rounds': [], 'planned_s': 0}, '5', -3, 3, 6, 1)[1:] == [
        '  0 fio run(s), about 0 s of the -3 s left for runs']


class _Signal(Exception):
    pass


def _round(tmp_path, keys):
    run = tmp_path / 'run'
    for k in keys:
        d = run / 'rounds' / ('%s.s2' % k)
        d.mkdir(parents=True)
        (d / 'result.json').write_text('{"runkey":"%s.s2","point":"%s","gbs":1}\n' % (k, k))
        (d / 'fio.json').write_text('{}\n')
    (run / 'points').mkdir()
    return run


def test_to_final_leaves_no_tmp_that_on_signal_does_not_remove(tmp_path, monkeypatch):
    # a signal as a pruning round becomes the final round, at the moment a
    # .tmp is there: the executor's clean-up (tswap.executor.local
    # interrupted) removes it, and points/ holds no half-made point
    run = _round(tmp_path, ['a', 'b'])
    replace = os.replace
    monkeypatch.setattr(local, 'ignore_signals', lambda: None)
    x = SimpleNamespace(tmp='', s=SimpleNamespace(run=str(run)), warn=lambda msg: None)

    def signalled(src, dst):
        assert os.path.exists(src)
        local.Local.interrupted(x, signal.SIGTERM, True)
        assert not os.path.exists(src), '%s: not removed by the clean-up' % src
        raise _Signal
    monkeypatch.setattr(os, 'replace', signalled)
    with pytest.raises(_Signal):
        Rounds.to_final(SimpleNamespace(a=SimpleNamespace(rundir=str(run))), 2, ['a', 'b'])
    assert list(run.rglob('*.tmp')) == []
    for f in run.glob('points/*/result.json'):
        assert json.loads(f.read_text())['runkey'] == f.parent.name
    # no signal: the round's runs are the final round's points, runkey .r1
    monkeypatch.setattr(os, 'replace', replace)
    run = _round(tmp_path / 'again', ['a', 'b'])
    Rounds.to_final(SimpleNamespace(a=SimpleNamespace(rundir=str(run))), 2, ['a', 'b'])
    assert sorted(p.name for p in (run / 'points').iterdir()) == ['a.r1', 'b.r1']
    assert list((run / 'rounds').iterdir()) == []
    assert [json.loads((run / 'points' / k / 'result.json').read_text())['runkey'] for k in ('a.r1', 'b.r1')] \
        == ['a.r1', 'b.r1']
    assert (run / 'points' / 'a.r1' / 'fio.json').read_text() == '{}\n'
    assert list(run.rglob('*.tmp')) == []
