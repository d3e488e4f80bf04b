# SPDX-License-Identifier: GPL-2.0-only
"""The one executor interface and the points' loop that drives it
(issue 36, item 2): a run on this host (tswap.executor.local.Local) and
a fleet run (tswap.executor.fleet.Fleet) answer the same hooks, and
tswap.cli.run_local drives either: the head line, begin, every point
REPEAT times in whole passes (a run done earlier is skipped), its
progress line with the ETA, the stop on a signal and the finish stage's
own options. The set-up before a run (the target check, the tools, a
new run directory's first files) is each executor's set-up module's
(tswap.cli.sweep_local, tswap.cli.run_fleet). The bash it replaces:
pipeline.sh run_points and the exec_* hooks it named."""

from __future__ import annotations

import os
from typing import Protocol, Sequence

from ..plan.values import fmt_secs
from .base import _write, point_label


class Executor(Protocol):
    """What the loop asks of where the points run. A place is where one
    run of a point goes: "" on this host, a host's index in a fleet."""

    def head(self) -> str:
        """The run's first progress line (exec_head)."""

    def begin(self, total: int) -> None:
        """Before the points (total runs in all): a fleet's preflight
        (exec_begin)."""

    def todo(self, runkey: str) -> Sequence[object]:
        """The places where runkey is not done yet; empty when it is
        (exec_todo)."""

    def done_text(self, runkey: str) -> str:
        """The progress text of a run done earlier (exec_done_text)."""

    def run(self, line: str, runkey: str, rep: int, label: str, places: Sequence[object]) -> str:
        """Run plan line as runkey at places: the wall seconds, 3
        decimals (exec_run)."""

    def result_text(self, runkey: str, label: str, eta: str, places: Sequence[object]) -> str:
        """The progress lines of the run just done (exec_result_text)."""

    def stop(self, sig: int) -> None:
        """A stop signal came: what runs is stopped, its directories
        removed (exec_stop)."""

    def finish_args(self) -> list[str]:
        """The finish stage's options of this executor (exec_finish_args)."""


def run_points(x: Executor, run: str, lines: Sequence[str], repeat: int, progress: int) -> None:
    """Every point of lines (plan lines) repeat times, in whole passes
    over the plan (so a point's CV includes the device's drift over the
    sweep, not only noise); runs done earlier are skipped; progress lines
    on the fd progress (pipeline.sh run_points)."""
    total = len(lines) * repeat
    os.makedirs(run + '/points', exist_ok=True)
    x.begin(total)
    idx = spent = ran = 0
    for rep in range(1, repeat + 1):
        for line in lines:
            idx += 1
            runkey = '%s.r%d' % (line.split('\t', 1)[0], rep)
            label = point_label(line)
            if repeat != 1:
                label += ' r%d' % rep
            pre = '[%*d/%d] %s' % (len(str(total)), idx, total, label)
            todo = x.todo(runkey)
            if not todo:
                _write(progress, '%s  %s\n' % (pre, x.done_text(runkey)))
                continue
            wall = x.run(line, runkey, rep, pre, todo)
            ran += 1
            spent += int(wall.replace('.', ''))
            eta = fmt_secs((total - idx) * ((spent + 500 * ran) // (1000 * ran)))
            _write(progress, x.result_text(runkey, pre, eta, todo))
