# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero: the fio job files that replay a plan (step.fio, layout.fio,
jobs/zero-infinity-step-*.fio), the replay's byte totals and its folders.

Mapping: one fio job per (rank, plan job) - files of one folder and one
size, named as DeepSpeed names them, moved in one direction: filename =
the files (fio's ':' list; a list longer than fio's 4096-character option
value is cut into several jobs, chained when the plan job is), nrfiles =
their count, filesize = bs = one tensor (each file one swap operation:
async_pread/async_pwrite of one tensor), iodepth = tensors issued before
the handle's wait(). A stage of the plan is one fio group (stonewall on
its first job: the barrier where DeepSpeed waits); jobs DeepSpeed runs one
after the other on a handle are chained with wait_for. The aio block maps
onto tswap's options as docs/deepspeed.md says.

dirs: per rank, the folder that stands for nvme_path; unit: the replay
size unit in bytes (the target's DIO offset alignment); scale: every
tensor size divided by it (1 = real sizes).
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any, Iterator

from ..jqjson import number as num
from ..jqjson import sort_key

# fio takes an option value of at most 4096 characters (parse.c) and a job
# file line of OPT_LEN_MAX (parse.h: 8192): a job's filename list stays
# below this many characters.
MAX_LINE = 4000
# fio's jobs in one run: REAL_MAX_JOBS (fio.h: 4096) in segments of
# JOBS_PER_SEG (8), of which init.c add_thread_segment allocates at most
# REAL_MAX_SEG - 1: 4088 (a 4089th job fails "maximum number of jobs
# reached"; fio --parse-only does not check it).
FIO_MAX_JOBS = 4088
_DTYPE_DIR = MappingProxyType({'bf16': 'bfloat16params', 'fp16': 'float16params', 'fp32': 'float32params'})


def chunks(files: list[str]) -> list[list[str]]:
    """files cut into lists whose ':'-joined length stays below MAX_LINE."""
    out: list[list[str]] = []
    for f in files:
        if out and sum(len(x) + 1 for x in out[-1]) + len(f) < MAX_LINE:
            out[-1].append(f)
        else:
            out.append([f])
    return out


def replay_bytes(plan: dict[str, Any], unit: float, scale: float, b: float) -> float:
    """A tensor's replay size: DeepSpeed's tensor bytes are multiples of
    AIO_ALIGNED_BYTES x intra_op_parallelism (1024 x P), not always of the
    target's DIO alignment: b / scale rounded up to unit x P (tswap needs
    bs / P aligned)."""
    u = unit * plan['config']['intra_op_parallelism']
    s = math.floor((b + scale - 1) / scale)
    return float(math.floor((s + u - 1) / u)) * u


def folder(plan: dict[str, Any], dirs: list[str], r: int, d: str) -> str:
    """DeepSpeed's folders under nvme_path (optimizer_utils.py
    OptimizerSwapper.__init__: zero_stage_3/optimizer/rank<R>;
    partitioned_param_swapper.py _configure_aio:
    zero_stage_3/<dtype>params/rank<R>); fio creates them (filesetup.c
    create_work_dirs)."""
    sub = 'optimizer' if d == 'optimizer' else _DTYPE_DIR[plan['config']['param_dtype']]
    return '%s/zero_stage_3/%s/rank%d' % (dirs[r], sub, r)


def _job(plan: dict[str, Any], dirs: list[str], unit: float, scale: float, r: int, j: dict[str, Any],
         name: str) -> list[str]:
    b = replay_bytes(plan, unit, scale, j['bytes'])
    n = len(j['files'])
    return ['[%s]' % name, 'directory=' + folder(plan, dirs, r, j['dir']), 'filename=' + ':'.join(j['files']),
            'nrfiles=%d' % n, 'filesize=' + num(b), 'size=' + num(n * b), 'bs=' + num(b),
            'iodepth=' + num(min(j['iodepth'], n)), 'rw=' + j['rw']]


def _parts(j: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A plan job cut into fio jobs (one, unless its list is too long)."""
    c = chunks(j['files'])
    for i, f in enumerate(c):
        yield dict(j, files=f, part='-c%d' % i if len(c) > 1 else '')


def _global(plan: dict[str, Any], engine: str) -> list[str]:
    c = plan['config']
    return (['[global]', 'ioengine=external:' + engine, 'tswap_backend=libaio', 'tswap_block_size=' + num(c['block_size']),
            'tswap_queue_depth=' + num(c['queue_depth']),
            'tswap_submit=' + ('single' if c['single_submit'] else 'block'),
            'tswap_window=' + ('overlap' if c['overlap_events'] else 'sequential'),
            'tswap_threads=' + num(c['intra_op_parallelism']), 'direct=1', 'thread', 'file_service_type=roundrobin',
            'fallocate=none',
            # files are set up when their job starts, so a file is created by
            # its first write, as DeepSpeed creates it (backend.c thread_main)
            'create_serialize=0']
            # DeepSpeed 0.19.4+ (#8212): swap buffers from new_cpu_locked_tensor
            # (posix_memalign + mlock); before, fio's buffers locked by tswap_pin
            + (['tswap_alloc=deepspeed'] if plan.get('deepspeed', {}).get('swap_buffers') == 'new_cpu_locked_tensor'
               else []) + [''])


def layout_jobs(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """The layout: the files that exist before the step, one write each,
    grouped by folder and size."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for f in sorted(plan['layout_files'], key=lambda f: sort_key([f['dir'], f['bytes']])):
        groups.setdefault((f['dir'], f['bytes']), []).append(f)
    return [{'dir': g[0]['dir'], 'bytes': g[0]['bytes'], 'files': [f['name'] for f in g], 'rw': 'write',
             'iodepth': 4, 'id': 'f%d' % i} for i, g in enumerate(groups.values())]


def totals(plan: dict[str, Any], unit: float, scale: float) -> dict[str, Any]:
    """The replay's bytes for all ranks: read and write in the step, the
    layout's, its job count, and per rank every file it ever holds."""
    rb = lambda b: replay_bytes(plan, unit, scale, b)  # noqa: E731
    ranks = plan['inputs']['ranks']
    js = [j for p in plan['phases'] for s in p['stages'] for j in s['jobs']]
    return {'read': sum(j['count'] * rb(j['bytes']) for j in js if j['rw'] == 'read') * ranks,
            'write': sum(j['count'] * rb(j['bytes']) for j in js if j['rw'] == 'write') * ranks,
            'layout': sum(rb(f['bytes']) for f in plan['layout_files']) * ranks,
            'layout_jobs': len(layout_jobs(plan)),
            'per_rank_layout': sum(rb(f['bytes']) for f in plan['swap_files'])}


def folders(plan: dict[str, Any], dirs: list[str]) -> list[str]:
    """Every swap folder of every rank."""
    ds = sorted({f['dir'] for f in plan['swap_files']})
    return [folder(plan, dirs, r, d) for r in range(int(plan['inputs']['ranks'])) for d in ds]


def job_counts(plan: dict[str, Any], mode: str) -> list[tuple[str, int]]:
    """A rank's fio jobs in job_text(plan, mode): (phase name, jobs) in
    plan order, micro-steps summed; mode layout: one ("layout", jobs)."""
    if mode == 'layout':
        return [('layout', sum(len(chunks(j['files'])) for j in layout_jobs(plan)))]
    out: dict[str, int] = {}
    for p in plan['phases']:
        n = sum(len(chunks(j['files'])) for s in p['stages'] for j in s['jobs'])
        out[p['name']] = out.get(p['name'], 0) + n
    return list(out.items())


def too_many_jobs(plan: dict[str, Any], mode: str) -> str:
    """"" when job_text(plan, mode) is within FIO_MAX_JOBS, else why not
    and what to change (one line, no option prefix)."""
    ranks = int(plan['inputs']['ranks'])
    per = job_counts(plan, mode)
    n = sum(c for _, c in per) * ranks
    if n <= FIO_MAX_JOBS:
        return ''
    top = max(per, key=lambda x: x[1])[0]
    if top in ('optimizer', 'optimizer-states', 'fp32-partitions'):
        why = "the optimizer's (a few per sub-group): raise sub_group_size or use fewer --ranks"
    elif top == 'layout':
        why = 'one per folder and tensor size: use fewer --ranks or fewer distinct tensor sizes'
    else:
        why = ('parameter swaps (one per run of same-size tensors moved one at a time, one per prefetch of '
               'several): raise --param-numel (fewer, larger tensors) or use fewer --ranks')
    return ('%d fio jobs (%d per rank x %d ranks: %s), fio runs at most %d in one run; most are %s'
            % (n, n // ranks, ranks, ', '.join('%s %d' % x for x in per if x[1]), FIO_MAX_JOBS, why))


def job_text(plan: dict[str, Any], mode: str, dirs: list[str], unit: float, scale: float, engine: str,
             header: str = '') -> str:
    """The fio job file: mode step (the step's jobs) or layout (a write of
    every file that exists before the step); header: comment lines put
    first (may be "")."""
    out = ([header] if header else []) + _global(plan, engine)
    ranks = int(plan['inputs']['ranks'])
    if mode == 'layout':
        for r in range(ranks):
            for j in layout_jobs(plan):
                for x in _parts(j):
                    out += _job(plan, dirs, unit, scale, r, x, 'layout.r%d.%s%s' % (r, x['id'], x['part'])) + ['']
        return '\n'.join(out) + '\n'
    for p in plan['phases']:
        for s in p['stages']:
            # the stage's fio jobs, each with the previous serial one of its
            # chain (by default its handle) when it is serial itself
            xs, last = [], {}
            for j in (x for jj in s['jobs'] for x in _parts(jj)):
                h = j.get('chain') or j['handle']
                serial = j.get('serial') is True
                xs.append((j, last.get(h) if serial else None))
                if serial:
                    last[h] = j
            first = True
            for r in range(ranks):
                pre = '%s.%s.r%d' % (p['name'], s['name'], r)
                for j, prev in xs:
                    out += _job(plan, dirs, unit, scale, r, j, '%s.%s%s.%s' % (pre, j['id'], j['part'], j['rw']))
                    if first:
                        out.append('stonewall')
                        first = False
                    if prev is not None:
                        out.append('wait_for=%s.%s%s.%s' % (pre, prev['id'], prev['part'], prev['rw']))
                    out.append('')
    return '\n'.join(out) + '\n'
