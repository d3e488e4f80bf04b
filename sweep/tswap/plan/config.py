# SPDX-License-Identifier: GPL-2.0-only
"""sweep.json: a run's settings as the run directory keeps them (what
--resume reads back; docs/sweep.md "Run directory")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class Settings:
    """A run's settings, as the shell sweep has them (state.sh).

    Strings as given (runtime, ramp and io_size are the option's text, ""
    when unset); size_bytes, repeat, ceiling_qd, ceiling_jobs and ss_dur
    numbers; ceiling and fixed_runtime 1 or 0; steady "on"/"off";
    precondition "on"/"off"/"auto"; ds_version "" for the newest;
    targets the targets' list (JSON); fleet the fleet's part or None;
    workload tensor or checkpoint (--workload), "" for none (a run from
    before the key: a tensor run)."""
    target: str
    target_kind: str
    size: str
    size_bytes: float
    grid: str
    grid_desc: str
    runtime: str
    ramp: str
    io_size: str
    repeat: float
    engine: str
    ceiling: float
    ceiling_bs: str
    ceiling_qd: float
    ceiling_jobs: float
    ds_version: str
    steady: str
    fixed_runtime: float
    ss_crit: str
    ss_dur: float
    precondition: str
    created: str
    host: str
    kernel: str
    fio: str
    targets: Any
    fleet: Optional[Any] = None
    workload: str = ''


def sweep_json(s: Settings) -> dict[str, Any]:
    """sweep.json's document, key for key as the sweep has always written
    it; ss and ss_dur only with steady state on; workload when given
    (runs since it is kept); fleet only in a fleet."""
    on = s.steady == 'on'
    doc = {'target': s.target, 'target_kind': s.target_kind, 'size': s.size,
           'size_bytes': s.size_bytes, 'grid': s.grid, 'grid_description': s.grid_desc,
           'runtime': s.runtime, 'ramp': s.ramp, 'io_size': s.io_size, 'repeat': s.repeat,
           'engine': s.engine, 'ceiling': s.ceiling == 1, 'ceiling_bs': s.ceiling_bs,
           'ceiling_qd': s.ceiling_qd, 'ceiling_jobs': s.ceiling_jobs,
           'ds_version': s.ds_version or None, 'steady_state': s.steady,
           'fixed_runtime': s.fixed_runtime == 1, 'ss': s.ss_crit if on else None,
           'ss_dur': s.ss_dur if on else None, 'precondition': s.precondition,
           'created': s.created, 'host': s.host, 'kernel': s.kernel, 'fio_version': s.fio,
           'targets': s.targets}
    if s.workload:
        doc['workload'] = s.workload
    if s.fleet is not None and s.fleet is not False:
        doc['fleet'] = s.fleet
    return doc
