# SPDX-License-Identifier: GPL-2.0-only
"""tswap.stats.pick: the trust flags, the cost order and the pick, as
docs/sweep.md "How the pick is made" gives them."""
from tswap.stats.pick import cost, flags, none_why, pick
from tswap.stats.sentence import names


def pt(name, gbs, lo=None, hi=None, runs=3, threads=1, qd=8, block=1 << 20,
       submit='block', **kw):
    p = {'point': name, 'gbs': gbs, 'lo': gbs if lo is None else lo,
         'hi': gbs if hi is None else hi, 'ok_runs': runs, 'threads': threads, 'qd': qd,
         'block': block, 'submit': submit, 'rw': 'read'}
    p.update(kw)
    return p


def test_flags_name_every_reason_in_order():
    # docs/sweep.md "How the pick is made", the flags table
    assert flags({'above_ceiling': True, 'status': 'partial', 'cv_flag': True,
                  'steady': False}) == ['above ceiling', 'partial', 'cv', 'not steady']
    assert flags({'status': 'error'}) == ['failed']
    assert flags({'status': 'not run'}) == ['not run']
    assert flags({'status': 'ok', 'steady': None}) == []


def test_cost_order_threads_then_pinned_memory_then_block_submit_then_speed():
    # "Cost order: fewer threads, less pinned memory (qd x block), block
    # submit, higher median"
    a = pt('a', 1.0, threads=2, qd=1)
    b = pt('b', 1.0, threads=1, qd=64)
    assert sorted([a, b], key=cost)[0] is b
    c = pt('c', 1.0, qd=8, block=1 << 20)
    d = pt('d', 1.0, qd=4, block=4 << 20)
    assert sorted([d, c], key=cost)[0] is c
    e = pt('e', 1.0, submit='single')
    f = pt('f', 1.0, submit='block')
    assert sorted([e, f], key=cost)[0] is f
    g = pt('g', 1.0)
    h = pt('h', 1.1)
    assert sorted([g, h], key=cost)[0] is h


def test_only_candidate():
    p = pick([pt('a', 1.0)], 0.03)
    assert p['confidence'] == 'only'
    assert p['verdict'] == 'a is the only trustworthy point: nothing to compare it with'
    assert p['runner_up'] is None and p['margin_pct'] is None


def test_clear_win_outside_the_noise():
    p = pick([pt('a', 2.0, 1.9, 2.1), pt('b', 1.0, 0.9, 1.1)], 0.03)
    assert p['point'] == 'a' and p['confidence'] == 'clear' and not p['tie']
    assert p['verdict'] == ("a is the best: 100% above the runner-up b, outside the noise "
                            "(its slowest of 3 repeats, 1.9 GB/s, beats the runner-up's fastest, 1.1 GB/s)")


def test_clear_win_with_intervals_widened_by_one_op():
    p = pick([pt('a', 2.0, 1.9, 2.1, tlo=1.8), pt('b', 1.0, 0.9, 1.1, thi=1.2)], 0.03)
    assert 'less one tensor op, 1.8 GB/s, beats the runner-up\'s fastest plus one, 1.2 GB/s' in p['verdict']


def test_tie_goes_to_the_cheapest_within_the_tolerance():
    # a (costly: 4 threads) is fastest; b overlaps it and is within 3%
    a = pt('a', 1.00, 0.95, 1.05, threads=4)
    b = pt('b', 0.98, 0.93, 1.02, threads=1)
    p = pick([a, b], 0.03)
    assert p['point'] == 'b' and p['confidence'] == 'tie' and p['tied'] == ['a', 'b']
    assert p['verdict'] == 'b and a tie within noise; b is the cheapest of them'



def test_too_few_repeats_is_low_confidence():
    p = pick([pt('a', 2.0, runs=1), pt('b', 1.0, runs=1)], 0.03)
    assert p['confidence'] == 'low'
    assert p['verdict'].startswith('a leads the runner-up b by 100% on 1 repeat(s) per point')


def test_no_candidate_no_pick():
    assert pick([], 0.03) is None


def test_names():
    assert names([]) == '' and names(['a']) == 'a'
    assert names(['a', 'b', 'c']) == 'a, b and c'


def test_none_why_counts_flags_most_first_and_advises():
    agg = {'points': [
        {'rw': 'read', 'gbs': 1.0, 'flags': ['cv']},
        {'rw': 'read', 'gbs': 1.0, 'flags': ['cv', 'not steady']},
        {'rw': 'read', 'gbs': None, 'flags': ['failed'], 'status': 'error'},
    ]}
    assert none_why(agg, 'read') == (
        'all 2 read points with a result are flagged (2 cv, 1 not steady): not repeatable; '
        'rerun with a longer --runtime (10 s or more) on an idle machine')
    assert none_why(agg, 'write') is None
    ran_out = {'points': [{'rw': 'write', 'gbs': None, 'status': 'not run',
                           'errors': ['the budget ran out before it ran']}]}
    assert none_why(ran_out, 'write') == 'no write point ran: the budget ran out first (Budget)'
