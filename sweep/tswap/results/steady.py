# SPDX-License-Identifier: GPL-2.0-only
"""Steady state of one fio run (docs/sweep.md "Steady state"; fio HOWTO
"Steady state", fio steadystate.c steadystate_check; steady.sh).

fio fits a least-squares line through the last ss_dur one-second samples
of a job and ends the job when the slope is within the criterion. Its
samples count whole I/O units, and with a tensor-sized block one unit is
one op: 400 MiB at 2.5 GB/s is 6 a second, so a steady 5.6 a second
samples as 6,6,6,5,5, whose slope (-0.3 unit/s) is 5.3% of the mean and
bw_slope:2% calls it changing. A window is steady within one op when its
|slope| is at most the slope a one-unit step at the worst place in the
window makes (0.3 for 5 samples, 0.15 for 10): a trend fio could only see
by counting fractions of an op. 8,7,6,5,4 (slope 1) stays not steady.
"""

from __future__ import annotations

from typing import Any, Optional

from .. import jqjson


def _is1(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == 1


def within_one_op(ss: dict) -> bool:
    """A fio steadystate object ({"data": {"iops": [samples, I/O units a
    second]}, "duration": ss_dur s, ...}) whose last window is steady
    within one op (the module's rule). False below 3 samples or when the
    samples are not the whole window (len != duration)."""
    y = (ss.get('data') or {}).get('iops') or []
    n = len(y)
    dur = ss.get('duration')
    if n < 3 or n != (dur if dur is not None and dur is not False else n):
        return False
    xm = (n - 1) / 2
    sxx = jqjson.add([(i - xm) * (i - xm) for i in range(n)])
    ym = jqjson.add(y) / n
    slope = jqjson.add([(i - xm) * (y[i] - ym) for i in range(n)]) / sxx
    step = jqjson.jmax([jqjson.add([i - xm for i in range(k, n)]) / sxx for k in range(1, n)])
    return abs(slope) <= step + 1e-9


def steady_fields(jobs: list[dict]) -> dict:
    """result.json's steady fields from fio's jobs: steady (true: every
    steadystate object attained or is steady within one op; false: one is
    not; null: no job has one, a fixed runtime), steady_s (the longest
    job_runtime, s, when steady), steady_criterion (fio's "ss" text of the
    first), steady_op_jobs (how many are steady within one op only)."""
    ss = [j['steadystate'] for j in jobs if j.get('steadystate') not in (None, False)]
    steady: Optional[bool] = None
    if ss:
        steady = all(_is1(s.get('attained')) or within_one_op(s) for s in ss)
    return {
        'steady': steady,
        'steady_s': (jqjson.jmax([_or(j.get('job_runtime'), 0) for j in jobs]) / 1000
                     if steady is True else None),
        'steady_criterion': _or(ss[0].get('ss'), None) if ss else None,
        'steady_op_jobs': (None if steady is None
                           else len([s for s in ss if not _is1(s.get('attained')) and within_one_op(s)])),
    }


def steady_window_mean(jobs: list[dict]) -> Optional[float]:
    """The sum of the jobs' steady-window means (steadystate.data.bw_mean,
    B/s) when every job attained steady state, else None: a job fio ended
    on a steady window is measured by that window, not by the whole run,
    which keeps a drop before it (a write cliff)."""
    if all(isinstance(j.get('steadystate'), dict) and _is1(j['steadystate'].get('attained'))
           and (j['steadystate'].get('data') or {}).get('bw_mean') is not None for j in jobs):
        return jqjson.add([j['steadystate']['data']['bw_mean'] for j in jobs])
    return None


def _or(x: Any, d: Any) -> Any:
    """jq's x // d."""
    return d if x is None or x is False else x
