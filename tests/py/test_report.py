# SPDX-License-Identifier: GPL-2.0-only
"""tswap.report: what report.md, summary.csv, the summary on stdout,
compare.md and the run verdict say in each case (docs/sweep.md, Outputs,
exit codes, "How the pick is made"). Every verdict form is reached here."""
from tswap.report import head, md, sections, summary, verdict
from tswap.report.csv import HEADER, summary_csv
from tswap.jqjson import sort_key
from tswap.report.fmt import sz


def pt(name, rw='read', gbs=1.0, **kw):
    p = {'point': name, 'rw': rw, 'gbs': gbs, 'lo': gbs, 'hi': gbs, 'backend': 'libaio',
         'status': 'ok', 'flags': [], 'ok_runs': 3.0}
    p.update(kw)
    return p


SRC = dict(pt('a'), block=1048576.0, qd=8.0, submit='block', window='overlap', threads=1.0,
           tensor=16777216.0, why='the best read', verdict='a is the best: ...')


def test_pick_line_names_the_config_and_verdict():
    out = head.report_pick({'best': {'aio_source': SRC, 'read': SRC}, 'points': [SRC]})
    assert out[0] == ('**Pick** (best-aio.json): libaio, block 1M, queue depth 8, block submit, '
                      'overlap window, 1 thread(s), tensor 16M; the best read: 1 GB/s (min-max 1-1)')
    assert out[1] == '- verdict: a is the best: ...'
    assert out[2] == '- best read: 1 GB/s (min-max 1-1): a is the best: ...'
    assert out[-1] == ''


def test_no_trustworthy_pick_when_every_result_is_flagged():
    agg = {'best': {}, 'trust': {'trusted': 0.0, 'flagged': 2.0},
           'points': [pt('a', flags=['cv']), pt('b', flags=['cv'])]}
    out = head.report_pick(agg)
    assert out[0] == head.NO_TRUSTED
    # tswap.stats.pick.none_why says why, with what to do
    assert out[1].startswith('- best read: none: all 2 read points with a result are flagged (2 cv)')


def test_no_trustworthy_libaio_pick_and_no_pick():
    assert head.report_pick({'trust': {'trusted': 1.0, 'libaio_with_result': 1.0}})[0] == head.NO_TRUSTED_LIBAIO
    assert head.report_pick({'trust': {'trusted': 1.0}})[0] == head.NO_PICK
    assert head.report_pick({}) == [head.NO_PICK, '']


def test_budget_caution_when_the_final_round_is_shorter_than_the_steady_window():
    b = {'steady_window_s': 7.0, 'rounds': [{'runtime': 2.0}, {'runtime': 4.0}]}
    c = head.budget_caution(b)
    assert c.startswith("- caution: the budget's final round ran 4 s per run, fixed: shorter than "
                        "fio's steady-state window (7 s)")
    assert c.endswith('could be flagged not steady')
    assert head.budget_caution(dict(b, steady_budget_s=90.0)).endswith(
        '; --budget 90 gives the final round the window')
    assert head.budget_caution(dict(b, rounds=[{'runtime': 7.0}])) is None
    assert head.budget_caution({'rounds': []}) is None
    assert head.budget_caution(None) is None


def test_sizes_in_fio_units_only_when_whole():
    assert [sz(x) for x in (1073741824.0, 3145728.0, 4096.0, 1536.0, 1000.0, None)] == \
        ['1G', '3M', '4K', '1536', '1000', 'null']


def test_aio_section_forms():
    agg = {'best': {'aio_source': SRC}, 'points': [SRC]}
    best = {'aio': {'block_size': 1.0}}
    out = md._aio_section(agg, best, '{\n  "aio": {}\n}\n\n')
    assert out[0] == 'the best read. Paste into the ds_config (see docs/deepspeed.md):'
    assert out[2] == '```json\n{\n  "aio": {}\n}\n```'
    assert md._aio_section(agg, {'trusted': False, 'reason': 'all flagged\n'}, '') == \
        ['No trustworthy libaio point: no config. all flagged.', '']
    assert md._aio_section({}, {}, '{}') == ['No successful libaio point: no config.', '']


def test_other_backend_note_only_when_it_beats_libaio_in_its_direction():
    pts = [pt('a', gbs=1.0), pt('u', gbs=1.5, backend='io_uring'), pt('w', rw='write', gbs=3.0)]
    assert sections.report_other_backend({'points': pts}).startswith(
        'Note: the io_uring backend did better (1.5 GB/s read)')
    pts[0]['gbs'] = 1.5
    assert sections.report_other_backend({'points': pts}) is None


def test_warning_forms_and_none():
    pts = [pt('c', above_ceiling=True, gbs=9.0), pt('v', cv_flag=True, cv=0.123, cv_limit=None),
           pt('s', steady=False), pt('d', drops=True, drop_pct=21.5),
           pt('e', status='error', errors=['b', 'a', 'b'], gbs=None)]
    w = sections.report_warnings({'points': pts}, 0.05)
    assert w[0].startswith('- **c**: 9 GB/s is more than 10% above the device ceiling')
    assert w[1].startswith('- v: coefficient of variation 12.3% over 3 repeats (> 5%:')
    assert w[2].startswith('- s: not steady:')
    assert w[3].startswith('- d: drops during the run: its last third averaged 22% below')
    assert w[4] == '- e: error: a; b'
    assert sections.report_warnings({'points': [pt('a'), pt('p', status='pruned')]}, 0.05) == ['None.']


def test_points_sorted_by_direction_then_fastest_first_failed_last():
    pts = [pt('w', rw='write'), pt('r1', gbs=1.0), pt('rx', gbs=None, status='error'),
           pt('r2', gbs=2.0, flags=['cv'])]
    rows = sections.report_points({'points': pts})
    assert [r.split(' | ')[0] for r in rows] == ['| r2', '| r1', '| rx', '| w']
    assert rows[0].endswith('| ok, flagged: cv |')


def test_ranks_section_only_with_several_handles():
    assert sections.report_ranks({'points': [pt('a')]}) == []
    out = sections.report_ranks({'points': [pt('m', rw='readwrite'), pt('n', ranks=2.0,
                                            targets=[{'target': '/t', 'gbs': 0.5}])]})
    assert out[4].startswith('| n | 2 | 1 |') and '`/t` 0.5' in out[4]
    assert out[5].startswith('| m | 1 |')


def test_jq_sort_order_of_mixed_types():
    xs = ['a', 2.0, None, [1.0], True, False, {'k': 1}]
    assert sorted(xs, key=sort_key) == [None, False, True, 2.0, 'a', [1.0], {'k': 1}]


def test_csv_rows_quote_strings_and_write_missing_numbers_as_empty_strings():
    res = [{'kind': 'ceiling'},
           {'kind': 'tswap', 'point': 'p"1', 'repeat': 1.0, 'status': 'ok', 'rw': 'read',
            'gbs': 1.234567, 'ranks': 2.0, 'clat_p50_us': None, 'error': None}]
    out = summary_csv(res, {'ceiling': {'read-n2': 2.0}})
    lines = out.split('\n')
    assert lines[0] == HEADER and lines[2] == '' and len(lines) == 3
    f = lines[1].split(',')
    assert f[0] == '"p""1"' and f[12] == '1.2346' and f[14] == '""' and f[20] == '61.7' and f[21] == ''


def test_summary_forms():
    agg = {'best': {'read': pt('a', gbs=1.23456), 'aio_source': SRC}, 'ceiling': {},
           'points': [pt('a'), pt('b', rw='write', gbs=None, status='error')]}
    out = summary.summary_text(agg, 'RUN', {'aio': {'x': 1.0}}).split('\n')
    assert out[0] == 'best read:  1.235 GB/s (a)'
    assert out[1].startswith('best write: none: no write point succeeded')
    assert out[2] == 'pick:       a (best-aio.json): a is the best: ...'
    assert out[3] == 'ceiling:    not measured'
    assert out[6] == 'best-aio:   RUN/best-aio.json {"x":1}'
    agg = {'best': {}, 'trust': {'flagged': 1.0}, 'ceiling': {'read': 1.0, 'write': 2.0}}
    out = summary.summary_text(agg, 'R', {'trusted': False}).split('\n')
    assert out[:4] == ['best read:  -', 'best write: -',
                       'pick:       none: every point with a result is flagged (report.md, Warnings)',
                       'ceiling:    read 1 GB/s, write 2 GB/s']
    assert out[6] == 'best-aio:   R/best-aio.json "no trustworthy point: no aio block"'


def test_compare_ratio_and_points_of_one_run_only():
    a = {'points': [pt('x', gbs=2.0), pt('y', gbs=0.0)], 'ceiling': {'read': 1.0}}
    b = {'points': [pt('x', gbs=1.0), pt('y', gbs=0.0), pt('z')], 'ceiling': {}}
    out = summary.compare_md('A', 'B', a, b).split('\n')
    assert '| x | 2 | 1 | 2 |' in out and '| y | 0 | 0 | - |' in out and '| z | - | 1 | - |' in out
    assert '| read | 1 | - |' in out


def test_thresholds_pass_fail_and_no_point():
    agg = {'best': {'read': {'gbs': 2.0005}, 'write': None}}
    t = verdict.Thresholds(read='2', write='1.5')
    assert verdict.thresholds(agg, t) == ['PASS: best read 2.001 GB/s >= 2 GB/s',
                                          'FAIL: best write (no successful point) GB/s < 1.5 GB/s']
    assert verdict.thresholds(agg, verdict.Thresholds(read='2.1')) == ['FAIL: best read 2.0005 GB/s < 2.1 GB/s']
    assert verdict.thresholds(agg, verdict.Thresholds()) == []


def test_fixed3_rounds_a_long_double_as_bash_printf():
    # 2.0005 is below the tie as a double but above it as a long double
    assert verdict.fixed3('2.0005') == '2.001'
    assert verdict.fixed3('0.0625') == '0.062'   # an exact tie: half to even
    assert verdict.fixed3('-0') == '-0.000'


def test_run_verdict_failed_runs_then_untrusted():
    ok, bad = {'status': 'ok'}, {'status': 'error'}
    assert verdict.run_verdict([ok, bad, bad], {}, {}) == (2, False)
    assert verdict.run_verdict([ok], {'trust': {'trusted': 0.0, 'flagged': 1.0}}, {}) == (0, True)
    assert verdict.run_verdict([ok], {'trust': {'trusted': 1.0, 'flagged': 1.0}}, {'trusted': False}) == (0, True)
    assert verdict.run_verdict([ok], {'trust': {'trusted': 1.0, 'flagged': 1.0}}, {'aio': {}}) == (0, False)
    assert verdict.run_verdict([ok], {}, {}) == (0, False)


def test_notes_as_sort_u():
    assert md.notes('b\na\nb\n') == 'a\nb'
    assert md.notes('') == ''


def test_budget_header_and_line_from_the_final_round():
    b = {'rounds': [{'round': 1.0, 'runtime': 1.0}, {'round': 2.0, 'runtime': 2.0},
                    {'round': 3.0, 'runtime': 8.0, 'ramp': 1.0, 'repeats': 3.0}]}
    assert md.head_cfg({'runtime': '10', 'x': 1}, b) == {'runtime': '8', 'x': 1, 'ramp': '1', 'repeat': 3.0}
    assert md.budget_line(b) == ('- budget: the pick is made from the final round (round 3): 3 repeat(s) '
                                 'of 8 s after a 1 s ramp; the 2 pruning round(s) before it ran each '
                                 'point once for 1, 2 s, fixed, to rank them (Budget)')
    assert md.budget_line(None) == '' and md.head_cfg({'a': 1}, None) == {'a': 1}
