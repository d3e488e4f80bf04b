# SPDX-License-Identifier: GPL-2.0-only
"""The --budget rules (docs/sweep.md "Budget: successive halving"): the
rounds planned (tswap.plan.budget), what a pruning round keeps, the
checks while a round runs and a round's record (tswap.stats.budget). No
fio, no wall clock: the seconds are given. The real runs:
tests/sweep-budget.bats."""
import os

from tswap import jqjson
from tswap.plan.budget import BudgetInput, halving, plan
from tswap.report.summary import budget_summary
from tswap.stats.aggregate import Limits, aggregate
from tswap.stats.budget import check, into_aggregate, prune, round_record, stopped


def ds_plan(left, shape=None, first=0, over=1):
    """The deepspeed grid's shape: 8 points per direction, 2 ceilings,
    10 s runtime, 2 s ramp, 3 final repeats, a 5 s floor; a new plan, or
    a re-plan of shape after `first` rounds."""
    groups = None if shape is not None else {'read': 8, 'write': 8}
    return plan(BudgetInput(left=left, ramp=2, over=over, tmax=10, reps=3, floor=5, first=first,
                            groups=groups, shape=shape, ceilings=2))


def test_halving_keeps_half_rounded_up_down_to_two():
    assert halving(8) == [8, 4, 2]
    assert halving(5) == [5, 3, 2]
    assert halving(2) == [2]


def test_final_round_reserved_first_pruning_rounds_get_the_rest():
    # 160 s: round 1 at 1 s (16 points) and the final round at its floor
    # with the 2 ceilings (14 runs x 8 s)
    p = ds_plan(160)
    assert p['fits'] and not p['below_floor'] and p['floor_s'] == 160 and p['min_s'] == 54
    r0, fin = p['rounds']
    assert (r0['runtime'], r0['runs'], r0['ceilings']) == (1, 16, 0)
    assert fin['final'] and (fin['runtime'], fin['repeats'], fin['ramp']) == (5, 3, 2)
    assert (fin['ceilings'], fin['runs']) == (2, 14) and p['planned_s'] <= 160
    # 300 s: the final round at the grid's 10 s, both pruning rounds
    # doubling, at most 10 s
    p = ds_plan(300)
    r = p['rounds']
    assert len(r) == 3 and r[-1]['runtime'] == 10 and r[-1]['repeats'] == 3
    assert 1 <= r[0]['runtime'] <= r[1]['runtime'] <= 10 and p['planned_s'] <= 300
    # never more than the grid's runtime
    assert max(x['runtime'] for x in ds_plan(5000)['rounds']) == 10


def test_replan_keeps_the_final_rounds_reservation_and_ramp():
    rest = ds_plan(300)['rounds'][1:]
    p = ds_plan(210, rest, 1)
    fin = p['rounds'][-1]
    assert p['fits'] and (fin['runtime'], fin['ramp'], fin['repeats'], fin['ceilings']) == (10, 2, 3, 2)
    assert p['planned_s'] <= 210
    # only the final round left: the grid's ramp, the runtime that fits
    p = ds_plan(112, p['rounds'][-1:], 2)
    assert len(p['rounds']) == 1 and p['rounds'][0]['final']
    assert (p['rounds'][0]['ramp'], p['rounds'][0]['runtime']) == (2, 5) and not p['below_floor']


def test_below_the_floor_the_old_rule_then_does_not_fit():
    p = ds_plan(114)
    fin = p['rounds'][-1]
    assert p['fits'] and p['below_floor'] and p['floor_s'] == 160 and p['final_floor'] == 5
    assert fin['final'] and (fin['runtime'] < 5 or fin['repeats'] < 3) and p['planned_s'] <= 114
    p = ds_plan(40)
    assert not p['fits'] and p['min_s'] == 54 and p['below_floor']


def test_final_round_alone_runs_once_then_refuses_with_its_minimum():
    # a busy machine: 8 s of start-up per run; the final round (4 points,
    # 2 ceilings) once, ramped 1 s: 6 x 10 = 60 s
    rest = ds_plan(196)['rounds'][1:]
    p = ds_plan(62, rest, 1, over=8)
    r = p['rounds']
    assert p['fits'] and p['below_floor'] and len(r) == 1 and r[0]['final'] and r[0]['once']
    assert (r[0]['repeats'], r[0]['ramp'], r[0]['runs']) == (1, 1, 6) and p['planned_s'] <= 62
    assert (p['min_runs'], p['min_ramp'], p['overhead_s']) == (6, 1, 8)
    p = ds_plan(59, rest, 1, over=8)
    assert not p['fits'] and p['min_s'] == 60 and p['rounds'] == []


def test_replan_at_a_larger_start_up_fits_the_time_left():
    first = ds_plan(300)
    rest = first['rounds'][1:]
    before = sum(x['runtime'] * x['repeats'] for x in rest)
    for left in (200, 150, 120, 100):
        p = ds_plan(left, rest, 1, over=4)
        assert p['fits'] and p['planned_s'] <= left and p['overhead_s'] == 4
        assert sum(x['runs'] * (x['runtime'] + x['ramp'] + 4) for x in p['rounds']) <= left
        assert sum(x['runtime'] * x['repeats'] for x in p['rounds']) < before


def pp(name, threads=1, qd=8, block=1 << 20, ckey='read'):
    return {'point': name, 'kind': 'tswap', 'ckey': ckey, 'threads': threads, 'qd': qd,
            'block': block, 'submit': 'block'}


def test_prune_fastest_then_ties_by_cost_then_gbs_failed_last():
    plan_ = [pp('a'), pp('b'), pp('d'), pp('e', threads=8), pp('f')]
    res = [{'point': 'a', 'status': 'ok', 'gbs': 2.5}, {'point': 'b', 'status': 'ok', 'gbs': 2.6},
           {'point': 'd', 'status': 'ok', 'gbs': 1.9}, {'point': 'e', 'status': 'ok', 'gbs': 2.5},
           {'point': 'f', 'status': 'error', 'gbs': None}]
    out = prune(res, plan_, {'read': 2}, 0.05)
    # b fastest; a and e within 5% of it, a first (1 thread before 8);
    # d outside; the failed point last
    assert out['kept'] == ['a', 'b']
    assert [(x['point'], x['why']) for x in out['pruned']] == [
        ('e', 'tied, costlier'), ('d', 'slower'), ('f', 'failed')]


def test_prune_band_is_one_tensor_op_plus_noise():
    t = 419430400
    plan_ = [pp('fast', 8, 128, 8 << 20, 'write'), pp('next', 8, 32, 8 << 20, 'write'),
             pp('cheap', 1, 32, 1 << 20, 'write')]

    def res(n):
        return [{'point': k, 'status': 'ok', 'gbs': g, 'tensor': t, 'handles': [{'bytes': n * t}]}
                for k, g in (('fast', 2.6), ('next', 2.5), ('cheap', 2.1))]
    # 6 ops: +-(1/6 + 5%) = 22%: cheap overlaps fast and goes on
    out = prune(res(6), plan_, {'write': 2}, 0.05)
    assert out == {'kept': ['cheap', 'fast'],
                   'pruned': [{'point': 'next', 'ckey': 'write', 'gbs': 2.5, 'why': 'tied, costlier'}]}
    # 600 ops: +-5.2%: GB/s decides
    out = prune(res(600), plan_, {'write': 2}, 0.05)
    assert out == {'kept': ['fast', 'next'],
                   'pruned': [{'point': 'cheap', 'ckey': 'write', 'gbs': 2.1, 'why': 'slower'}]}


def chk(what, n, costs, allc, allw, now, later=(), ndone=1):
    """A 60 s budget started at 0, a 5 s reserve, a round of 1 s after a
    1 s ramp, the grid's ramp 2 s, 3 repeats planned."""
    return check(what, n, 60, 0, now, 5, 10, 1, 1, 2, ndone, 3, list(later), costs, allc, allw)


def test_check_final_repeat_runs_only_when_it_fits():
    c = chk('repeat', 2, [10, 10], [10, 10], [9.9, 9.9], 30)
    assert c['fits'] and c['need_s'] == 20 and c['left_s'] == 25 and c['why'] is None
    c = chk('repeat', 2, [15, 15], [15, 15], [14.9, 14.9], 30)
    assert not c['fits'] and (c['need_s'], c['per_run_s'], c['left_s']) == (30, 15, 25)
    assert c['why'] == ('the final round ends after 1 of its 3 repeat(s): one more needs about 30 s '
                        '(2 run(s) at 15 s each, as this round ran), 25 s are left for runs')
    # the sweep's own 2 s per run reserves 10 x 2 = 20 s for the outputs
    c = chk('repeat', 2, [10, 10], [10, 10], [8, 8], 30)
    assert not c['fits'] and c['left_s'] == 10


def test_check_pruning_round_becomes_final_when_the_rest_does_not_fit():
    later = [{'final': True, 'groups': {'read': 2, 'write': 2}, 'ceilings': 2}]
    c = chk('round', 4, [5, 5], [5, 5], [4.5, 4.5], 10, later)
    assert not c['fits'] and c['need_s'] == 50 and c['left_s'] == 45
    assert c['why'].startswith('this round becomes the final round (its points once, then the '
                               'ceilings; no pruning, no repeats): with 4 run(s) of it still to '
                               'run at 5 s each')
    c = chk('round', 4, [3, 3], [3, 3], [2.5, 2.5], 10, later)
    assert c['fits'] and c['need_s'] == 30
    c = chk('round', 4, [3, 3], [3, 3], [2.5, 2.5], 10,
            [{'final': False, 'groups': {'read': 4, 'write': 4}, 'ceilings': 0}] + later)
    assert c['need_s'] == 42


def test_check_next_run_and_the_once_budget():
    c = check('next', 1, 60, 0, 50, 5, 10, 1, 1, 2, 0, 3,
              {'over': 1, 'all': 20, 'start': 3}, [], [10, 10], [9.9, 9.9])
    assert not c['fits'] and c['once_budget_s'] == 3 + 20 * 10 + 5
    assert c['why'].startswith('the next run needs about 10 s')


def test_round_record_start_up_without_preconditioning_and_dropped_repeat():
    spec = {'final': True, 'runtime': 2, 'ramp': 1, 'repeats': 3, 'groups': {'read': 2},
            'ceilings': 1, 'runs': 7, 'planned_s': 28, 'overhead_s': 1}
    passed = {'fits': False, 'need_s': 20, 'per_run_s': 10, 'left_s': 4, 'why': 'x'}
    r = round_record(spec, 1, 40, [0, 10, 0], 3, 1, passed, [10, 10, 10], [9.5, 9.5, 9.5])
    # 3 runs in 40 s, 10 s of it preconditioning: 10 s per run, 3 s of
    # ramp and runtime: 7 s of start-up; the sweep's own 0.5 s per run
    assert (r['overhead_s'], r['planned_overhead_s'], r['precondition_s']) == (7, 1, 10)
    assert (r['wall_s'], r['sweep_s'], r['repeats'], r['repeats_planned']) == (40, 0.5, 1, 3)
    assert (r['runs'], r['runs_planned'], r['planned_s']) == (3, 7, 28)
    assert r['dropped'] == {'fits': False, 'need_s': 20, 'per_run_s': 10, 'left_s': 4}


def test_a_week_per_point_plans_by_bisection_not_a_scan():
    # a week (604800 s, the sweep's limit) per point: the old planner
    # scanned every eighth of a second up to it and spun for minutes
    # (issue 25, item 3); lastok bisects
    b = BudgetInput(left=3586, ramp=2, over=1, tmax=604800, reps=3, floor=5,
                    groups={'read': 8, 'write': 8}, ceilings=2)
    p = plan(b)
    fin = p['rounds'][-1]
    assert p['fits'] and not p['below_floor'] and fin['final'] and fin['repeats'] == 3
    assert fin['runtime'] > 5 and p['planned_s'] <= 3586
    p = plan(BudgetInput(left=604790, ramp=2, over=1, tmax=604800, reps=3, floor=5,
                         shape=p['rounds'], ceilings=2))
    assert p['fits'] and p['planned_s'] <= 604790


def _stop_agg():
    pts = [{'point': 'read-%s' % k, 'kind': 'tswap', 'rw': 'read', 'status': s, 'errors': [],
            'trusted': s == 'ok'} for k, s in (('a', 'ok'), ('b', 'ok'), ('c', 'pruned'),
                                               ('d', 'not run'))]
    return {'ceiling': {}, 'points': pts,
            'best': {'read': {'point': 'read-a', 'verdict': 'V'}, 'write': None,
                     'combined': None, 'readwrite': None,
                     'aio_source': {'point': 'read-a', 'verdict': 'V', 'why': 'w'}}}


def test_stopped_marks_the_points_not_run_and_each_verdict():
    agg = _stop_agg()
    out = stopped(agg, {'rounds': [{'round': 1}, {'round': 2, 'stopped': {
        'fits': False, 'once_budget_s': 50}}]})
    assert [p['errors'] for p in out['points']] == [[], [], [], ['the budget ran out before it ran']]
    sfx = (' (the budget ran out before 1 of the 4 points ran: the best of those that ran; '
           'about 50 s run every point once here)')
    assert out['best']['read']['verdict'] == 'V' + sfx
    assert out['best']['aio_source']['verdict'] == 'V' + sfx and out['best']['write'] is None
    assert list(out['best']['read']) == ['point', 'verdict']
    assert agg == _stop_agg()


def test_stopped_leaves_a_run_that_did_not_stop_or_ran_every_point():
    agg = _stop_agg()
    assert stopped(agg, {'rounds': [{'round': 1}]}) == _stop_agg()
    agg['points'][3]['status'] = 'ok'
    assert stopped(agg, {'rounds': [{'stopped': {'once_budget_s': 5}}]})['best']['read'][
        'verdict'] == 'V'


def test_stopped_gives_the_recorded_budget_stopped_run():
    # tests/fixtures/runs/budget-stopped: its aggregate.json before the
    # stop's marks, through stopped(), is the recorded one (the jq's)
    d = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'runs', 'budget-stopped')
    with open(os.path.join(d, 'aggregate.json'), encoding='utf-8') as f:
        rec = jqjson.loads(f.read())
    with open(os.path.join(d, 'budget.json'), encoding='utf-8') as f:
        bj = jqjson.loads(f.read())
    rec.pop('budget')
    base = jqjson.loads(jqjson.dumps(rec))
    for p in base['points']:
        if p['status'] == 'not run':
            p['errors'] = []
    for b in base['best'].values():
        if b is not None:
            b['verdict'] = b['verdict'].split(' (the budget ran out before ')[0]
    assert jqjson.dumps(stopped(base, bj)) == jqjson.dumps(rec)


def _fixture(name, *files):
    d = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'runs', name)
    out = []
    for f in files:
        with open(os.path.join(d, f), encoding='utf-8') as fh:
            out.append(fh.read())
    return out


def test_into_aggregate_gives_the_recorded_budget_stopped_run():
    # budget.sh budget_into_aggregate (jq): the run's aggregate of its
    # results, with the budget's pruned points, the stop and the budget
    # (used_s as recorded), is the recorded aggregate.json byte for byte
    res, plan, meta, bj, rec = _fixture('budget-stopped', 'results.json', 'plan.json', 'meta.json',
                                        'budget.json', 'aggregate.json')
    lim = Limits(cvflag=0.05, cvrel=2, cvmax=0.2, cache=1.1, costtol=0.03)
    agg = jqjson.loads(jqjson.dumps(aggregate(jqjson.loads(res), jqjson.loads(plan), lim, jqjson.loads(meta))))
    used = jqjson.loads(rec)['budget']['used_s']
    assert jqjson.dumps(into_aggregate(agg, jqjson.loads(bj), used)) + '\n' == rec


def test_into_aggregate_marks_pruned_points_and_keeps_margins_of_the_picks():
    agg = {'points': [{'point': 'a', 'status': 'ok', 'flags': [], 'trusted': True},
                      {'point': 'b', 'status': 'ok', 'flags': [], 'trusted': True}],
           'best': {'read': {'point': 'a', 'gbs': 2.0, 'verdict': 'V', 'extra': 1}, 'write': None,
                    'aio_source': {'point': 'a'}}}
    bj = {'rounds': [{'round': 1, 'pruned': [{'point': 'b', 'gbs': 1.5}]}, {'round': 2, 'pruned': []}]}
    out = into_aggregate(agg, bj, 12.5)
    assert out['points'][0] == agg['points'][0]
    assert out['points'][1] == {'point': 'b', 'status': 'pruned', 'flags': ['pruned in round 1'],
                                'trusted': False, 'pruned': {'point': 'b', 'gbs': 1.5, 'round': 1}}
    assert list(out['points'][1]) == ['point', 'status', 'flags', 'trusted', 'pruned']
    m = out['budget']['final_margins']
    assert list(m) == ['read'] and m['read']['point'] == 'a' and m['read']['tie'] is None
    assert 'extra' not in m['read'] and list(m['read'])[-1] == 'verdict'
    assert out['budget']['used_s'] == 12.5 and out['budget']['rounds'] == bj['rounds']
    assert agg['points'][1]['status'] == 'ok'  # agg itself is left as it was


def test_budget_summary_line():
    assert budget_summary('60', '33.3', {'rounds': [{}, {}]}) == \
        'budget:     60 s, used 33.3 s in 2 round(s) (report.md, Budget)'
    assert budget_summary('60', '1.0', {}) == 'budget:     60 s, used 1.0 s in 0 round(s) (report.md, Budget)'
