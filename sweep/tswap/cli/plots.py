# SPDX-License-Identifier: GPL-2.0-only
"""plots RUN --bwlog-msec MS | plots RUN --hosts: the run's plots, RUN/plots/
NAME.{dat,gp,png,log} (tswap.report.plots lists them), drawn by one
gnuplot.

Without --hosts (the finish stage, one host or a fleet): plots/ made
anew from RUN/aggregate.json, and the bandwidth plots from the points'
fio bandwidth logs (RUN/points/POINT.rN/bw_bw.*.log, MS: their
log_avg_msec). --hosts (a fleet, after its checks): plots/hosts.* from
RUN/fleet.json, plots/ otherwise kept.

gnuplot draws every plot in one run, each after a reset, and its
messages are split per plot into NAME.log (what it says before the first
plot into gnuplot.log); when it fails, each plot is drawn again alone
(gnuplot stops at a script's first error), and each that fails gets a
note in RUN/notes.txt ("gnuplot failed for NAME (see plots/NAME.log)").
Without gnuplot on PATH: nothing is drawn, plots/ is left as it is, and
(without --hosts) the note "gnuplot is not installed: no plots".

gnuplot never outlives this stage: SIGINT, SIGTERM or SIGHUP to the stage
kills it and then ends the stage by the same signal; the stage's death
(even by SIGKILL) kills it too (PR_SET_PDEATHSIG)."""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import signal
import subprocess
from typing import Any, Optional

from .. import jqjson
from ..report import gnuplot
from ..report.plots import Plot, bw_plot, hosts_plot, run_plots
from ..results import bwlog
from ..results.plot_data import records
from . import StageError, read_json
from .files import shell_glob

HELP = "the run's plots, drawn by gnuplot (tswap.report.plots)"

_PR_SET_PDEATHSIG = 1
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('rundir', metavar='RUN')
    p.add_argument('--bwlog-msec', metavar='MS')
    p.add_argument('--hosts', action='store_true')


def _write(path: str, text: str) -> None:
    with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f:
        f.write(text)


def note(run: str, msg: str) -> None:
    """A note for the report: a line of RUN/notes.txt (util.sh note)."""
    with open(run + '/notes.txt', 'a', encoding='utf-8', errors='surrogateescape') as f:
        f.write(msg + '\n')


def _die_with_parent(parent: int) -> Any:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)

    def pre() -> None:
        # gnuplot is killed when this stage dies, however it dies
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
    return pre


def gnuplot_run(args: list[str], err: Any) -> int:
    """gnuplot ARGS (found on PATH) with stderr to the file err; its exit
    status (127: it cannot be run; 128 + N: killed by signal N). A signal
    of _SIGNALS to this process kills gnuplot, then this process by that
    signal."""
    try:
        proc = subprocess.Popen(['gnuplot'] + args, stderr=err, preexec_fn=_die_with_parent(os.getpid()))
    except OSError:
        return 127

    def stop(sig: int, frame: Any) -> None:
        # waitpid, not proc.wait(): the wait this interrupts holds its lock
        try:
            if proc.returncode is None:
                os.kill(proc.pid, signal.SIGKILL)
                os.waitpid(proc.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    old = {s: signal.signal(s, stop) for s in _SIGNALS}
    try:
        rc = proc.wait()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    return rc if rc >= 0 else 128 - rc


def render(run: str, names: list[str]) -> None:
    """plots/NAME.gp drawn for each of names by one gnuplot, its messages
    split per plot; each alone when that fails (the module's docstring)."""
    if not names:
        return
    d = run + '/plots'
    tmp = d + '/gnuplot.log.tmp'
    with open(tmp, 'wb') as err:
        rc = gnuplot_run(gnuplot.render_args([(n, '%s/%s.gp' % (d, n)) for n in names]), err)
    if rc == 0:
        with open(tmp, 'rb') as f:
            start, logs = gnuplot.split_log(f.read())
        if start is not None:
            with open(d + '/gnuplot.log', 'wb') as f:
                f.write(start)
        for name, text in logs.items():
            with open('%s/%s.log' % (d, name), 'wb') as f:
                f.write(text)
    else:
        for name in names:
            with open('%s/%s.log' % (d, name), 'wb') as err:
                if gnuplot_run(['%s/%s.gp' % (d, name)], err) != 0:
                    note(run, 'gnuplot failed for %s (see plots/%s.log)' % (name, name))
    try:
        os.remove(tmp)
    except FileNotFoundError:
        pass


def _fresh_dir(d: str) -> None:
    """d removed whatever it is (rm -rf), then made."""
    if os.path.islink(d) or (os.path.lexists(d) and not os.path.isdir(d)):
        os.remove(d)
    elif os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d, exist_ok=True)


def bw_plots(run: str, bw: list[tuple[str, str]], msec: str, root: Optional[str] = None) -> list[Plot]:
    """The bandwidth plots of bw [(POINT, WHY)]: each point's repeats,
    ROOT/points/POINT.r* directories (ROOT: run, or where a copy of the run
    is read), read in one pass (their logs as one stream:
    tswap.results.bwlog.read_lines)."""
    root = run if root is None else root
    try:
        ms = jqjson.loads(msec)
    except ValueError as e:
        raise StageError('plots: --bwlog-msec: %s' % e) from None
    # POINT.rN sort as bash's glob sorts them in any locale: only N differs
    runs = {p: sorted(r for r in glob.glob(glob.escape(root + '/points/' + p) + '.r*') if os.path.isdir(r))
            for p, _ in bw}
    every = [r for p, _ in bw for r in runs[p]]
    if not every:
        return []
    lines = bwlog.read_lines([f for r in every for f in shell_glob(os.path.join(r, 'bw_bw.*.log'))])
    series = dict(bwlog.by_dir(lines, ms))
    out = []
    for p, why in bw:
        plot = bw_plot(run, p, why, [(os.path.basename(r), series.get(r, '')) for r in runs[p]], msec)
        if plot is not None:
            out.append(plot)
    return out


def write_plots(run: str, msec: str) -> None:
    """plots/ anew from aggregate.json and the bandwidth logs, drawn."""
    d = run + '/plots'
    _fresh_dir(d)
    agg = read_json(run + '/aggregate.json', 'aggregate')
    plots, bw = run_plots(run, records(agg))
    plots += bw_plots(run, bw, msec)
    for p in plots:
        _write('%s/%s.dat' % (d, p.name), p.dat)
        _write('%s/%s.gp' % (d, p.name), p.gp)
    render(run, [os.path.basename(g)[:-3] for g in sorted(glob.glob(glob.escape(d) + '/*.gp'))
                 if os.path.isfile(g)])


def write_hosts(run: str) -> None:
    """plots/hosts.* from fleet.json (no plot without a host: an empty
    hosts.dat), drawn."""
    d = run + '/plots'
    os.makedirs(d, exist_ok=True)
    fleet = read_json(run + '/fleet.json', 'fleet')
    try:
        dat, plot = hosts_plot(run, fleet)
    except (AttributeError, TypeError) as e:
        raise StageError('fleet %s/fleet.json: %s' % (run, e)) from None
    _write(d + '/hosts.dat', dat)
    if plot is not None:
        _write(d + '/hosts.gp', plot.gp)
        render(run, ['hosts'])


def draw(run_dir: str, msec: str, fleet: bool) -> None:
    """RUN/plots/ anew (write_plots), and a fleet's hosts plot; without
    gnuplot a note and no plots."""
    if not shutil.which('gnuplot'):
        note(run_dir, 'gnuplot is not installed: no plots')
        return
    write_plots(run_dir, msec)
    if fleet:
        write_hosts(run_dir)


def pngs(run_dir: str, key: Any = None) -> list[str]:
    """The names of RUN/plots/*.png (regular files, not hidden), sorted by
    key (the locale's collation, as the shell's glob sorted them)."""
    d = run_dir + '/plots'
    try:
        names = os.listdir(d)
    except OSError:
        return []
    return sorted((n for n in names if n.endswith('.png') and not n.startswith('.')
                   and os.path.isfile(os.path.join(d, n))), key=key)


def run(a: argparse.Namespace) -> int:
    has: Optional[str] = shutil.which('gnuplot')
    if a.hosts:
        if has:
            write_hosts(a.rundir)
    elif not has:
        note(a.rundir, 'gnuplot is not installed: no plots')
    elif a.bwlog_msec is None:
        raise StageError('plots: --bwlog-msec is needed without --hosts')
    else:
        write_plots(a.rundir, a.bwlog_msec)
    return 0
