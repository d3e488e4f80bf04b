# SPDX-License-Identifier: GPL-2.0-only
"""The plots of a run (RUN/plots/NAME.dat, the data, and NAME.gp, the
gnuplot script that draws NAME.png; docs/sweep.md "Outputs", plots/):
which plots a run has and their text, as pure functions.
tswap.cli.plots writes them and draws them with gnuplot.

- heat-RW-WINDOW-SUBMIT: a heat map per direction and window/submit pair,
  best GB/s per block size and queue depth (900x650).
- best-by-threads: the best read and write GB/s per thread count,
  side by side (800x550).
- latency-RW: p99 completion latency against GB/s per point, the Pareto
  front of the trusted points joined and labelled, flagged points hollow,
  the pick circled (900x600); none without a point with both.
- bw-POINT: a point's GB/s over its measured seconds, one line per
  repeat, from fio's bandwidth logs (900x500); for the best points and
  every point that drops during the run; none without a logged interval.
- hosts: a fleet's best read and write GB/s per host (900x550).

A plot is made only when its data has a point to draw (has_point: a data
line with a number in one of the columns the plot draws as values);
without one, no .dat, .gp or PNG, and no link in the report (gnuplot
fails on a plot of nothing: "x range is invalid"). The outputs' own
notes (a plot gnuplot failed on, no gnuplot: NOTES) are the render's:
each render replaces them (run_notes).

Every path in a script is RUN/plots/NAME.EXT as the run directory was
given (quoted: tswap.report.gnuplot.quote); the data of the first four
comes from tswap.results.plot_data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from .. import jqjson
from .gnuplot import VIRIDIS, quote, script, tics

_NUMBER = re.compile(r'[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?')
_HIST = ('set style data histogram', 'set style histogram cluster gap 1',
         'set style fill solid 0.8 border -1')


@dataclass(frozen=True)
class Plot:
    """plots/NAME.dat holds dat, plots/NAME.gp holds gp (which draws
    plots/NAME.png)."""
    name: str
    dat: str
    gp: str


def _path(run: str, name: str, ext: str) -> str:
    return '%s/plots/%s.%s' % (run, name, ext)


def _plot(run: str, name: str, dat: str, size: str, text: str, lines: list[str]) -> Plot:
    return Plot(name, dat, script(_path(run, name, 'png'), size, text, lines))


def _text(lines: list[str]) -> str:
    return ''.join(x + '\n' for x in lines)


def has_point(lines: list[str], values: tuple[int, ...]) -> bool:
    """Whether a plot's data lines have a point gnuplot can draw: a line,
    not blank nor a "#" comment, with a number in one of the columns
    values (1-based, as gnuplot's `using`; "-" is the missing value)."""
    for line in lines:
        f = line.split()
        if f and not f[0].startswith('#') and any(
                len(f) >= c and _NUMBER.fullmatch(f[c - 1]) for c in values):
            return True
    return False


def heat_plot(run: str, rw: str, window: str, submit: str, blocks: str, qds: str,
              lines: list[str]) -> Optional[Plot]:
    """heat-RW-WINDOW-SUBMIT from its plot_data record (blocks, qds: the
    direction's block sizes, bytes, and queue depths, space-separated);
    None without a point (column 3, GB/s)."""
    if not has_point(lines, (3,)):
        return None
    name = 'heat-%s-%s-%s' % (rw, window, submit)
    d = quote(_path(run, name, 'dat'))
    bl, ql = blocks.split(), qds.split()
    return _plot(run, name, _text(lines), '900,650',
                 '%s GB/s (1e9 B/s), window=%s submit=%s; best over threads, backends, tensor sizes'
                 % (rw, window, submit),
                 ['set xlabel "tswap_block_size"', 'set ylabel "tswap_queue_depth"', 'set cblabel "GB/s"',
                  'set xtics (%s)' % tics(bl, True), 'set ytics (%s)' % tics(ql, False),
                  'set xrange [-0.5:%d.5]' % (len(bl) - 1), 'set yrange [-0.5:%d.5]' % (len(ql) - 1),
                  'set cbrange [0:*]', VIRIDIS, 'set style fill solid 1.0 noborder', 'unset key',
                  'plot %s using 1:2:(0.5):(0.5):3 with boxxyerror fillcolor palette, '
                  '%s using 1:2:(sprintf("%%.2f", $3)):4 with labels textcolor rgb variable' % (d, d)])


def threads_plot(run: str, lines: list[str]) -> Optional[Plot]:
    """best-by-threads from its plot_data record; None without a point
    (a read or write GB/s, columns 2 and 3: a run of readwrite points only
    has "-" for both)."""
    if not has_point(lines, (2, 3)):
        return None
    d = quote(_path(run, 'best-by-threads', 'dat'))
    return _plot(run, 'best-by-threads', _text(lines), '800,550',
                 'best GB/s (1e9 B/s) per tswap_threads (intra_op_parallelism)',
                 ['set xlabel "tswap_threads"', 'set ylabel "GB/s"', 'set yrange [0:*]',
                  'set datafile missing "-"', *_HIST, 'set key top left',
                  'plot %s using 2:xtic(1) title "read", "" using 3 title "write"' % d])


def latency_plot(run: str, rw: str, lines: list[str]) -> Optional[Plot]:
    """latency-RW from its plot_data record (block 0: "GB/s p99_ms class
    pick label", block 1: the front); None without a point (column 2,
    p99)."""
    dat = _text(lines)
    if not has_point(lines, (2,)):
        return None
    name = 'latency-' + rw
    d = quote(_path(run, name, 'dat'))
    return _plot(run, name, dat, '900,600',
                 '%s: p99 completion latency against GB/s (1e9 B/s) per point; line: Pareto front of '
                 'the trusted points; circle: the pick' % rw,
                 ['set xlabel "GB/s"', 'set ylabel "p99 completion latency, ms"', 'set xrange [0:*]',
                  'set yrange [0:*]', 'set grid', 'set key below horizontal',
                  'set offsets graph 0.02, graph 0.15, graph 0.1, 0',
                  'plot {d} index 0 using 1:(strcol(3) eq "flagged" ? $2 : NaN) with points pt 6 ps 1.5 '
                  'lc rgb "gray50" title "flagged (never picked)", {d} index 0 using 1:(strcol(3) eq '
                  '"beaten" ? $2 : NaN) with points pt 7 ps 1.5 lc rgb "#3b518b" title "trusted, beaten", '
                  '{d} index 1 using 1:2 with linespoints lw 2 pt 7 ps 1.5 lc rgb "#e0600a" title '
                  '"Pareto front", {d} index 1 using 1:2:3 with labels left offset char 1.5,0.8 notitle, '
                  '{d} index 0 using 1:($4 == 1 ? $2 : NaN) with points pt 6 ps 4 lw 2 lc rgb "black" '
                  'title "pick"'.format(d=d)])


def bw_plot(run: str, point: str, why: str, runs: list[tuple[str, str]], msec: str) -> Optional[Plot]:
    """bw-POINT: runs are the point's repeats, (POINT.rN, its "SECONDS
    GB/s" lines, "" without a log), in the order they were found; why: the
    reason it is plotted ("best read", "drops 25% during the run"); msec:
    the logs' interval (ms, as given). A data block per repeat, "# POINT.rN"
    first; None without a point (a logged interval: column 2, GB/s)."""
    name = 'bw-' + point
    q = quote(_path(run, name, 'dat'))
    dat = ''.join('# %s\n%s\n\n' % r for r in runs)
    if not has_point(dat.split('\n'), (2,)):
        return None
    plot = ', '.join('%s index %d using 1:2 with linespoints title %s' % (q, i, quote(r.rsplit('.', 1)[-1]))
                     for i, (r, _) in enumerate(runs))
    return _plot(run, name, dat, '900,500',
                 '%s: GB/s (1e9 B/s) over the measured run, fio bw log every %s ms (%s)' % (point, msec, why),
                 ['set xlabel "seconds after ramp_time"', 'set ylabel "GB/s"', 'set yrange [0:*]',
                  'set key bottom right', 'set grid', 'plot ' + plot])


def _or_dash(v: Any) -> str:
    return '-' if v is None or v is False else jqjson.text(v)


def _hosts(fleet: dict) -> list:
    h = fleet.get('hosts')
    return list(h.values()) if isinstance(h, dict) else h


def hosts_plot(run: str, fleet: dict) -> tuple[str, Optional[Plot]]:
    """hosts from fleet.json: (the data, "ID READ WRITE" per host, each
    host's best GB/s, "-" none; the plot, None without a point: no host,
    or none with a figure). Its title gives the fleet's median per
    direction, 3 decimals (0 without one)."""
    lines = ['%s %s %s' % (jqjson.text(h.get('id')), _or_dash(jqjson.get(h, 'best', 'read', 'gbs')),
                           _or_dash(jqjson.get(h, 'best', 'write', 'gbs')))
             for h in _hosts(fleet)]
    dat = _text(lines)
    if not has_point(lines, (2, 3)):
        return dat, None
    med = []
    for d in fleet.get('directions'):
        m = jqjson.get(fleet, 'fleet', d, 'median')
        m = 0 if m is None or m is False else m
        med.append('%s median %s' % (jqjson.text(d), jqjson.text(jqjson.jround(m * 1000) / 1000)))
    d = quote(_path(run, 'hosts', 'dat'))
    return dat, _plot(run, 'hosts', dat, '900,550', 'best GB/s (1e9 B/s) per host, ' + ', '.join(med),
                      ['set ylabel "GB/s"', 'set yrange [0:*]', 'set datafile missing "-"',
                       'set xtics rotate by -30', *_HIST, 'set key top right',
                       'plot %s using 2:xtic(1) title "read", "" using 3 title "write"' % d])


def run_plots(run: str, records: list[tuple[tuple[str, ...], list[str]]]
              ) -> tuple[list[Plot], list[tuple[str, str]]]:
    """The plots of tswap.results.plot_data's records, in their order, and
    the bandwidth plots they ask for: [(POINT, WHY)] (bw_plot draws each
    from the point's logs)."""
    plots: list[Optional[Plot]] = []
    bw: list[tuple[str, str]] = []
    for head, lines in records:
        kind = head[0]
        if kind == 'heat':
            plots.append(heat_plot(run, *head[1:6], lines))
        elif kind == 'threads':
            plots.append(threads_plot(run, lines))
        elif kind == 'latency':
            plots.append(latency_plot(run, head[1], lines))
        elif kind == 'bw':
            bw.append((head[1], head[2]))
    return [p for p in plots if p is not None], bw


LATENCY_NOTE = ('latency-DIR: p99 completion latency (median over repeats) against GB/s per point; the line '
                'joins the Pareto front, the trusted points no other trusted point beats on both; hollow: '
                'flagged; circled: the best DIR point.\n\n')


def links(pngs: list[str]) -> str:
    """The reports' Plots section: a Markdown image line (and a blank line)
    per PNG of plots/ (names, in the directory listing's collated order),
    the latency ones first with a line on how to read them; "" without
    plots."""
    lat = [n for n in pngs if n.startswith('latency-')]
    text = ''.join('![%s](plots/%s)\n\n' % (n[:-4], n) for n in lat) + (LATENCY_NOTE if lat else '')
    return text + ''.join('![%s](plots/%s)\n\n' % (n[:-4], n) for n in pngs if not n.startswith('latency-'))


def still_drawn(plots: list[Plot], drawn: list[tuple[str, Optional[str], Optional[str]]]
                ) -> tuple[list[str], list[str]]:
    """Without gnuplot to redraw them, which PNGs drawn before still show
    the run's data: drawn [(NAME.png, the NAME.dat and NAME.gp it sits
    beside, None: missing)], in the listing's order; a PNG is current
    when plots (the run's plots now) has NAME with that very .dat and
    .gp text. (the current PNGs, the stale ones), names in drawn's order."""
    now = {p.name: (p.dat, p.gp) for p in plots}
    kept = [png for png, dat, gp in drawn if dat is not None and now.get(png[:-4]) == (dat, gp)]
    return kept, [png for png, _, _ in drawn if png not in kept]


# The first words of every note tswap.cli.plots writes into notes.txt
# (failed_note, no_gnuplot_note); no note of the points' run (util.sh
# note, tswap.cli.budget_run) starts so.
NOTES = ('gnuplot failed for ', 'gnuplot is not installed: ')


def failed_note(name: str) -> str:
    """The note on a plot gnuplot failed on (its messages: plots/NAME.log)."""
    return 'gnuplot failed for %s (see plots/%s.log)' % (name, name)


def run_notes(text: str) -> str:
    """notes.txt's text without the outputs' own notes (lines that start
    with one of NOTES, left by an earlier render): the notes of the
    points' run, which every render keeps, as they were, in their order."""
    lines = text.split('\n')
    last = lines.pop()  # after the last newline: '' when text ends with one
    out = ''.join(x + '\n' for x in lines if not x.startswith(NOTES))
    return out if last.startswith(NOTES) else out + last


def no_gnuplot_note(kept: list[str], stale: list[str]) -> str:
    """The report's one line without gnuplot: no plots, or which PNGs
    are kept (drawn from the same data) and which removed (their data
    changed and could not be redrawn), names as given."""
    if not kept and not stale:
        return 'gnuplot is not installed: no plots'
    out = []
    if kept:
        out.append('%d plot(s) kept, drawn from the same .dat and .gp (%s)' % (len(kept), ', '.join(kept)))
    else:
        out.append('no plots')
    if stale:
        out.append('%d removed: their .dat or .gp changed and could not be redrawn (%s)'
                   % (len(stale), ', '.join(stale)))
    return 'gnuplot is not installed: ' + '; '.join(out)
