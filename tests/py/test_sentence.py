# SPDX-License-Identifier: GPL-2.0-only
"""tswap.stats.sentence through tswap.stats.pick: one test per verdict
form of docs/sweep.md "How the pick is made" (step 4; issue 38, item 3),
each in read and in write wording, and each sentence checked against the
decision's own data (the pick, its cost, the figures it names)."""
import pytest

from tswap.stats.aggregate import Limits, aggregate
from tswap.stats.pick import cost, none_why, pick
from tswap.stats.sentence import Decision, Out, budget_stopped, sentence

DIRS = ('read', 'write')


def pt(rw, name, gbs, lo=None, hi=None, runs=3, threads=1, qd=8, block=1 << 20, **kw):
    p = {'point': '%s-%s' % (rw, name), 'rw': rw, 'gbs': gbs,
         'lo': gbs if lo is None else lo, 'hi': gbs if hi is None else hi,
         'ok_runs': runs, 'threads': threads, 'qd': qd, 'block': block, 'submit': 'block'}
    p.update(kw)
    return p


@pytest.mark.parametrize('rw', DIRS)
def test_the_only_point(rw):
    p = pick([pt(rw, 'a', 1.0)], 0.03, flagged=2)
    assert p['confidence'] == 'only'
    assert p['verdict'] == ('%s-a is the only trustworthy point: nothing to compare it with '
                            '(2 other %s point(s) flagged: Warnings)' % (rw, rw))
    assert pick([pt(rw, 'a', 1.0)], 0.03)['verdict'].endswith('nothing to compare it with')


@pytest.mark.parametrize('rw', DIRS)
def test_a_tie_won_by_the_cheapest(rw):
    a = pt(rw, 'a', 1.00, 0.95, 1.05, threads=4)
    b = pt(rw, 'b', 0.98, 0.93, 1.02, threads=1)
    p = pick([a, b], 0.03)
    assert p['point'] == '%s-b' % rw and p['confidence'] == 'tie'
    assert p['verdict'] == '%s-b and %s-a tie within noise; %s-b is the cheapest of them' % (rw, rw, rw)
    # the sentence's claim holds: no tied point is cheaper
    assert all(cost(b) <= cost(c) for c in (a, b))


@pytest.mark.parametrize('rw', DIRS)
def test_a_tie_where_only_the_fastest_is_within_tolerance(rw):
    # a (4 threads, costly) is fastest and noisy; b (1 thread) overlaps it
    # but its median is 10% below: the tolerance keeps b out, so a is
    # picked although b is cheaper; the old sentence called a "the
    # cheapest of the 1" (issue 38)
    a = pt(rw, 'a', 1.00, 0.80, 1.20, threads=4)
    b = pt(rw, 'b', 0.90, 0.85, 0.95, threads=1)
    p = pick([a, b], 0.03)
    assert p['point'] == '%s-a' % rw and p['tie'] and cost(b) < cost(a)
    assert 'cheapest' not in p['verdict']
    assert p['verdict'].startswith('%s-a and %s-b tie within noise; %s-a is picked: %s-b is cheaper, but '
                                   % (rw, rw, rw, rw))
    assert ('its fastest repeat, 0.95 GB/s, is more than 3%% below the fastest median, 1 GB/s (%s-a)' % rw) in p['verdict']


@pytest.mark.parametrize('rw', DIRS)
def test_a_tie_where_the_costlier_are_out_of_tolerance_keeps_cheapest(rw):
    # the fastest is also the cheapest: the tolerance left out only
    # costlier points, so "the cheapest of them" is true
    a = pt(rw, 'a', 1.00, 0.80, 1.20, threads=1)
    b = pt(rw, 'b', 0.90, 0.85, 0.95, threads=4)
    p = pick([a, b], 0.03)
    assert p['verdict'] == '%s-a and %s-b tie within noise; %s-a is the cheapest of them' % (rw, rw, rw)


@pytest.mark.parametrize('rw', DIRS)
def test_a_clear_win(rw):
    p = pick([pt(rw, 'a', 2.0, 1.9, 2.1), pt(rw, 'b', 1.0, 0.9, 1.1)], 0.03)
    assert p['confidence'] == 'clear'
    assert p['verdict'] == ("%s-a is the best: 100%% above the runner-up %s-b, outside the noise "
                            "(its slowest of 3 repeats, 1.9 GB/s, beats the runner-up's fastest, "
                            "1.1 GB/s)" % (rw, rw))


@pytest.mark.parametrize('rw', DIRS)
def test_too_few_repeats(rw):
    p = pick([pt(rw, 'a', 2.0, runs=2), pt(rw, 'b', 1.0, runs=1)], 0.03)
    assert p['confidence'] == 'low'
    assert p['verdict'] == ('%s-a leads the runner-up %s-b by 100%% on 1 repeat(s) per point: too few '
                            'to tell a win from a tie (use --repeat 3 or more)' % (rw, rw))


@pytest.mark.parametrize('rw', DIRS)
def test_no_pick(rw):
    lim = Limits(cvflag=0.05, cvrel=2, cvmax=0.2, cache=1.1, costtol=0.03)
    plan = [{'point': '%s-a' % rw, 'kind': 'tswap', 'rw': rw},
            {'point': '%s-b' % rw, 'kind': 'tswap', 'rw': rw}]
    res = [{'point': k, 'status': 'ok', 'gbs': g, 'steady': False}
           for k, g in (('%s-a' % rw, 1.0), ('%s-b' % rw, 2.0))]
    agg = aggregate(res, plan, lim)
    assert agg['best'][rw] is None
    assert none_why(agg, rw) == ("all 2 %s points with a result are flagged (2 not steady): fio's "
                                 "steady state did not attain; rerun with a longer --runtime" % rw)


def test_sentence_names_the_cheaper_points_left_out():
    d = Decision(rw='read', point='a', confidence='tie', tied=('a', 'b', 'c', 'd'), within=2,
                 out=(Out('c', 0.9), Out('d', 0.8)), top='x', top_gbs=1.0)
    assert sentence(d) == ('a, b, c and d tie within noise; a is the cheapest of the 2 within 3% '
                           'of the fastest median; c and d are cheaper, but their fastest repeats, at most '
                           '0.9 GB/s, are more than 3% below the fastest median, 1 GB/s (x)')


def test_above_ceiling_warning_says_reads_of_a_read_and_writes_of_a_write():
    # issue 38: "a cache in the device is serving reads" was said of a write
    from tswap.report.sections import report_warnings
    agg = {'points': [{'point': 'read-a', 'rw': 'read', 'gbs': 9.0, 'above_ceiling': True, 'status': 'ok'},
                      {'point': 'write-a', 'rw': 'write', 'gbs': 9.0, 'above_ceiling': True, 'status': 'ok'}]}
    r, w = report_warnings(agg, 0.05)
    assert 'serving reads' in r and 'DeepSpeed issue #998' in r
    assert 'serving reads' not in w and 'taking the writes' in w


V = 'read-a is the best: 12.3% above the runner-up read-b, outside the noise'


def test_a_stopped_budget_names_the_points_not_run_and_the_once_budget():
    # tests/fixtures/runs/budget-stopped: 5 of 8 not run, 106 s for every point once
    assert budget_stopped(V, 5, 8, 106) == V + (
        ' (the budget ran out before 5 of the 8 points ran: the best of those that ran; '
        'about 106 s run every point once here)')


def test_a_stopped_budget_without_its_once_budget_says_no_figure():
    # a stop without once_budget_s (budget.json's stopped from an older
    # run) was "about null s run every point once here"
    assert budget_stopped(V, 1, 8, None) == V + (
        ' (the budget ran out before 1 of the 8 points ran: the best of those that ran)')


def test_a_combined_pair_names_its_figures_as_read_plus_write():
    # a pair's gbs, lo, hi are read's plus write's (aggregate.py pairs);
    # stdout's pick line said "the fastest median, 5.346 GB/s" of such a
    # sum, which a reader takes for one direction
    a = {'point': 'a', 'gbs': 2.0, 'lo': 1.6, 'hi': 2.4, 'ok_runs': 3, 'threads': 4, 'qd': 8,
         'block': 1 << 20, 'submit': 'block'}
    b = dict(a, point='b', gbs=1.8, lo=1.7, hi=1.9, threads=1)
    p = pick([a, b], 0.03)
    assert p['point'] == 'a' and p['confidence'] == 'tie'
    assert p['verdict'].endswith('its fastest repeat, 1.9 GB/s read + write, is more than 3% below '
                                 'the fastest median, 2 GB/s read + write (a)')
    c = dict(a, point='c', gbs=1.0, lo=0.9, hi=1.1, tlo=0.9, thi=1.1)
    win = pick([dict(a, tlo=1.6, thi=2.4), c], 0.03)
    assert win['confidence'] == 'clear'
    assert win['verdict'].endswith("1.6 GB/s read + write, beats the runner-up's fastest, 1.1 GB/s read + write)")
    # one direction keeps plain GB/s
    assert 'read + write' not in pick([pt('read', 'a', 2.0, 1.6, 2.4, threads=4),
                                       pt('read', 'b', 1.8, 1.7, 1.9)], 0.03)['verdict']
