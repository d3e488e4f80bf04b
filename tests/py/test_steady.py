# SPDX-License-Identifier: GPL-2.0-only
"""tswap.results.steady: fio's steady state per run and the one-op rule
(docs/sweep.md "Steady state", "Steady within one op"; fio steadystate.c
steadystate_slope: a least-squares slope over the last ss_dur samples)."""
from tswap.results.steady import steady_fields, steady_window_mean, within_one_op


def ss(iops, attained=0, duration=None, bw_mean=None, crit='bw_slope'):
    return {'ss': crit, 'attained': attained, 'duration': len(iops) if duration is None else duration,
            'data': {'iops': iops, 'bw_mean': bw_mean}}


def test_one_op_quantisation_is_steady():
    # 5.6 ops/s samples as 6,6,6,5,5: slope -0.3 unit/s, 5.3% of the mean,
    # which bw_slope:2% calls changing; a one-unit step makes 0.3 (result.jq)
    assert within_one_op(ss([6, 6, 6, 5, 5]))
    assert within_one_op(ss([5, 5, 6, 6, 6]))
    assert within_one_op(ss([6, 6, 6, 6, 6]))


def test_a_trend_of_more_than_one_op_is_not_steady():
    assert not within_one_op(ss([8, 7, 6, 5, 4]))        # slope 1
    assert not within_one_op(ss([6, 6, 6, 5, 4]))        # two units down


def test_the_step_shrinks_with_the_window():
    # 10 samples: a one-unit step at the middle has slope 0.15; one unit
    # over the whole window (0,...,0,1,...,1 split 5/5) is just that
    assert within_one_op(ss([6] * 5 + [5] * 5))
    assert not within_one_op(ss([7, 7, 7, 6, 6, 6, 5, 5, 5, 5]))


def test_short_or_partial_windows_are_not_judged():
    assert not within_one_op(ss([6, 6]))
    assert not within_one_op(ss([]))
    assert not within_one_op({'attained': 0})
    # fewer samples than ss_dur: the window is not full
    assert not within_one_op(ss([6, 6, 6, 5], duration=5))


def test_steady_fields_null_without_steadystate():
    assert steady_fields([{'job_runtime': 1000.0}]) == {
        'steady': None, 'steady_s': None, 'steady_criterion': None, 'steady_op_jobs': None}


def test_steady_fields_attained_and_one_op():
    jobs = [{'job_runtime': 7000.0, 'steadystate': ss([6, 6, 6, 6, 6], attained=1)},
            {'job_runtime': 9000.0, 'steadystate': ss([6, 6, 6, 5, 5])}]
    f = steady_fields(jobs)
    assert f == {'steady': True, 'steady_s': 9.0, 'steady_criterion': 'bw_slope', 'steady_op_jobs': 1}


def test_steady_fields_not_steady():
    f = steady_fields([{'job_runtime': 9000.0, 'steadystate': ss([8, 7, 6, 5, 4])}])
    assert f['steady'] is False and f['steady_s'] is None and f['steady_op_jobs'] == 0


def test_attained_means_the_number_one_not_true():
    # jq's == 1 is false for true (result.jq .attained == 1)
    f = steady_fields([{'job_runtime': 1.0, 'steadystate': ss([8, 7, 6, 5, 4], attained=True)}])
    assert f['steady'] is False


def test_steady_window_mean_only_when_every_job_attained():
    a = {'steadystate': ss([6] * 5, attained=1, bw_mean=2e9)}
    b = {'steadystate': ss([6] * 5, attained=1, bw_mean=1e9)}
    assert steady_window_mean([a, b]) == 3e9
    assert steady_window_mean([a, {'steadystate': ss([6] * 5, attained=0, bw_mean=1e9)}]) is None
    assert steady_window_mean([a, {}]) is None
