# SPDX-License-Identifier: GPL-2.0-only
"""tswap.report.plots and tswap.report.gnuplot: which plots a run has
for which data, their titles, tics and quoting, gnuplot's messages split
per plot (docs/sweep.md "Outputs", plots/); tswap.cli.plots: gnuplot
never outlives the process that draws. Every recorded run's plots/*.dat and *.gp:
tests/py/test_rerender.py."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tswap.report import gnuplot
from tswap import jqjson
from tswap.cli.plots import clear_notes
from tswap.report.plots import (LATENCY_NOTE, Plot, bw_plot, failed_note, has_point, heat_plot, hosts_plot,
                                latency_plot, links, no_gnuplot_note, run_notes, run_plots, still_drawn,
                                threads_plot)
from tswap.results.plot_data import records

SWEEP = Path(__file__).resolve().parents[2] / 'sweep'
READWRITE = Path(__file__).resolve().parents[2] / 'tests' / 'fixtures' / 'runs' / 'readwrite'


def test_quote_doubles_quotes_and_keeps_backticks_single_quoted():
    # in a double-quoted gnuplot string `...` would run as a command
    assert gnuplot.quote("it's `id`") == "'it''s `id`'"
    assert gnuplot.quote('') == "''"


def test_title_lines_fit_the_width():
    # (300 - 40) / 9.5: 27 characters a line; blanks collapse
    assert gnuplot.title('300,200', "it's `id` and a title  longer than a 300-pixel plot can hold on one line") \
        == "'it''s `id` and a title'.\"\\n\".'longer than a 300-pixel'.\"\\n\".'plot can hold on one line'"
    # a word longer than a line has a line of its own
    assert gnuplot.title('300,200', 'a %s b' % ('x' * 30)) == "'a'.\"\\n\".'%s'.\"\\n\".'b'" % ('x' * 30)
    assert gnuplot.title('300,200', '') == "''"
    assert gnuplot.title('300,200', '   ') == "''"
    # the first line only (as bash's read took it)
    assert gnuplot.title('900,500', 'one\ntwo') == "'one'"


def test_script_head_then_lines():
    assert gnuplot.script("/r/it's/plots/x.png", '900,500', 'T', ['set grid', 'plot 1']) == (
        "set terminal png size 900,500 noenhanced\nset output '/r/it''s/plots/x.png'\n"
        "set title 'T'\nset grid\nplot 1\n")


def test_tics_sizes_in_fio_notation():
    assert gnuplot.tics(['1048576', '4194304', '4097'], True) == '"1m" 0, "4m" 1, "4097" 2'
    assert gnuplot.tics(['4', '16'], False) == '"4" 0, "16" 1'
    # a block that is not a number is labelled as it is
    assert gnuplot.tics(['null'], True) == '"null" 0'


def test_render_args_mark_each_plot():
    assert gnuplot.render_args([('a', '/p/a.gp'), ('b', '/p/b.gp')]) == [
        '-e', "reset; print '@@ a'", '/p/a.gp', '-e', "reset; print '@@ b'", '/p/b.gp']


def test_split_log_per_plot_start_up_apart():
    start, logs = gnuplot.split_log(b'warm\n@@ a\n@@ b\nline 1\nline 2')
    assert start == b'warm\n'
    assert logs == {'a': b'', 'b': b'line 1\nline 2\n'}
    assert gnuplot.split_log(b'@@ a\n') == (None, {'a': b''})
    assert gnuplot.split_log(b'') == (None, {})


def test_heat_map_needs_data_and_names_window_and_submit():
    assert heat_plot('/r', 'read', 'overlap', 'block', '1048576', '4', []) is None
    p = heat_plot('/r', 'read', 'overlap', 'block', '1048576 4194304', '4 16 32', ['0 0 1 0'])
    assert p.name == 'heat-read-overlap-block' and p.dat == '0 0 1 0\n'
    assert "set title 'read GB/s (1e9 B/s), window=overlap submit=block; best over threads," in p.gp
    assert 'set xtics ("1m" 0, "4m" 1)\nset ytics ("4" 0, "16" 1, "32" 2)\n' in p.gp
    assert 'set xrange [-0.5:1.5]\nset yrange [-0.5:2.5]\n' in p.gp
    assert gnuplot.VIRIDIS + '\n' in p.gp
    assert "plot '/r/plots/heat-read-overlap-block.dat' using 1:2:(0.5):(0.5):3" in p.gp


def test_threads_and_latency_need_a_point():
    assert threads_plot('/r', []) is None
    assert threads_plot('/r', ['1 1 -']).name == 'best-by-threads'
    # a latency record without a data line (a front alone cannot be)
    assert latency_plot('/r', 'read', ['', '']) is None
    p = latency_plot('/r', 'write', ['1.000000 2.000 front 1 b1m', '', '', '1.000000 2.000 b1m'])
    assert p.name == 'latency-write'
    assert p.dat == '1.000000 2.000 front 1 b1m\n\n\n1.000000 2.000 b1m\n'
    assert 'set title %s\n' % gnuplot.title('900,600', 'write: p99 completion latency against GB/s (1e9 B/s) '
                                             'per point; line: Pareto front of the trusted points; circle: the pick') in p.gp


def test_a_point_is_a_number_in_a_value_column():
    assert has_point(['1 - 2'], (2, 3)) and has_point(['1 0.5 -'], (2, 3)) and has_point(['x 1e-3'], (2,))
    assert not has_point(['1 - -'], (2, 3))
    # blank lines, comments, short lines and the x column are no point
    assert not has_point(['', '# p.r1 1', '1', '2 -'], (2,))
    assert not has_point([], (2,))


def test_no_plot_without_a_point_whatever_the_kind():
    # a readwrite run has no read or write figure per thread count: gnuplot
    # fails on "1 - -" ("x range is invalid"), so there is no such plot
    assert threads_plot('/r', ['1 - -']) is None
    assert threads_plot('/r', ['1 - -', '2 - -']) is None
    assert threads_plot('/r', ['1 - -', '2 - 0.5']).dat == '1 - -\n2 - 0.5\n'
    assert heat_plot('/r', 'read', 'overlap', 'block', '1048576', '4', ['0 0 - 0']) is None
    assert latency_plot('/r', 'read', ['1.000000 - front 1 x', '', '']) is None
    assert bw_plot('/r', 'p', 'best read', [('p.r1', '0.250 -\n')], '250') is None
    # hosts without a figure: their hosts.dat, no plot
    fleet = {'hosts': [{'id': 'a', 'best': None}, {'id': 'b', 'best': {'read': None}}],
             'directions': ['read', 'write'], 'fleet': {}}
    assert hosts_plot('/r', fleet) == ('a - -\nb - -\n', None)


def test_the_recorded_readwrite_run_has_no_best_by_threads_plot():
    agg = jqjson.loads((READWRITE / 'aggregate.json').read_text(encoding='utf-8'))
    recs = records(agg)
    assert (('threads',), ['1 - -']) in recs
    plots, bw = run_plots('/r', recs)
    assert [p.name for p in plots] == ['latency-readwrite']
    assert bw == [('readwrite-libaio-t4m-b1m-q4-block-overlap-p1-d2', 'best readwrite')]


def test_bw_plot_one_block_per_repeat_none_without_a_logged_interval():
    assert bw_plot('/r', 'p', 'best read', [], '250') is None
    assert bw_plot('/r', 'p', 'best read', [('p.r1', ''), ('p.r2', '')], '250') is None
    p = bw_plot('/r', 'p', 'drops 25% during the run', [('p.r1', '0.250 1.000000\n'), ('p.r2', '')], '250')
    assert p.dat == '# p.r1\n0.250 1.000000\n\n\n# p.r2\n\n\n'
    assert p.gp.endswith("plot '/r/plots/bw-p.dat' index 0 using 1:2 with linespoints title 'r1', "
                         "'/r/plots/bw-p.dat' index 1 using 1:2 with linespoints title 'r2'\n")
    assert "set title 'p: GB/s (1e9 B/s) over the measured run, fio bw log every 250 ms (drops 25% during the'" \
        ".\"\\n\".'run)'\n" in p.gp


def test_hosts_plot_dashes_for_no_figure_median_in_3_decimals():
    fleet = {'hosts': [{'id': 'a', 'best': {'read': {'gbs': 1.5}}}, {'id': 'b', 'best': None}],
             'directions': ['read', 'write'], 'fleet': {'read': {'median': 1.23456}}}
    dat, p = hosts_plot('/r', fleet)
    assert dat == 'a 1.5 -\nb - -\n'
    assert "set title 'best GB/s (1e9 B/s) per host, read median 1.235, write median 0'\n" in p.gp
    assert hosts_plot('/r', {'hosts': [], 'directions': []}) == ('', None)


def test_run_plots_in_record_order_bandwidth_asked_for():
    recs = [(('heat', 'read', 'overlap', 'block', '1048576', '4'), ['0 0 1 0']),
            (('heat', 'write', 'overlap', 'block', '1048576', '4'), []),
            (('threads',), ['1 1 -']), (('latency', 'read'), ['1 1 front 1 x', '', '', '1 1 x']),
            (('bw', 'p', 'best read'), [])]
    plots, bw = run_plots('/r', recs)
    assert [p.name for p in plots] == ['heat-read-overlap-block', 'best-by-threads', 'latency-read']
    assert bw == [('p', 'best read')]


def test_links_latency_first_with_how_to_read_them_then_the_rest_in_order():
    # the reports' Plots section (report.md, fleet report.md): each PNG a
    # Markdown image and a blank line, the latency plots first and their
    # legend once after them (docs/sweep.md "Outputs"); none: ""
    assert links([]) == ''
    assert links(['best-by-threads.png', 'heat-read-overlap-block.png']) == (
        '![best-by-threads](plots/best-by-threads.png)\n\n'
        '![heat-read-overlap-block](plots/heat-read-overlap-block.png)\n\n')
    got = links(['best-by-threads.png', 'latency-read.png', 'latency-write.png'])
    assert got == ('![latency-read](plots/latency-read.png)\n\n![latency-write](plots/latency-write.png)\n\n'
                   + LATENCY_NOTE + '![best-by-threads](plots/best-by-threads.png)\n\n')
    assert LATENCY_NOTE.startswith('latency-DIR: p99 completion latency') and LATENCY_NOTE.endswith('.\n\n')


def _drawing(tmp_path, script, notes=None):
    """The plots drawn (tswap.cli.plots draw) on a one-point run (notes: its notes.txt) with a
    gnuplot that runs script (sh); its process and the file the fake
    gnuplot writes its pid to."""
    run = tmp_path / 'run'
    run.mkdir()
    if notes is not None:
        (run / 'notes.txt').write_text(notes)
    (run / 'aggregate.json').write_text('{"points": [{"point": "p", "rw": "read", "block": 1048576, "qd": 4, '
                                        '"window": "overlap", "submit": "block", "threads": 1, "gbs": 1}]}')
    bin_ = tmp_path / 'bin'
    bin_.mkdir()
    (bin_ / 'gnuplot').write_text('#!/bin/sh\necho $$ >%s/pid.tmp; mv %s/pid.tmp %s/pid\n%s\n'
                                  % (tmp_path, tmp_path, tmp_path, script))
    (bin_ / 'gnuplot').chmod(0o755)
    env = dict(os.environ, PATH='%s:%s' % (bin_, os.environ.get('PATH', '')))
    # the finish stage's drawing (tswap.cli.plots draw) in a process of its
    # own, with SIGINT's default action (as the sweep gives it)
    proc = subprocess.Popen([sys.executable, '-I', '-B', '-c',
                             'import signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); '
                             'sys.path.insert(0, sys.argv.pop(1)); from tswap.cli.plots import draw; '
                             'draw(sys.argv[1], "250", False)', str(SWEEP), str(run)], env=env)
    pid = tmp_path / 'pid'
    for _ in range(600):
        if pid.exists() or proc.poll() is not None:
            break
        time.sleep(0.1)
    assert pid.exists(), 'the fake gnuplot did not start'
    return proc, int(pid.read_text()), run


def _gone(pid):
    for _ in range(600):
        try:
            with open('/proc/%d/stat' % pid) as f:
                if f.read().rsplit(')', 1)[1].split()[0] == 'Z':
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


def test_a_signal_to_the_drawing_process_kills_gnuplot_then_it(tmp_path):
    proc, pid, _ = _drawing(tmp_path, 'exec sleep 600')
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == -signal.SIGTERM
    assert _gone(pid), 'gnuplot outlived the drawing process'


def test_gnuplot_dies_with_the_drawing_process_even_by_sigkill(tmp_path):
    proc, pid, _ = _drawing(tmp_path, 'exec sleep 600')
    proc.kill()
    assert proc.wait(timeout=60) == -signal.SIGKILL
    assert _gone(pid), 'gnuplot outlived the drawing process'


def test_gnuplot_failing_draws_each_alone_with_a_note(tmp_path):
    proc, _, run = _drawing(tmp_path, 'echo "bad $*" >&2; exit 1')
    assert proc.wait(timeout=60) == 0
    assert (run / 'plots' / 'best-by-threads.log').read_text() == 'bad %s/plots/best-by-threads.gp\n' % run
    assert (run / 'notes.txt').read_text() == ''.join(
        'gnuplot failed for %s (see plots/%s.log)\n' % (n, n) for n in ('best-by-threads', 'heat-read-overlap-block'))
    assert not (run / 'plots' / 'gnuplot.log.tmp').exists()


def test_without_gnuplot_a_png_is_current_only_beside_the_same_dat_and_gp():
    plots = [Plot('a', 'A\n', 'gp a\n'), Plot('b', 'B2\n', 'gp b\n'), Plot('c', 'C\n', 'gp c2\n'),
             Plot('e', 'E\n', 'gp e\n')]
    drawn = [('a.png', 'A\n', 'gp a\n'),     # the same: kept
             ('b.png', 'B\n', 'gp b\n'),      # other data
             ('c.png', 'C\n', 'gp c\n'),      # another script (a title, a path)
             ('d.png', 'D\n', 'gp d\n'),      # no such plot now
             ('e.png', None, 'gp e\n')]        # its .dat is gone: nothing to tell
    assert still_drawn(plots, drawn) == (['a.png'], ['b.png', 'c.png', 'd.png', 'e.png'])
    assert still_drawn([], []) == ([], [])


def test_the_no_gnuplot_note_is_one_line_on_what_is_kept_and_what_removed():
    assert no_gnuplot_note([], []) == 'gnuplot is not installed: no plots'
    assert no_gnuplot_note([], ['b.png', 'c.png']) == (
        'gnuplot is not installed: no plots; 2 removed: their .dat or .gp changed and could not be'
        ' redrawn (b.png, c.png)')
    assert no_gnuplot_note(['a.png'], []) == (
        'gnuplot is not installed: 1 plot(s) kept, drawn from the same .dat and .gp (a.png)')
    assert no_gnuplot_note(['a.png'], ['b.png']) == (
        'gnuplot is not installed: 1 plot(s) kept, drawn from the same .dat and .gp (a.png); 1 removed:'
        ' their .dat or .gp changed and could not be redrawn (b.png)')


def test_the_outputs_notes_are_told_from_the_points_runs():
    mine = [failed_note('heat-read-overlap-block'), no_gnuplot_note([], []),
            no_gnuplot_note(['a.png'], ['b.png'])]
    assert mine[0] == 'gnuplot failed for heat-read-overlap-block (see plots/heat-read-overlap-block.log)'
    points = ['not root: the page cache was not dropped before read points (reads use O_DIRECT, but check the'
              ' ceiling warnings)', 'budget: round 1: the next run needs about 9.8 s', 'a gnuplot note']
    text = '\n'.join([points[0], mine[0], points[1], mine[1], mine[2], points[2]]) + '\n'
    assert run_notes(text) == '\n'.join(points) + '\n'
    # the last line without its newline, as it was
    assert run_notes(mine[1] + '\nx') == 'x'
    assert run_notes('x\n' + mine[1]) == 'x\n'
    assert run_notes('') == ''


def test_clear_notes_keeps_the_points_runs_notes_byte_for_byte(tmp_path):
    nt = tmp_path / 'notes.txt'
    nt.write_bytes(b'\xff a note of the run\ngnuplot is not installed: no plots\nanother\n')
    clear_notes(str(tmp_path))
    assert nt.read_bytes() == b'\xff a note of the run\nanother\n'
    assert sorted(os.listdir(tmp_path)) == ['notes.txt']
    before = nt.stat().st_mtime_ns
    clear_notes(str(tmp_path))
    assert nt.stat().st_mtime_ns == before
    nt.unlink()
    clear_notes(str(tmp_path))
    assert not nt.exists()


def test_a_drawing_replaces_the_notes_an_earlier_one_left(tmp_path):
    # gnuplot fails on every plot: this drawing's notes, the earlier ones gone
    proc, _, run = _drawing(tmp_path, 'exit 1', notes='a note of the points\ngnuplot is not installed: no plots\n'
                          'gnuplot failed for latency-read (see plots/latency-read.log)\n')
    assert proc.wait(timeout=60) == 0
    assert (run / 'notes.txt').read_text() == (
        'a note of the points\n' + ''.join('gnuplot failed for %s (see plots/%s.log)\n' % (n, n)
                                          for n in ('best-by-threads', 'heat-read-overlap-block')))
