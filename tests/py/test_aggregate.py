# SPDX-License-Identifier: GPL-2.0-only
"""tswap.stats.aggregate: medians, CV, the CV limit, the ceiling and the
picks over repeats (docs/sweep.md "How the pick is made")."""
import pytest

from tswap.stats.aggregate import Limits, aggregate, cv, cv_limit, median, opq

LIM = Limits(cvflag=0.05, cvrel=2, cvmax=0.20, cache=1.10, costtol=0.03)


def test_median_skips_unknown_values():
    assert median([3.0, None, 1.0, 2.0]) == 2.0
    assert median([1.0, 2.0]) == 1.5
    assert median([None]) is None


def test_cv_is_sample_sd_over_mean():
    assert cv([1.0]) is None
    assert cv([0.0, 0.0]) is None
    assert cv([1.0, 3.0]) == pytest.approx(2 ** 0.5 / 2)


def test_opq_one_op_of_the_handle_bytes():
    # a run that moved 4 tensors per handle resolves GB/s to 1/4
    run = {'tensor': 1 << 24, 'handles': [{'bytes': 4 << 24}]}
    assert opq(run) == 0.25
    assert opq({'tensor': 1 << 24}) == 0


def test_cv_limit_floor_others_and_cap():
    # max(5%, 2 x the others' median CV, one op), at most 20%
    assert cv_limit({'cv': 0.01, 'opq': 0}, [0.01], LIM) == 0.05
    assert cv_limit({'cv': 0.10, 'opq': 0}, [0.04, 0.04, 0.10], LIM) == pytest.approx(0.08)
    assert cv_limit({'cv': 0.5, 'opq': 0.5}, [0.5], LIM) == 0.20


def plan_point(rw, kind='tswap', backend='libaio', qd=8, threads=1):
    name = '%s-%s-%s-q%d-p%d' % (rw, kind, backend, qd, threads)
    return {'point': name, 'kind': kind, 'rw': rw, 'backend': backend, 'tensor': 1 << 24,
            'block': 1 << 20, 'qd': qd, 'submit': 'block', 'window': 'overlap',
            'threads': threads, 'iodepth': 2, 'ranks': 1, 'ckey': rw}


def runs(p, *gbs):
    return [{'point': p['point'], 'status': 'ok', 'gbs': g, 'tensor': p['tensor'],
             'handles': [{'bytes': 100 * p['tensor']}]} for g in gbs]


def test_above_ceiling_is_flagged_and_never_picked():
    ceil = plan_point('read', kind='ceiling')
    fast = plan_point('read', qd=32)
    slow = plan_point('read', qd=8)
    res = runs(ceil, 1.0, 1.0, 1.0) + runs(fast, 1.5, 1.5, 1.5) + runs(slow, 0.9, 0.9, 0.9)
    a = aggregate(res, [ceil, fast, slow], LIM)
    assert a['ceiling'] == {'read': 1.0}
    by = {p['point']: p for p in a['points']}
    assert by[fast['point']]['flags'] == ['above ceiling']
    assert a['best']['read']['point'] == slow['point']
    assert a['trust'] == {'trusted': 1, 'flagged': 1, 'libaio_with_result': 2}


def test_combined_pairs_read_and_write_of_the_same_settings():
    r = plan_point('read')
    w = plan_point('write')
    a = aggregate(runs(r, 1.0, 1.0, 1.0) + runs(w, 0.5, 0.5, 0.5), [r, w], LIM)
    c = a['best']['combined']
    assert c['gbs'] == 1.5 and c['read_gbs'] == 1.0 and c['write_gbs'] == 0.5
    assert c['point'] == 'tswap-libaio-q8-p1'
    src = a['best']['aio_source']
    assert src['why'] == 'Best libaio read + write GB/s (sum)' and 'read_gbs' not in src


def test_failed_and_partial_points():
    p = plan_point('read')
    q = plan_point('read', qd=16)
    res = runs(p, 1.0) + [{'point': p['point'], 'status': 'error', 'error': 'fio exited 1'},
                          {'point': q['point'], 'status': 'error', 'error': 'x'}]
    a = aggregate(res, [p, q], LIM)
    by = {x['point']: x for x in a['points']}
    assert by[p['point']]['status'] == 'partial' and by[p['point']]['flags'] == ['partial']
    assert by[q['point']]['status'] == 'error' and by[q['point']]['errors'] == ['x']
    assert a['best']['read'] is None


def test_fleet_wide_cv_does_not_flag():
    p = plan_point('read')
    q = plan_point('read', qd=16)
    res = runs(p, 1.0, 2.0, 3.0) + runs(q, 1.0, 1.0, 1.0)
    per_run = aggregate(res, [p, q], LIM)
    assert 'cv' in {x['point']: x for x in per_run['points']}[p['point']]['flags']
    fleet = aggregate(res, [p, q], Limits(**{**LIM.__dict__, 'cvtrust': False}))
    assert {x['point']: x for x in fleet['points']}[p['point']]['flags'] == []
