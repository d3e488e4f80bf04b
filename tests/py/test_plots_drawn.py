# SPDX-License-Identifier: GPL-2.0-only
"""A run's plots drawn by gnuplot (tswap.cli.plots draw, as the finish
stage draws them) from tests/fixtures/plots (a hand-written
aggregate.json and one bandwidth log): the Pareto front of the plots'
data (tswap.results.plot_data), the heat maps' palette and titles that
fit, one gnuplot for every plot, and what is left when gnuplot fails or
is not installed. Tests that need gnuplot skip without it; a real sweep's
plots: tests/sweep-plots.bats."""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tswap import jqjson
from tswap.cli import plots
from tswap.executor.local import BWLOG_MSEC
from tswap.results.plot_data import records

FIXTURE = Path(__file__).resolve().parents[2] / 'tests' / 'fixtures' / 'plots'
GNUPLOT = shutil.which('gnuplot')
PATH = os.environ.get('PATH', '')
needs_gnuplot = pytest.mark.skipif(GNUPLOT is None, reason='requires gnuplot')


@pytest.fixture
def run(tmp_path):
    d = tmp_path / 'run'
    shutil.copytree(FIXTURE, d)
    return d


def draw(run: Path, capfd) -> None:
    """The run's plots drawn: no message, no note."""
    plots.draw(str(run), BWLOG_MSEC, False)
    assert capfd.readouterr().err == ''
    notes = run / 'notes.txt'
    assert not notes.exists() or notes.read_text() == '', 'plots noted: %s' % notes.read_text()


def gnuplot_shim(tmp_path: Path, monkeypatch, mode: str) -> Path:
    """A gnuplot first in PATH that logs how many arguments it got to
    TMP/gnuplot.calls (the file returned) and runs the real one; mode
    "fail-many": it fails, drawing nothing, when given more than one script
    (as gnuplot does at a script's error); "noisy": a line on stderr before
    it starts."""
    b = tmp_path / 'bin'
    b.mkdir(exist_ok=True)
    calls = tmp_path / 'gnuplot.calls'
    text = '#!/bin/bash\necho "$#" >>\'%s\'\n' % calls
    if mode == 'fail-many':
        text += '[ "$#" -le 1 ] || { echo "shim: an error" >&2; exit 1; }\n'
    if mode == 'noisy':
        text += 'echo "shim: a start-up warning" >&2\n'
    text += 'exec \'%s\' "$@"\n' % GNUPLOT
    (b / 'gnuplot').write_text(text)
    (b / 'gnuplot').chmod(0o755)
    monkeypatch.setenv('PATH', '%s:%s' % (b, PATH))
    return calls


def gp_names(run: Path) -> list[Path]:
    return sorted((run / 'plots').glob('*.gp'))


def edge_ink(png: Path, tmp_path: Path) -> int:
    """How many pixels of png's three outermost columns on the left and on
    the right are not white (a title or label cut at an edge)."""
    px = tmp_path / 'px'
    subprocess.run([GNUPLOT, '-e', "set table '%s'; plot '%s' binary filetype=png with rgbimage" % (px, png)],
                   check=True)
    rows = [f for f in (x.split() for x in px.read_text().splitlines()) if f and re.fullmatch('[0-9]+', f[0])]
    w = max(int(f[0]) for f in rows)
    assert w >= 100, '%s: cannot read its pixels' % png
    return sum(1 for f in rows if (int(f[0]) < 3 or int(f[0]) > w - 3)
               and (float(f[2]) < 255 or float(f[3]) < 255 or float(f[4]) < 255))


def test_plot_data_pareto_front_of_trusted_points_flagged_and_other_direction_out_pick_marked(run):
    recs = {h: ''.join(x + '\n' for x in lines).rstrip('\n')
            for h, lines in records(jqjson.loads((run / 'aggregate.json').read_text()))}
    # block 0: every read point with a result by GB/s; b8m-q32 is beaten
    # by b1m-q8 at the same p99, b1m-q32 by b4m-q8; b4m-q8 and b8m-q8
    # tie (neither beats the other): both on the front; b4m-q32 beats
    # everything but is flagged; b2m-q8 failed; the write point is out
    assert recs[('latency', 'read')] == """0.500000 10.000 beaten 0 b8m-q32
1.000000 10.000 front 0 b1m-q8
1.500000 25.000 beaten 0 b1m-q32
2.000000 20.000 front 1 b4m-q8
2.000000 20.000 front 0 b8m-q8
3.000000 5.000 flagged 0 b4m-q32


1.000000 10.000 b1m-q8
2.000000 20.000 b4m-q8
2.000000 20.000 b8m-q8"""
    # a direction without points: no record
    assert ('latency', 'readwrite') not in recs


@needs_gnuplot
def test_latency_plots_per_direction_heat_maps_in_viridis_with_readable_labels(run, capfd):
    draw(run, capfd)
    p = run / 'plots'
    assert (p / 'latency-read.png').exists() and (p / 'latency-write.png').exists()
    assert not (p / 'latency-readwrite.png').exists()
    gp = (p / 'latency-read.gp').read_text().splitlines()
    assert any(re.search('index 1 using 1:2 with linespoints .*title "Pareto front"', x) for x in gp), 'no front'
    assert any(re.search('pt 6 ps 4 .*title "pick"', x) for x in gp), 'no pick circled'
    heat = sorted(p.glob('heat-*.gp'))
    assert heat
    for f in heat:
        text = f.read_text()
        assert ("set palette defined (0 '#440154', 1 '#472c7a', 2 '#3b518b', 3 '#2c718e', 4 '#21908d', "
                "5 '#27ad81', 6 '#5cc863', 7 '#aadc32', 8 '#fde725')") in text.splitlines(), '%s: not viridis' % f
        assert 'rgbformulae' not in text
        assert 'with labels textcolor rgb variable' in text, '%s: labels in one colour' % f
    assert (p / 'heat-read-overlap-block.png').exists()
    # white labels on the dark half (below 0.55 of the best 3 GB/s), black on the light
    cells = [' '.join((x.split() + ['', '', '', ''])[2:4]) for x in (p / 'heat-read-overlap-block.dat').read_text()
             .splitlines()]
    assert ' '.join(sorted(cells, key=lambda x: (float(x.split()[0]) if x.split() else 0, x))) + ' ' == \
        '0.5 16777215 1 16777215 1.5 16777215 2 0 2 0 3 0 '


@needs_gnuplot
def test_no_title_or_label_is_cut_at_the_left_or_right_edge_of_any_plot(run, capfd, tmp_path):
    draw(run, capfd)
    # the bandwidth plot's title is as long as a real one (118 characters)
    bw = run / 'plots' / 'bw-read-libaio-t16m-b4m-q8-block-overlap-p1-d2'
    assert bw.with_suffix('.png').exists()
    pngs = sorted((run / 'plots').glob('*.png'))
    assert len(pngs) >= 5
    for png in pngs:
        assert edge_ink(png, tmp_path) == 0, '%s: pixels drawn at the left or right edge (a clipped title?)' % png
    # and the title that did not fit on one line was wrapped, not shrunk
    assert any(re.search(r'^set title .*\."\\n"\.', x) for x in bw.with_suffix('.gp').read_text().splitlines())


@needs_gnuplot
def test_one_gnuplot_draws_every_plot_when_it_fails_each_is_drawn_alone(run, capfd, tmp_path, monkeypatch):
    # its messages split per plot (its start-up's in gnuplot.log)
    calls = gnuplot_shim(tmp_path, monkeypatch, 'pass')
    draw(run, capfd)
    gps = gp_names(run)
    n = len(gps)
    assert n >= 5
    for gp in gps:
        assert gp.with_suffix('.png').exists() and gp.with_suffix('.log').exists()
    assert calls.read_text() == '%d\n' % (n * 3)
    assert not (run / 'plots' / 'gnuplot.log.tmp').exists()
    for log in (run / 'plots').glob('*.log'):
        assert not any(x.startswith('@@ ') for x in log.read_text().splitlines()), \
            "a plot's log holds the markers between the plots"
    # gnuplot fails with the scripts together: each alone, every plot drawn
    shutil.rmtree(run / 'plots')
    calls.unlink()
    gnuplot_shim(tmp_path, monkeypatch, 'fail-many')
    draw(run, capfd)
    got = calls.read_text().splitlines()
    assert got[0] == str(n * 3) and got.count('1') == n
    for gp in gp_names(run):
        assert gp.with_suffix('.png').exists()
    # gnuplot says something before the first script: kept in gnuplot.log
    shutil.rmtree(run / 'plots')
    gnuplot_shim(tmp_path, monkeypatch, 'noisy')
    draw(run, capfd)
    assert 'shim: a start-up warning' in (run / 'plots' / 'gnuplot.log').read_text()
    assert (run / 'plots' / 'latency-read.png').exists()


@needs_gnuplot
def test_without_gnuplot_a_png_whose_dat_or_gp_changed_is_removed_the_rest_kept_one_note(
        run, capfd, tmp_path, monkeypatch):
    draw(run, capfd)
    before = tmp_path / 'before'
    shutil.copytree(run / 'plots', before)
    # every read point twice as fast: the read plots change, the write ones not
    agg = jqjson.loads((run / 'aggregate.json').read_text())
    for p in agg['points']:
        if p.get('rw') == 'read' and p.get('gbs') is not None:
            p['gbs'] = p['gbs'] * 2
    (run / 'aggregate.json').write_text(jqjson.dumps(agg) + '\n')
    nognuplot = tmp_path / 'nognuplot'
    nognuplot.mkdir()
    monkeypatch.setenv('PATH', str(nognuplot))
    plots.draw(str(run), BWLOG_MSEC, False)
    # the data is the run's now, as gnuplot would have drawn it
    assert any(x.startswith('2 ') for x in (run / 'plots' / 'heat-read-overlap-block.dat').read_text().splitlines())
    # each PNG drawn before is there, byte for byte, exactly when its .dat
    # and .gp are unchanged
    kept, removed = [], []
    for png in sorted(before.glob('*.png')):
        now = run / 'plots' / png.name
        if all(filecmp.cmp(png.with_suffix(s), now.with_suffix(s), shallow=False) for s in ('.dat', '.gp')):
            assert filecmp.cmp(png, now, shallow=False), '%s: its data is unchanged but not its picture' % png.name
            kept.append(png.name)
        else:
            assert not now.exists()
            removed.append(png.name)
    assert kept, 'no plot kept: the test changes too much'
    assert removed, 'no plot removed: the test changes nothing'
    assert (run / 'notes.txt').read_text() == (
        'gnuplot is not installed: %d plot(s) kept, drawn from the same .dat and .gp (%s); %d removed: their '
        '.dat or .gp changed and could not be redrawn (%s)\n' % (len(kept), ', '.join(kept), len(removed),
                                                                ', '.join(removed)))


def test_a_plot_gnuplot_fails_on_leaves_no_png_and_a_note(run, tmp_path, monkeypatch):
    # every script fails after its PNG is opened, as gnuplot fails on a
    # plot it cannot draw ("x range is invalid"): an empty NAME.png, exit 1
    b = tmp_path / 'bin'
    b.mkdir()
    (b / 'gnuplot').write_text('#!/bin/bash\nfor a; do [[ $a != *.gp ]] || : >"${a%.gp}.png"; done\n'
                               'echo "shim: x range is invalid" >&2\nexit 1\n')
    (b / 'gnuplot').chmod(0o755)
    monkeypatch.setenv('PATH', '%s:%s' % (b, PATH))
    plots.draw(str(run), BWLOG_MSEC, False)
    assert list((run / 'plots').rglob('*.png')) == []
    failed = [x for x in (run / 'notes.txt').read_text().splitlines()
              if re.fullmatch(r'gnuplot failed for [^ ]* \(see plots/[^ ]*\.log\)', x)]
    gps = list((run / 'plots').rglob('*.gp'))
    assert gps and len(failed) == len(gps)
