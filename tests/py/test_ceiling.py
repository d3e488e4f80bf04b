# SPDX-License-Identifier: GPL-2.0-only
"""The ceiling measured like a point (docs/sweep.md "What a run does",
step 2; issue 38, item 1): one that does not repeat flags nothing, and
report.md and the summary say so and what to do."""
from tswap.report.head import ceiling_cautions, report_head
from tswap.report.summary import summary_text
from tswap.stats.aggregate import Limits, aggregate

LIM = Limits(cvflag=0.05, cvrel=2, cvmax=0.2, cache=1.1, costtol=0.03)
CKEY = 'ceiling-write-fio-libaio-bs1m-qd64'


def plan():
    return [{'point': CKEY, 'kind': 'ceiling', 'rw': 'write'},
            {'point': 'write-a', 'kind': 'tswap', 'rw': 'write', 'threads': 1, 'qd': 8,
             'block': 1 << 20, 'submit': 'block'},
            {'point': 'write-b', 'kind': 'tswap', 'rw': 'write', 'threads': 1, 'qd': 32,
             'block': 4 << 20, 'submit': 'block'}]


def runs(ceiling, a, b):
    out = [{'point': CKEY, 'repeat': i + 1, 'status': 'ok', 'gbs': g} for i, g in enumerate(ceiling)]
    for k, gs in (('write-a', a), ('write-b', b)):
        out += [{'point': k, 'repeat': i + 1, 'status': 'ok', 'gbs': g} for i, g in enumerate(gs)]
    return out


def test_a_ceiling_that_does_not_repeat_flags_nothing():
    # issue 38, the default sweep on a VM: the write ceiling's repeats
    # 0.041, 3.12 and 4.015 GB/s (median 3.12) flagged the fastest write
    # (median 4.54 > 1.1 x 3.12) and the slowest trustworthy one was picked
    agg = aggregate(runs([0.041, 3.12, 4.015], [2.50, 2.54, 2.58], [4.50, 4.54, 4.60]), plan(), LIM)
    assert agg['ceiling'] == {'write': 3.12}
    u = agg['ceiling_unrepeated']['write']
    assert u['why'] == ['cv'] and u['ok_runs'] == 3 and u['cv'] > u['cv_limit'] == 0.05
    assert not any(p['above_ceiling'] for p in agg['points'])
    assert agg['best']['write']['point'] == 'write-b'


def test_a_ceiling_that_repeats_still_flags_a_cache():
    agg = aggregate(runs([3.10, 3.12, 3.15], [2.50, 2.54, 2.58], [4.50, 4.54, 4.60]), plan(), LIM)
    assert 'ceiling_unrepeated' not in agg
    b = [p for p in agg['points'] if p['point'] == 'write-b'][0]
    assert b['above_ceiling'] and 'above ceiling' in b['flags']
    assert agg['best']['write']['point'] == 'write-a'
    assert ceiling_cautions(agg) == []


def test_a_single_ceiling_run_cannot_be_judged_and_counts():
    agg = aggregate(runs([3.12], [2.54], [4.54]), plan(), LIM)
    assert 'ceiling_unrepeated' not in agg
    assert [p['above_ceiling'] for p in agg['points']] == [False, True]


def test_report_and_summary_say_the_ceiling_does_not_repeat_and_what_to_do():
    agg = aggregate(runs([0.041, 3.12, 4.015], [2.50, 2.54, 2.58], [4.50, 4.54, 4.60]), plan(), LIM)
    (c,) = ceiling_cautions(agg)
    assert c.startswith('the write ceiling does not repeat (CV ')
    assert 'over 3 repeats (0.041-4.015 GB/s) > 5%' in c
    assert 'no point is flagged above it' in c
    for what in ('--precondition', 'a longer --runtime', 'a block device'):
        assert what in c
    head = report_head({'ceiling': True}, agg, '', False)
    assert '- caution: ' + c in head
    assert 'caution:    ' + c in summary_text(agg, 'RUN', None).splitlines()


def test_a_fleet_wide_ceiling_cv_is_the_spread_between_hosts_not_repeats():
    # tswap.stats.aggregate.Limits.cvtrust false: each run is a host's median
    lim = Limits(cvflag=0.05, cvrel=2, cvmax=0.2, cache=1.1, costtol=0.03, cvtrust=False)
    agg = aggregate(runs([0.041, 3.12, 4.015], [2.50, 2.54, 2.58], [4.50, 4.54, 4.60]), plan(), lim)
    assert 'ceiling_unrepeated' not in agg


def link_meta():
    # a PCIe 3.x x1 link: 0.985 GB/s
    return {'pcie': {'current_link_speed': '8.0 GT/s PCIe', 'current_link_width': 1}}


def test_a_ceiling_above_the_link_flags_nothing_and_the_report_says_why():
    # the write ceiling at 3.12 GB/s through a 0.985 GB/s link: a cache on
    # the host served it, so it is not the device's rate; write-b (4.54) is
    # above the link, but not "above ceiling" against such a ceiling
    agg = aggregate(runs([3.10, 3.12, 3.15], [0.88, 0.90, 0.92], [4.50, 4.54, 4.60]), plan(), LIM,
                    link_meta())
    assert 'ceiling_unrepeated' not in agg
    assert agg['ceiling_above_link'] == {'write': {'point': CKEY, 'gbs': 3.12,
                                                   'link_gbs': agg['link']['gbs']}}
    assert not any(p['above_ceiling'] for p in agg['points'])
    a, b = agg['points']
    assert a['trusted'] and b['flags'] == ['above the link']
    (c,) = ceiling_cautions(agg)
    assert c.startswith('the write ceiling, 3.12 GB/s, is above what the PCIe link carries, 0.985 GB/s '
                        '(x1 at 8 GT/s, 128b/130b): a cache on the host served it')
    assert 'no point is flagged above it' in c and 'a block device' in c
    assert 'caution:    ' + c in summary_text(agg, 'RUN', None).splitlines()


def test_a_ceiling_below_the_link_still_flags_a_cache():
    agg = aggregate(runs([3.10, 3.12, 3.15], [2.50, 2.54, 2.58], [4.50, 4.54, 4.60]), plan(), LIM,
                    {'pcie': {'current_link_speed': '8.0 GT/s PCIe', 'current_link_width': 4}})
    assert 'ceiling_above_link' not in agg
    b = [p for p in agg['points'] if p['point'] == 'write-b'][0]
    assert b['above_ceiling'] and b['flags'] == ['above the link', 'above ceiling']


def test_above_ceiling_is_beyond_both_intervals():
    # the ceiling repeats (CV 4.9% <= 5%): median 3.10, fastest 3.30; the
    # cache factor 1.1 puts the medians' bar at 3.41, the intervals' at 3.63
    c = [3.00, 3.10, 3.30]
    agg = aggregate(runs(c, [3.50, 3.55, 3.60], [3.55, 3.70, 3.75]), plan(), LIM)
    assert 'ceiling_unrepeated' not in agg
    # every repeat of both is within the ceiling's fastest x 1.1: neither
    # is above it beyond the noise (the medians' rule flagged both)
    assert [p['above_ceiling'] for p in agg['points']] == [False, False]
    assert all(p['trusted'] for p in agg['points'])
    # a point whose slowest repeat is above it is flagged
    agg = aggregate(runs(c, [3.50, 3.55, 3.60], [3.65, 3.70, 3.75]), plan(), LIM)
    assert [p['above_ceiling'] for p in agg['points']] == [False, True]


def test_above_ceiling_across_a_fleet_stays_on_the_medians():
    # the intervals of a fleet-wide aggregate are the spread between hosts
    lim = Limits(cvflag=0.05, cvrel=2, cvmax=0.2, cache=1.1, costtol=0.03, cvtrust=False)
    agg = aggregate(runs([3.00, 3.10, 3.30], [3.50, 3.55, 3.60], [3.55, 3.70, 3.75]), plan(), lim)
    assert [p['above_ceiling'] for p in agg['points']] == [True, True]
