# SPDX-License-Identifier: GPL-2.0-only
"""tswap.stats.link: the PCIe link as a limit (issue 38, item 4; PCIe
Base Spec line encodings: 8b/10b at 2.5 and 5 GT/s, 128b/130b from
8 GT/s); a point above it is flagged "above the link" on one host and
across a fleet."""
import pytest

from tswap.report.sections import report_warnings
from tswap.stats.aggregate import Limits, aggregate
from tswap.stats.link import fleet_link, lane_gbs, link_rate
from tswap.stats.pick import none_why

LIM = Limits(cvflag=0.05, cvrel=2, cvmax=0.2, cache=1.1, costtol=0.03)


def meta(speed, width):
    return {'pcie': {'address': '0000:01:00.0', 'current_link_speed': speed,
                     'current_link_width': width, 'max_link_speed': speed, 'max_link_width': width}}


@pytest.mark.parametrize('gts,gbs,enc', [
    (2.5, 0.25, '8b/10b'), (5.0, 0.5, '8b/10b'), (8.0, 0.984615, '128b/130b'),
    (16.0, 1.969231, '128b/130b'), (32.0, 3.938462, '128b/130b'), (64.0, 7.876923, '128b/130b')])
def test_lane_rate_after_encoding(gts, gbs, enc):
    g, e = lane_gbs(gts)
    assert g == pytest.approx(gbs, abs=1e-6) and e == enc


def test_link_rate_from_meta_json():
    # DeepSpeed issue #998's drive: PCIe 3.x x4, 3.94 GB/s
    lk = link_rate(meta('8.0 GT/s PCIe', 4))
    assert lk['gbs'] == pytest.approx(3.938, abs=1e-3)
    assert (lk['width'], lk['speed_gts'], lk['encoding']) == (4, 8.0, '128b/130b')
    assert link_rate(meta('8 GT/s', 4))['gbs'] == lk['gbs']
    # no link: a virtio disk (meta.py's note), no meta, garbage
    assert link_rate({'pcie': {'current_link_speed': None, 'current_link_width': None,
                               'note': 'no PCIe link attributes'}}) is None
    assert link_rate(None) is None
    assert link_rate(meta('Unknown', 4)) is None
    assert link_rate(meta('8.0 GT/s PCIe', 0)) is None


def plan():
    return [{'point': 'read-%s' % k, 'kind': 'tswap', 'rw': 'read', 'threads': 1, 'qd': q,
             'block': 1 << 20, 'submit': 'block'} for k, q in (('a', 8), ('b', 32))]


def results(a, b, host=None):
    out = []
    for k, g in (('read-a', a), ('read-b', b)):
        out += [{'point': k, 'repeat': i + 1, 'status': 'ok', 'gbs': x} for i, x in enumerate(g)]
    return out


def test_a_point_above_the_link_is_flagged_on_one_host():
    # #998: 22-24 GB/s reads through a 3.94 GB/s link; no ceiling run
    agg = aggregate(results([3.2, 3.3, 3.25], [22.0, 24.0, 23.0]), plan(), LIM, meta('8.0 GT/s PCIe', 4))
    a, b = agg['points']
    assert 'above_link' not in a and a['trusted']
    assert b['above_link'] is True and b['flags'] == ['above the link']
    assert agg['best']['read']['point'] == 'read-a'
    assert agg['link']['gbs'] == pytest.approx(3.938, abs=1e-3)
    (w,) = report_warnings(agg, 0.05)
    assert w.startswith('- **read-b**: 23 GB/s is above what the PCIe link carries, 3.938 GB/s '
                        '(x4 at 8 GT/s, 128b/130b)')
    assert 'serving reads' in w


def test_without_a_link_nothing_changes():
    agg = aggregate(results([3.2, 3.3, 3.25], [22.0, 24.0, 23.0]), plan(), LIM, meta(None, None))
    assert 'link' not in agg and not any('above_link' in p for p in agg['points'])


def test_every_point_above_the_link_says_why_there_is_no_pick():
    agg = aggregate(results([20.0, 20.0, 20.0], [22.0, 24.0, 23.0]), plan(), LIM, meta('8.0 GT/s PCIe', 4))
    assert agg['best']['read'] is None
    assert none_why(agg, 'read').startswith('all 2 read points with a result are flagged '
                                            '(2 above the link): faster than the PCIe link carries')


def test_across_a_fleet_the_fastest_host_link_limits_the_median():
    # hosts at x4 Gen3 (3.94) and x4 Gen4 (7.88): a fleet median of 5 GB/s
    # is within the faster link; 9 GB/s is above every host's
    metas = [meta('8.0 GT/s PCIe', 4), meta('16.0 GT/s PCIe', 4), {'pcie': {'note': 'x'}}]
    assert fleet_link(metas)['gbs'] == pytest.approx(7.877, abs=1e-3)
    lim = Limits(cvflag=0.05, cvrel=2, cvmax=0.2, cache=1.1, costtol=0.03, cvtrust=False)
    agg = aggregate(results([5.0, 4.0, 6.0], [9.0, 9.5, 9.2]), plan(), lim, None, metas)
    assert [p.get('above_link', False) for p in agg['points']] == [False, True]
    assert 'meta' not in agg and agg['link']['speed_gts'] == 16.0
    assert fleet_link([None, {}]) is None
