# SPDX-License-Identifier: GPL-2.0-only
"""The run's plots, RUN/plots/NAME.{dat,gp,png,log} (tswap.report.plots
lists them), drawn by one gnuplot, for the finish stage (draw).

write_plots: plots/ made anew from RUN/aggregate.json, and the bandwidth
plots from the points' fio bandwidth logs (RUN/points/POINT.rN/
bw_bw.*.log, MS: their log_avg_msec). write_hosts (a fleet, after its
checks): plots/hosts.* from RUN/fleet.json, plots/ otherwise kept.

gnuplot draws every plot in one run, each after a reset, and its
messages are split per plot into NAME.log (what it says before the first
plot into gnuplot.log); when it fails, each plot is drawn again alone
(gnuplot stops at a script's first error), and each that fails loses
its PNG (gnuplot leaves an empty or partial one) and gets a note in
RUN/notes.txt ("gnuplot failed for NAME (see plots/NAME.log)"). A plot
without a point to draw is not made (tswap.report.plots has_point).
Without gnuplot on PATH (undrawn): plots/ is made as with it,
NAME.dat and NAME.gp anew, nothing drawn; a PNG drawn before is kept
only when its .dat and .gp are unchanged, the others are removed (they
would show other numbers than the report's), and one note says which
(tswap.report.plots no_gnuplot_note: "gnuplot is not installed: no
plots" when there were none).

These notes are the outputs' own: draw first removes from notes.txt
those an earlier render left (clear_notes;
tswap.report.plots run_notes), keeping the points' run's notes, so that
report.md says what this render did.

gnuplot never outlives the process that draws: SIGINT, SIGTERM or SIGHUP
to it kills gnuplot and then ends it by the same signal (or runs the
sweep's own handler); its death (even by SIGKILL) kills gnuplot too
(PR_SET_PDEATHSIG)."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
from typing import Any, Optional

from .. import jqjson
from ..report import gnuplot
from ..report.plots import (Plot, bw_plot, failed_note, hosts_plot, no_gnuplot_note, run_notes, run_plots,
                            still_drawn)
from ..results import bwlog
from ..results.plot_data import records
from . import StageError, read_json
from .files import shell_glob

_PR_SET_PDEATHSIG = 1
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _write(path: str, text: str) -> None:
    with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f:
        f.write(text)


def _read(path: str) -> Optional[str]:
    """A regular file's text as _write wrote it; None when it is not one."""
    if os.path.islink(path) or not os.path.isfile(path):
        return None
    with open(path, encoding='utf-8', errors='surrogateescape') as f:
        return f.read()


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def note(run: str, msg: str) -> None:
    """A note for the report: a line of RUN/notes.txt (util.sh note)."""
    with open(run + '/notes.txt', 'a', encoding='utf-8', errors='surrogateescape') as f:
        f.write(msg + '\n')


def clear_notes(run: str) -> None:
    """RUN/notes.txt without the notes an earlier render of the outputs
    wrote (tswap.report.plots run_notes), through notes.txt.tmp and a
    rename (bytes kept as they were); untouched when it has none or is
    not a regular file."""
    path = run + '/notes.txt'
    if os.path.islink(path) or not os.path.isfile(path):
        return
    with open(path, 'rb') as f:
        text = f.read().decode('utf-8', 'surrogateescape')
    kept = run_notes(text)
    if kept == text:
        return
    tmp = path + '.tmp'
    try:
        with open(tmp, 'wb') as f:
            f.write(kept.encode('utf-8', 'surrogateescape'))
        os.replace(tmp, path)
    except OSError:
        _remove(tmp)
        raise


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
        prev = old.get(sig)
        if callable(prev):
            # the sweep's own handler (tswap.executor.local): its clean-up
            proc.returncode = 128 + sig
            for s, h in old.items():
                signal.signal(s, h)
            prev(sig, frame)
            return
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    old: dict[int, Any] = {}
    old.update((s, signal.signal(s, stop)) for s in _SIGNALS)
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
                    _remove('%s/%s.png' % (d, name))
                    note(run, failed_note(name))
    _remove(tmp)


def _fresh_dir(d: str) -> None:
    """d removed whatever it is (rm -rf), then made."""
    if os.path.islink(d) or (os.path.lexists(d) and not os.path.isdir(d)):
        os.remove(d)
    elif os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d, exist_ok=True)


def _clear(d: str, keep: list[str]) -> None:
    """d made anew as _fresh_dir makes it, but for the regular files of
    keep (names in d)."""
    if os.path.islink(d) or (os.path.lexists(d) and not os.path.isdir(d)):
        os.remove(d)
    elif os.path.isdir(d):
        for name in os.listdir(d):
            path = os.path.join(d, name)
            if name in keep and os.path.isfile(path) and not os.path.islink(path):
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.remove(path)
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


def _run_plots(run: str, msec: str) -> list[Plot]:
    """The plots of aggregate.json and the bandwidth logs."""
    agg = read_json(run + '/aggregate.json', 'aggregate')
    plots, bw = run_plots(run, records(agg))
    return plots + bw_plots(run, bw, msec)


def write_plots(run: str, msec: str) -> None:
    """plots/ anew from aggregate.json and the bandwidth logs, drawn."""
    d = run + '/plots'
    _fresh_dir(d)
    plots = _run_plots(run, msec)
    for p in plots:
        _write('%s/%s.dat' % (d, p.name), p.dat)
        _write('%s/%s.gp' % (d, p.name), p.gp)
    render(run, [os.path.basename(g)[:-3] for g in sorted(glob.glob(glob.escape(d) + '/*.gp'))
                 if os.path.isfile(g)])


def _hosts_plot(run: str) -> tuple[str, Optional[Plot]]:
    """hosts.dat's text and the hosts plot of fleet.json (None without a
    host)."""
    fleet = read_json(run + '/fleet.json', 'fleet')
    try:
        return hosts_plot(run, fleet)
    except (AttributeError, TypeError) as e:
        raise StageError('fleet %s/fleet.json: %s' % (run, e)) from None


def write_hosts(run: str) -> None:
    """plots/hosts.* from fleet.json (no plot without a host: an empty
    hosts.dat), drawn."""
    d = run + '/plots'
    os.makedirs(d, exist_ok=True)
    dat, plot = _hosts_plot(run)
    _write(d + '/hosts.dat', dat)
    if plot is not None:
        _write(d + '/hosts.gp', plot.gp)
        render(run, ['hosts'])


def undrawn(run: str, msec: str, fleet: bool) -> None:
    """Without gnuplot: plots/ as write_plots (and with fleet write_hosts)
    make it, nothing drawn; a PNG drawn before is kept only when its .dat
    and .gp are the same (tswap.report.plots still_drawn); one note on
    which are kept and which removed (no_gnuplot_note)."""
    d = run + '/plots'
    plots = _run_plots(run, msec)
    hosts_dat = None
    if fleet:
        hosts_dat, hp = _hosts_plot(run)
        plots += [hp] if hp is not None else []
    drawn = [(n, _read('%s/%s.dat' % (d, n[:-4])), _read('%s/%s.gp' % (d, n[:-4]))) for n in pngs(run)]
    kept, stale = still_drawn(plots, drawn)
    _clear(d, kept)
    for p in plots:
        _write('%s/%s.dat' % (d, p.name), p.dat)
        _write('%s/%s.gp' % (d, p.name), p.gp)
    if hosts_dat is not None:
        _write(d + '/hosts.dat', hosts_dat)
    note(run, no_gnuplot_note(kept, stale))


def draw(run_dir: str, msec: str, fleet: bool) -> None:
    """RUN/plots/ anew (write_plots), and a fleet's hosts plot; without
    gnuplot the same undrawn (undrawn); the notes of an earlier render
    first removed (clear_notes)."""
    clear_notes(run_dir)
    if not shutil.which('gnuplot'):
        undrawn(run_dir, msec, fleet)
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
