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


def _runs(name, gbs, opq, block):
    # a point as aggregate.json gives it: median, min-max, widened by one op
    s = sorted(gbs)
    return pt(name, s[len(s) // 2], s[0], s[-1], block=block,
              tlo=s[0] * (1 - opq), thi=s[-1] * (1 + opq))


def test_tie_at_a_cap_goes_to_the_cheapest_block_despite_the_start_up_burst():
    # tests/drive-sweep.bats "bandwidth-bound" beside other work (issue 38):
    # 4m, 1m, 256k at medians 0.312, 0.302, 0.301 GB/s against a 0.300
    # cap, all tied; 4 MiB tensors for 2 s at 0.3 GB/s: 143 ops, one op
    # 0.7%. A 3% window on the medians held only 4m (0.97 x 0.312 =
    # 0.3026) and picked the costliest block; the intervals reach it.
    opq = 4 * 2**20 / (0.3e9 * 2)
    b4m = _runs('4m', [0.300, 0.312, 0.320], opq, 4 << 20)
    b1m = _runs('1m', [0.298, 0.302, 0.304], opq, 1 << 20)
    b256k = _runs('256k', [0.297, 0.301, 0.302], opq, 256 << 10)
    p = pick([b4m, b1m, b256k], 0.03)
    assert p['tied'] == ['4m', '1m', '256k']
    assert p['point'] == '256k' and p['confidence'] == 'tie'
    assert p['verdict'] == ('256k, 4m and 1m tie within noise (min-max intervals widened by one '
                            'tensor op); 256k is the cheapest of them')


def test_tie_leaves_out_a_point_whose_every_repeat_is_beyond_the_tolerance():
    # docs/sweep.md step 3: tied, but even b's fastest repeat plus one op
    # is more than 3% below the fastest median: b is not picked
    a = pt('a', 1.00, 0.80, 1.20, threads=4)
    b = pt('b', 0.90, 0.85, 0.95, threads=1, thi=0.96)
    p = pick([a, b], 0.03)
    assert p['point'] == 'a'
    assert p['verdict'] == ('a and b tie within noise (min-max intervals widened by one tensor op); '
                            'a is picked: b is cheaper, but its fastest repeat plus one op, 0.96 GB/s, '
                            'is more than 3% below the fastest median, 1 GB/s (a)')
    # within the tolerance by its interval, not its median: picked
    c = pt('c', 0.90, 0.85, 0.975, threads=1)
    assert pick([a, c], 0.03)['point'] == 'c'
