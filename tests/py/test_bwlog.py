# SPDX-License-Identifier: GPL-2.0-only
"""tswap.results.bwlog: GB/s over time and "drops during the run"
(docs/sweep.md "Bandwidth over time"; fio HOWTO "Log File Formats")."""
import os

from tswap import jqjson
from tswap.cli.files import shell_glob
from tswap.results.bwlog import by_dir, intervals, read_lines, series, summary, summary_text


def log(start, kibs, step=250):
    return ['%d, %d, 1, 0, 0' % (start + i * step, v) for i, v in enumerate(kibs)]


def test_fixed_is_printf_with_ties_to_even():
    # C's printf("%.pf") on the binary value (tswap.jqjson.fixed)
    assert jqjson.fixed(0.125, 2) == '0.12' and jqjson.fixed(0.375, 2) == '0.38'
    assert jqjson.fixed(2.675, 2) == '2.67'     # 2.67499999... in binary
    assert jqjson.fixed(-1.5, 0) == '-2' and jqjson.fixed(3, 6) == '3.000000'
    for x in (0.1, 1 / 3, 123.456789, 1e-7, 987654.3210987):
        for p in range(7):
            assert jqjson.fixed(x, p) == '%.*f' % (p, x)


def test_intervals_sum_jobs_per_interval():
    # two jobs' logs, 4 ms apart, fall into the same 250 ms interval
    lines = log(250, [1000, 2000]) + log(254, [3000, 500]) + ['garbage', '1, x']
    assert intervals(lines, 250) == [('0.250', '0.004096'), ('0.500', '0.002560')]
    assert series(lines, 250) == '0.250 0.004096\n0.500 0.002560\n'


def test_summary_drop_of_the_last_third():
    lines = log(250, [1953125] * 5 + [976563] * 7)
    s = summary(lines, 250, 8, 20)
    assert s['samples'] == 12 and s['drops'] is True and 45 < s['drop_pct'] < 55
    flat = summary(log(250, [1953125] * 12), 250, 8, 20)
    assert flat['drops'] is False and flat['drop_pct'] == 0


def test_summary_null_when_short_or_without_thirds():
    assert summary_text(log(250, [1000] * 7), 250, 8, 20) == 'null'
    assert summary(log(250, [0] * 12), 250, 8, 20) is None     # a first third of 0


def test_summary_text_is_fixed_point():
    t = summary_text(log(250, [1000000] * 12), 250, 8, 20)
    assert t == ('{"samples": 12, "first_third_gbs": 1.024000, "last_third_gbs": 1.024000, '
                 '"drop_pct": 0.00, "drops": false}')


def test_files_run_on_and_dirs(tmp_path):
    # a last line without its newline runs on into the next file (jq -R)
    (tmp_path / 'a').mkdir()
    (tmp_path / 'b').mkdir()
    fa, fb = tmp_path / 'a' / 'bw_bw.1.log', tmp_path / 'b' / 'bw_bw.1.log'
    fa.write_text('250, 1000, 0, 0, 0\n500, 10')
    fb.write_text('00, 0, 0, 0\n250, 7, 0, 0, 0\n')
    lines = read_lines([str(fa), str(fb)])
    assert lines == [('250, 1000, 0, 0, 0', str(fa)), ('500, 1000, 0, 0, 0', str(fb)),
                     ('250, 7, 0, 0, 0', str(fb))]
    assert [d for d, _ in by_dir(lines, 250)] == [str(tmp_path / 'a'), str(tmp_path / 'b')]


def _logs(mode, d):
    # a directory's bandwidth logs as the sweep reads them: a point's
    # bw_log summary (tswap.cli.result), its GB/s over time by directory
    # (tswap.cli.plots bw_plots)
    lines = read_lines(shell_glob(os.path.join(d, 'bw_bw.*.log')))
    if mode == 'summary':
        return summary_text([x for x, _ in lines], 250, 8, 20) + '\n'
    return dict(by_dir(lines, 250)).get(d, '')


def _write(path, start, kibs, step=250):
    path.parent.mkdir(exist_ok=True)
    path.write_text(''.join(x + '\n' for x in log(start, kibs, step)))


def test_logs_summary_a_cliff_drops(tmp_path):
    # 12 samples of 250 ms: 2 GB/s for 1 s, then a cliff to 1 GB/s
    _write(tmp_path / 'd' / 'bw_bw.1.log', 250, [1953125] * 5 + [976563] * 7)
    s = jqjson.loads(_logs('summary', str(tmp_path / 'd')))
    assert s['drops'] is True and s['samples'] == 12 and 45 < s['drop_pct'] < 55


def test_logs_summary_flat_short_none(tmp_path):
    _write(tmp_path / 'flat' / 'bw_bw.1.log', 250,
           [1953125, 1900000, 1953125, 2000000, 1953125, 1953125, 1900000, 1953125, 1953125, 2000000])
    s = jqjson.loads(_logs('summary', str(tmp_path / 'flat')))
    assert s['drops'] is False and abs(s['drop_pct']) < 5
    # under BWLOG_MIN_SAMPLES (2 s): noise, not a trend
    _write(tmp_path / 'short' / 'bw_bw.1.log', 250, [1953125, 976563, 976563])
    assert _logs('summary', str(tmp_path / 'short')) == 'null\n'
    (tmp_path / 'none').mkdir()
    assert _logs('summary', str(tmp_path / 'none')) == 'null\n'


def test_logs_series_sums_jobs_per_interval(tmp_path):
    # fio's sample times jitter by a few ms from job to job
    _write(tmp_path / 'd' / 'bw_bw.1.log', 250, [976563] * 3)
    _write(tmp_path / 'd' / 'bw_bw.2.log', 251, [976563] * 3)
    out = _logs('series', str(tmp_path / 'd')).splitlines()
    assert len(out) == 3 and out[0] == '0.250 2.000001' and out[2] == '0.750 2.000001'
