# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero's plan (plan.json): the swap traffic of ZeRO-Infinity's
initialisation, first training step and steady training step, from a
ds_config by DeepSpeed v0.16.4's rules (zero_config, zero_rank,
zero_steps) with what changed to the release --ds-version names
(zero_release, 0.16.4 to 0.19.5), and the dry run's table.

build(ds_config, params, world, ranks, param_numel, step, dtype) -> the
plan, a JSON object (key order as plan.json keeps it); PlanError with one
line for what DeepSpeed would reject or a plan with nothing on NVMe.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Optional

from ..jqjson import jround
from ..jqjson import number as num
from ..jqjson import sort_key, text
from .zero_config import read_config
from .deepspeed import show
from .zero_rank import rank_geometry
from .zero_release import ZeroRelease, check_reads, zero_release
from .zero_schema import check as check_schema
from .zero_steps import phases as step_phases
from .zero_steps import summary

_FILE_KEYS = ('dir', 'name', 'bytes', 'kind')


def _pick(f: dict[str, Any]) -> dict[str, Any]:
    return {k: f.get(k) for k in _FILE_KEYS}


def build(cfg: dict, params: float, world: float, ranks: float, param_numel: float, step: str,
          dtype: str, numels: Optional[tuple[float, ...]] = None,
          release: Optional[ZeroRelease] = None) -> dict[str, Any]:
    """The plan of step (steady, first or init) for a model of params
    elements in tensors of param_numel, world data-parallel ranks, ranks of
    them on this node; dtype "" (from the ds_config), fp32, fp16 or bf16;
    numels: each tensor's elements in model order (--param-numels), in
    place of param_numel (then None in plan.json's inputs); release: the
    DeepSpeed release whose rules differ (zero_release; None the newest)."""
    r = release if release is not None else zero_release('')
    cfg, auto_notes = check_schema(cfg, r.version)
    c, defaults = read_config(cfg, dtype, world, step)
    rk = rank_geometry(c, params, world, param_numel, numels, r.buffer_size_inclusive)
    ph = step_phases(c, rk, ranks)
    sg = rk.sg
    all_params = [rk.pfile[k] for k in sorted(rk.pfile)]
    opt_files = [f for s in sg if s['optimizer_swap']
                 for f in [s['fp32_file']] + s['state_files'] + s['grad_files']]
    all_files = all_params + opt_files
    layout = {'init': [], 'first': all_params + [s['fp32_file'] for s in sg if s['optimizer_swap']],
              'steady': all_files}[step]
    cur = {'steady': ph.steady, 'first': ph.first, 'init': ph.init}[step]
    config = c.as_json()
    config.update(optimizer_state=list(rk.state_names),
                  swapper='PipelinedOptimizerSwapper' if ph.pipelined else 'PartitionedOptimizerSwapper',
                  min_aio_bytes=rk.min_aio, numel_alignment_fp32=rk.a_opt, numel_alignment_param=rk.a_par,
                  param_element_bytes=rk.par_es, gradient_buffer_bytes=ph.gbuf_bytes)
    notes = []
    if c.thread_count_ignored:
        notes.append('aio.thread_count is not read by this DeepSpeed (aio_config.py get_aio_config reads '
                     'intra_op_parallelism): 1 used')
    notes += auto_notes
    if dtype != '':
        notes.append('parameter dtype %s from --dtype' % dtype)
    if not r.padded_writes and not ph.pipelined and any(s['optimizer_swap'] for s in sg):
        notes.append('DeepSpeed %s writes the optimizer state unpadded (partitioned_optimizer_swapper.py '
                     'swap_out_optimizer_state; padded from 0.16.9, #7046): the plan pads it' % show(r.version))
    ops = [{'phase': p['name'], 'stage': s['name'], 'rw': j['rw'], 'dir': j['dir'], 'file': f,
            'bytes': j['bytes']} for p in cur for s in p['stages'] for j in s['jobs'] for f in j['files']]
    files = [_pick(f) for f in all_files]
    check_reads(ops, files, r)
    return {
        'tool': 'tswap-zero',
        'step': step,
        'inputs': dict({'params': params, 'world': world, 'ranks': ranks,
                        'param_numel': param_numel if numels is None else None},
                       **({} if numels is None else {'param_numels': list(numels)})),
        'config': config,
        'deepspeed': r.as_json(),
        'defaults': list(defaults),
        'notes': notes,
        'per_rank': {'partition_numel': rk.rank_numel, 'model_tensors': rk.nparams, 'sub_groups': list(sg),
                     'nvme_params': [{'k': f['k'], 'bytes': f['bytes'], 'reuse': f['reuse'], 'kept': f['k'] in ph.kept}
                                     for f in rk.nvme_params],
                     'files': len(all_files), 'file_bytes': sum(f['bytes'] for f in all_files)},
        # every file of a rank (dir: optimizer or params, name as DeepSpeed's)
        'swap_files': files,
        # the files that exist before the step
        'layout_files': [_pick(f) for f in layout],
        'files': len(all_files) * ranks,
        'phases': cur,
        # the order DeepSpeed issues the swaps in (fio job order)
        'ops': ops,
        'steps': {'init': summary(ph.init), 'first': summary(ph.first), 'steady': summary(ph.steady)},
        'read_bytes_per_step': sum(p['read_bytes'] for p in cur),
        'write_bytes_per_step': sum(p['write_bytes'] for p in cur)}


def _tsv(cells: list[Any]) -> str:
    """jq 1.6's @tsv: strings with \\, tab, newline, CR escaped, null empty,
    other values as JSON."""
    out = []
    for v in cells:
        if v is None:
            out.append('')
        elif isinstance(v, str):
            out.append(v.replace('\\', '\\\\').replace('\t', '\\t').replace('\n', '\\n').replace('\r', '\\r'))
        else:
            out.append(text(v))
    return '\t'.join(out)


def columns(lines: list[str]) -> list[str]:
    """Align the runs of tab-separated lines: each column as wide as its
    widest cell plus two blanks, the last as is; lines of one field end a
    run, as they are."""
    out: list[str] = []
    run: list[list[str]] = []

    def flush() -> None:
        if not run:
            return
        w = [max(len(r[j]) if j < len(r) else 0 for r in run) for j in range(max(len(r) for r in run))]
        for r in run:
            out.append(''.join(x + ' ' * (w[j] - len(x)) + '  ' if j < len(r) - 1 else x
                               for j, x in enumerate(r)))
        run.clear()

    for line in lines:
        f = line.split('\t')
        if len(f) <= 1:
            flush()
            out.append(line)
        else:
            run.append(f)
    flush()
    return out


def _gb(b: float) -> str:
    return num(jround(b / 1e9 * 1000) / 1000)


_STEP_TEXT = MappingProxyType({'steady': 'steady (a training step from the second on)',
                               'first': 'first (the first training step)', 'init': 'init (deepspeed.initialize)'})


def table(plan: dict[str, Any]) -> list[str]:
    """The dry run's lines: the settings, the tensors of one rank, and per
    phase and stage the bytes per rank and node."""
    i, c, pr = plan['inputs'], plan['config'], plan['per_rank']
    kept = sum(1 for f in pr['nvme_params'] if f['kept'])
    lines = [
        'ZeRO-Infinity step: %s params, world %s, %s ranks on this node, %s (%s), %s params'
        % (num(i['params']), num(i['world']), num(i['ranks']), c['optimizer'], ', '.join(c['optimizer_state']),
           c['param_dtype']),
        'step: %s; stage3_max_reuse_distance %s, stage3_prefetch_bucket_size %s: %d of %d NVMe parameters kept from '
        'forward for backward after the first step' % (_STEP_TEXT[plan['step']], text(c['max_reuse_distance']),
                                                       text(c['prefetch_bucket_size']), kept, len(pr['nvme_params'])),
        'swapper: %s (pipeline_read=%s, pipeline_write=%s); sub_group_size %s; aio block_size=%s queue_depth=%s '
        'intra_op_parallelism=%s single_submit=%s overlap_events=%s; gradient_accumulation_steps %s'
        % tuple(text(c[k]) for k in ('swapper', 'pipeline_read', 'pipeline_write', 'sub_group_size', 'block_size',
                                      'queue_depth', 'intra_op_parallelism', 'single_submit', 'overlap_events',
                                      'gas'))]
    d = plan['deepspeed']
    lines.append('deepspeed %s: swap buffers from %s (replay: %s); reads must fit their file: %s'
                 % (d['version'], d['swap_buffers'], 'tswap_alloc=deepspeed' if d['swap_buffers'] ==
                    'new_cpu_locked_tensor' else "fio's buffers, tswap_pin=auto", 'yes (checked)' if d['pread_bound']
                    else 'no'))
    lines += ['default: ' + d for d in plan['defaults']] + ['note: ' + n for n in plan['notes']]
    lines += ['', 'per rank: partition %s elements in %d sub-groups; %d swap files, %s bytes'
              % (num(pr['partition_numel']), len(pr['sub_groups']), pr['files'], num(pr['file_bytes'])), '']
    lines.append(_tsv(['sub-group', 'elements', 'params', 'optimizer-swap', 'params-on-nvme', 'state-tensor-bytes',
                       'grad-files', 'param-files']))
    for s in pr['sub_groups']:
        lines.append(_tsv([s['id'], s['numel'], s['params'], s['optimizer_swap'], s['params_on_nvme'],
                           '%d x %s' % (len(s['state_tensors']), num(s['state_bytes'])), len(s['grad_bytes']),
                           len(s['param_bytes'])]))
    lines += ['', _tsv(['phase', 'stage', 'tensors/rank', 'read B/rank', 'write B/rank', 'read B/node',
                        'write B/node'])]
    r = i['ranks']
    for p in plan['phases']:
        for s in p['stages']:
            lines.append(_tsv([p['name'], s['name'], sum(j['count'] for j in s['jobs']), s['read_bytes_per_rank'],
                               s['write_bytes_per_rank'], s['read_bytes_per_rank'] * r,
                               s['write_bytes_per_rank'] * r]))
        ms = ' (micro-step %d)' % p['micro_step'] if p.get('micro_step') else ''
        lines.append(_tsv([p['name'] + ms, '(total)', '', p['read_bytes_per_rank'], p['write_bytes_per_rank'],
                           p['read_bytes'], p['write_bytes']]))
    st = plan['steps']
    lines += ['', 'per step (node): read %s B (%s GB), write %s B (%s GB), %s files'
              % (num(plan['read_bytes_per_step']), _gb(plan['read_bytes_per_step']),
                 num(plan['write_bytes_per_step']), _gb(plan['write_bytes_per_step']), num(plan['files'])),
              'per rank: deepspeed.initialize read %s B, write %s B; first step read %s B, write %s B; steady step '
              'read %s B, write %s B' % tuple(num(st[s][k]) for s in ('init', 'first', 'steady')
                                               for k in ('read_bytes_per_rank', 'write_bytes_per_rank'))]
    # the table's text may hold newlines (jq split the joined text again)
    return columns('\n'.join(lines).split('\n'))


def path_notes(plan: dict[str, Any], targets: list[str]) -> list[str]:
    """The ds_config's nvme_path is where DeepSpeed would swap; the replay
    swaps under the targets: say so, and when DeepSpeed splits the tensor
    kinds over two drives (offload_optimizer vs offload_param nvme_path)."""
    c = plan['config']
    paths = ([c['opt_path']] if c['opt_nvme'] else []) + ([c['param_path']] if c['param_nvme'] else [])
    u: list[Any] = []
    for p in sorted(paths, key=sort_key):
        if not u or sort_key(u[-1]) != sort_key(p):
            u.append(p)
    out = ['note: nvme_path %s in the ds_config is not used: the replay swaps under --target %s'
           % (', '.join('' if p is None else text(p) for p in u), ' '.join(targets))]
    if len(u) > 1:
        out.append('note: DeepSpeed puts optimizer state and gradients (%s) and parameters (%s) on different '
                   'nvme_paths; the replay puts both kinds of one rank on its --target'
                   % (text(c['opt_path']), text(c['param_path'])))
    return out
