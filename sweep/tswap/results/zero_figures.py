# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero's figures from fio's JSON: a replayed step's seconds and
bytes per phase and stage, the device ceiling, and the step held against
it (step-N.json, ceiling.json; docs/zero-infinity.md "Method").

Seconds: fio 3.33 has no job start times: a job ends job_runtime ms after
its group starts, or after the job it waits for; a stage lasts until its
last job ends. GB/s are 1e9 bytes per second.
"""

from __future__ import annotations

from typing import Any, Optional


def _gbs(x: dict[str, Any]) -> None:
    x['gbs'] = (x['read'] + x['write']) / x['seconds'] / 1e9 if x['seconds'] > 0 else 0


def step_figures(fio: dict[str, Any]) -> dict[str, Any]:
    """{phases: [{phase, start, stages: [{stage, start, seconds, read,
    write}], seconds, read, write}], seconds, read, write, gbs} from the
    step's fio JSON; job names are PHASE.STAGE.rR.JOB.RW."""
    fin: dict[str, Any] = {}
    for j in fio['jobs']:
        w = j['job options'].get('wait_for')
        base = fin.get(w) if w else 0
        fin[j['jobname']] = j['job_runtime'] if base is None else base + j['job_runtime']
    rows = []
    for i, j in enumerate(fio['jobs']):
        n = j['jobname'].split('.')
        rows.append({'start': i, 'end': fin[j['jobname']], 'read': j['read']['io_bytes'],
                     'write': j['write']['io_bytes'], 'phase': n[0], 'stage': n[1] if len(n) > 1 else None})
    phases = []
    for ph in sorted({r['phase'] for r in rows}):
        pr = [r for r in rows if r['phase'] == ph]
        stages = []
        for st in sorted({r['stage'] for r in pr}, key=lambda s: (s is not None, s or '')):
            sr = [r for r in pr if r['stage'] == st]
            stages.append({'stage': st, 'start': min(r['start'] for r in sr),
                           'seconds': max(r['end'] for r in sr) / 1000,
                           'read': sum(r['read'] for r in sr), 'write': sum(r['write'] for r in sr)})
        stages.sort(key=lambda s: s['start'])
        p = {'phase': ph, 'start': min(r['start'] for r in pr), 'stages': stages}
        p.update(seconds=sum(s['seconds'] for s in stages), read=sum(s['read'] for s in stages),
                 write=sum(s['write'] for s in stages))
        phases.append(p)
    phases.sort(key=lambda p: p['start'])
    f: dict[str, Any] = {'phases': phases, 'seconds': sum(p['seconds'] for p in phases),
                         'read': sum(p['read'] for p in phases), 'write': sum(p['write'] for p in phases)}
    _gbs(f)
    return f


def against_ceiling(f: dict[str, Any], c: Optional[dict[str, Any]]) -> dict[str, Any]:
    """The step's figures with gbs on every stage and phase and, against
    the ceiling c (None: none), ceiling_seconds (the least time the device
    could move their bytes in: a stage max(read / read_gbs, write /
    write_gbs), its reads and writes at once, each at its ceiling; a phase
    or the step the sum over its stages), ceiling_gbs (their bytes over
    it) and pct_of_ceiling (ceiling_seconds / seconds x 100); and the
    ceiling itself."""
    def vs(x: dict[str, Any]) -> None:
        x['ceiling_gbs'] = (x['read'] + x['write']) / x['ceiling_seconds'] / 1e9 if x['ceiling_seconds'] > 0 else 0
        x['pct_of_ceiling'] = x['ceiling_seconds'] / x['seconds'] * 100 if x['seconds'] > 0 else 0

    for p in f['phases']:
        for s in p['stages']:
            _gbs(s)
            if c is not None:
                s['ceiling_seconds'] = max(s['read'] / (c['read_gbs'] * 1e9), s['write'] / (c['write_gbs'] * 1e9))
                vs(s)
        _gbs(p)
        if c is not None:
            p['ceiling_seconds'] = sum(s['ceiling_seconds'] for s in p['stages'])
            vs(p)
    _gbs(f)
    if c is not None:
        f['ceiling_seconds'] = sum(p['ceiling_seconds'] for p in f['phases'])
        vs(f)
    f['ceiling'] = c
    return f


def ceiling_figures(fio: dict[str, Any], iodepth: float, bs: str, seconds: float) -> dict[str, Any]:
    """{engine, bs, iodepth, jobs_per_direction, seconds_per_direction,
    read_gbs, write_gbs} from the ceiling run (jobs ceiling.RW.rR): per
    direction the bytes of all its jobs over the longest of their
    runtimes (they start together)."""
    js = [{'rw': j['jobname'].split('.')[1], 'runtime': j['job_runtime'],
           'bytes': j['read']['io_bytes'] + j['write']['io_bytes']} for j in fio['jobs']]

    def gbs(rw: str) -> float:
        x = [j for j in js if j['rw'] == rw]
        if not x or max(j['runtime'] for j in x) <= 0:
            return 0
        return sum(j['bytes'] for j in x) / max(j['runtime'] for j in x) * 1000 / 1e9

    return {'engine': 'libaio', 'bs': bs, 'iodepth': iodepth,
            'jobs_per_direction': sum(1 for j in js if j['rw'] == 'read'),
            'seconds_per_direction': seconds, 'read_gbs': gbs('read'), 'write_gbs': gbs('write')}
