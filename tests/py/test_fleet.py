# SPDX-License-Identifier: GPL-2.0-only
"""The fleet's rules (docs/fleet.md "Reading the report", "What each host
is", "Checks"): a host's figure, the fleet median, outliers, the bars,
failed hosts, the majority, and the stack checks judged across hosts."""
from tswap.report.fleet import report
from tswap.report.fleet_text import progress, summary
from tswap.results.fleet import host_runs
from tswap.stats.fleet import Bars, best, host_errors, median, verdicts
from tswap.stats.fleet_check import with_checks
from tswap.stats.fleet_meta import majority, with_meta

PLAN = [{'point': 'read-a', 'kind': 'tswap', 'rw': 'read'},
        {'point': 'read-b', 'kind': 'tswap', 'rw': 'read'},
        {'point': 'write-a', 'kind': 'tswap', 'rw': 'write'}]


def host(label, read=None, write=None, read_b=None, failed=0, runs=3):
    """A host's (sweep.json entry, aggregate.json, results.json)."""
    pts = [{'point': 'read-a', 'rw': 'read', 'gbs': read}, {'point': 'read-b', 'rw': 'read', 'gbs': read_b},
           {'point': 'write-a', 'rw': 'write', 'gbs': write}]
    res = [{'status': 'ok'}] * (runs - failed) + [{'status': 'error', 'error': 'not run: host lost (at read-a)'}] * failed
    return {'id': label, 'label': label}, {'points': pts}, res


def judge(hosts, minr='', minw='', out=20.0):
    cfg = {'fleet': {'hosts': [h[0] for h in hosts]}}
    return verdicts(cfg, [h[1] for h in hosts], [h[2] for h in hosts], [None] * len(hosts), PLAN,
                    Bars(min_read=minr, min_write=minw, outlier_pct=out))


def by_label(fl):
    return {h['label']: h for h in fl['hosts']}


def test_host_figure_is_its_best_point_median():
    # "A host's figure per direction is its best point's median"
    _, agg, _ = host('a', read=1.0, read_b=2.5)
    assert best(agg, 'read') == {'point': 'read-b', 'gbs': 2.5, 'pct_ceiling': None}
    assert best(agg, 'write') is None


def test_fleet_median_is_over_the_hosts_figures():
    # "the fleet median ... across hosts"; an even count takes the mean of the middle two
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([1.0, 2.0, 4.0, 3.0]) == 2.5
    fl = judge([host('a', 1.0, 1.0), host('b', 2.0, 1.0), host('c', 3.0, 1.0)])
    assert fl['fleet']['read']['median'] == 2.0
    assert fl['fleet']['read']['spread_pct'] == 100.0


def test_outlier_below_median_less_outlier_pct_fails():
    # "An outlier is below median x (1 - --outlier-pct/100) and fails like a missed bar"
    fl = judge([host('a', 1.0, 1.0), host('b', 1.0, 1.0), host('slow', 0.79, 1.0)], out=20)
    assert fl['fleet']['read']['bar'] == 0.8
    assert fl['fleet']['read']['outliers'] == ['slow']
    h = by_label(fl)
    assert h['slow']['verdict'] == 'FAIL'
    chk = [c for c in h['slow']['checks'] if c['name'] == 'read_vs_fleet'][0]
    assert chk['status'] == 'fail' and chk['message'].endswith('more than 20% below it (outlier)')
    assert h['a']['verdict'] == 'PASS'
    assert fl['summary'] == {'hosts': 3, 'pass': 2, 'fail': 1, 'error': 0}


def test_at_the_outlier_bar_is_not_an_outlier():
    fl = judge([host('a', 1.0, 1.0), host('b', 1.0, 1.0), host('c', 0.8, 1.0)], out=20)
    assert fl['fleet']['read']['outliers'] == []
    assert by_label(fl)['c']['verdict'] == 'PASS'


def test_outlier_pct_100_is_off():
    # docs/fleet.md Running: "--outlier-pct N ... 100: off"
    fl = judge([host('a', 1.0, 1.0), host('b', 0.01, 1.0)], out=100)
    assert fl['fleet']['read']['outliers'] == []


def test_fewer_than_two_results_no_outlier():
    # "with under two results there is none"
    fl = judge([host('a', 1.0, 1.0), host('b', None, 1.0)])
    assert fl['fleet']['read']['n'] == 1 and fl['fleet']['read']['outliers'] == []
    a = by_label(fl)['a']
    assert [c['status'] for c in a['checks'] if c['name'] == 'read_vs_fleet'] == ['pass']


def test_below_the_min_bar_fails_and_the_message_keeps_the_bar_as_given():
    # docs/fleet.md: the bar is --min-read-gbs/--min-write-gbs
    fl = judge([host('a', 5.0, 3.0), host('b', 4.9, 3.5)], minr='5', minw='3', out=100)
    h = by_label(fl)
    assert h['a']['verdict'] == 'PASS'
    assert h['b']['verdict'] == 'FAIL'
    c = [c for c in h['b']['checks'] if c['name'] == 'read_min_gbs'][0]
    assert c == {'name': 'read_min_gbs', 'status': 'fail', 'message': 'best read 4.9 GB/s < 5 GB/s'}
    assert fl['min_read_gbs'] == 5.0 and fl['min_write_gbs'] == 3.0


def test_no_bar_no_min_check():
    fl = judge([host('a', 5.0, 3.0)])
    assert [c['name'] for c in fl['hosts'][0]['checks']] == ['run', 'read_vs_fleet', 'write_vs_fleet']


def test_host_failed_is_error_and_outranks_fail():
    # a failed run or a direction without a result: ERROR (the "run" check)
    fl = judge([host('a', 1.0, 1.0), host('lost', 0.1, 1.0, failed=1)], minr='0.5')
    h = by_label(fl)['lost']
    assert h['verdict'] == 'ERROR'
    assert h['errors'] == [{'reason': 'host lost', 'runs': 1}]
    assert h['checks'][0]['message'] == '1 of 3 runs failed: host lost (1 run(s))'
    fl = judge([host('a', 1.0, 1.0), host('none', None, 1.0)])
    c = [c for c in by_label(fl)['none']['checks'] if c['name'] == 'read_vs_fleet'][0]
    assert c['status'] == 'error' and c['message'] == 'no successful read point'


def test_host_errors_said_once_per_reason():
    runs = [{'status': 'error', 'error': 'not run: lost (at p1)'}, {'status': 'error', 'error': 'not run: lost (at p2)'},
            {'status': 'error', 'error': 'preflight: refused'}, {'status': 'ok'}]
    assert host_errors(runs) == [{'reason': 'lost', 'runs': 2}, {'reason': 'refused', 'runs': 1}]


def test_fleet_results_one_run_per_host_and_point():
    # each host's median is one run of the point; a host without it is an error
    aggs = [{'points': [{'point': 'read-a', 'gbs': 2.0}], 'ceiling': {'read': 3.0}}, {'points': []}]
    plan = [{'point': 'read-a', 'kind': 'tswap', 'rw': 'read'}, {'point': 'c', 'kind': 'ceiling', 'rw': 'read'}]
    r = host_runs(aggs, plan)
    assert [(x['runkey'], x['status'], x['gbs']) for x in r] == [
        ('read-a.h1', 'ok', 2.0), ('c.h1', 'ok', 3.0), ('read-a.h2', 'error', None), ('c.h2', 'error', None)]


def test_majority_is_more_than_half():
    # "What each host is": the majority is over half the hosts with metadata
    assert majority([4.0, 4.0, 2.0], 3) == (True, 4.0)
    assert majority([4.0, 2.0], 2) == (False, None)
    assert majority([4.0, 4.0, None, None], 4) == (False, None)


def test_slow_hosts_grouped_by_how_they_differ():
    meta = {'collected': True, 'pcie': {'current_link_width': 4}, 'queue': {'scheduler': 'none'}}
    slow = dict(meta, pcie={'current_link_width': 2})
    fl = {'hosts': [{'label': x, 'verdict': v} for x, v in (('a', 'PASS'), ('b', 'PASS'), ('c', 'FAIL'), ('d', 'FAIL'))]}
    out = with_meta(fl, [meta, meta, slow, {'collected': False, 'note': 'n'}])
    assert out['meta_majority']['pcie_width'] == 4
    assert [g['text'] for g in out['slow_groups']] == [
        '1 of 2 slow hosts: PCIe x2 instead of x4 (c)', '1 of 2 slow hosts: metadata not collected (d)']


def stack(model='M', fw='1', warn=False):
    return {'collected': True, 'stack': {'model': model, 'firmware': fw, 'pcie_link': 'x4', 'kernel': '6.1'},
            'checks': [{'id': 'numa.node', 'verdict': 'warn' if warn else 'ok', 'advice': 'remote: far'}]}


def test_a_warn_most_hosts_pass_is_a_fail():
    # docs/fleet.md Checks: "a warn that most hosts pass is a fail"
    fl = {'hosts': [{'label': x} for x in 'abc']}
    out = with_checks(fl, [stack(), stack(), stack(warn=True)], {})
    c = out['hosts'][2]['stack_checks'][0]
    assert (c['verdict'], c['escalated']) == ('fail', 'warn')
    out = with_checks({'hosts': [{'label': x} for x in 'ab']}, [stack(), stack(warn=True)], {})
    assert out['hosts'][1]['stack_checks'][0]['verdict'] == 'warn'


def test_firmware_is_compared_within_a_model():
    fl = {'hosts': [{'label': x} for x in 'abcd']}
    out = with_checks(fl, [stack(), stack(), stack(fw='2'), stack(model='N', fw='9')], {})
    fw = {h['label']: [c for c in h['stack_checks'] if c['id'] == 'fleet.firmware'][0]['verdict'] for h in out['hosts']}
    assert fw == {'a': 'ok', 'b': 'ok', 'c': 'fail', 'd': 'n/a'}
    assert out['check_summary']['hosts'] == ['c']


def test_texts_name_the_failing_hosts():
    fl = judge([host('a', 1.0, 1.0), host('b', 1.0, 1.0), host('slow', 0.5, 1.0)])
    lines = summary(fl)
    assert lines[2].startswith('FAIL  slow  read 0.5 GB/s  write 1 GB/s  - 0.5 GB/s is 50% of the fleet median 1 GB/s')
    assert lines[-1] == 'hosts: 2 pass, 1 below the bar, 0 error(s)'
    sweep = {'fleet': {'hosts_file': 'h'}, 'grid_description': '', 'io_size': ''}
    rep = report(sweep, fl, {'points': [], 'best': {}}, [], None, '')
    assert '**FAIL**: 1 of 3 host(s) below the bar or outliers (slow); 2 pass.' in rep
    assert progress([{'status': 'ok', 'gbs': 2.0, 'host': 'a'}, {'status': 'ok', 'gbs': 1.0, 'host': 'b'},
                     {'status': 'error'}]) == '2/3 hosts ok, median 1.5 GB/s, min 1 (b)'


def test_no_trustworthy_libaio_point_names_every_fleet_flag():
    # a fleet-wide median above the fastest host link is flagged "above the
    # link" (tswap.stats.link fleet_link): the no-config line names it
    fl = judge([host('a', 1.0, 1.0), host('b', 1.0, 1.0)])
    sweep = {'fleet': {'hosts_file': 'h'}, 'grid_description': '', 'io_size': ''}
    agg = {'points': [{'point': 'read-a', 'rw': 'read', 'gbs': 22.0, 'flags': ['above the link']}],
           'best': {}}
    rep = report(sweep, fl, agg, [], {'trusted': False, 'reason': 'r'}, '')
    (line,) = [x for x in rep if x.startswith('No trustworthy libaio point')]
    assert 'above the link or the ceiling, failed or not steady' in line
