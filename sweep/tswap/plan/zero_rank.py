# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero: one rank's tensors and swap files (the plan's second part).

rank_geometry(config, params, world, param_numel) -> Rank: the model's
tensors, their partitions, the sub-groups with their swap files, and the
NVMe parameters in forward order with their reuse; PlanError for a plan
DeepSpeed would assert on or one with nothing to swap.

Every rule cites DeepSpeed v0.16.4 (deepspeed/runtime/...). Sizes are in
elements unless the name says bytes; numbers are doubles, exact for
integers below 2^53. The model: tensor k (ds_id k,
zero/partition_parameters.py Init.param_id) is one module, run in ds_id
order forward and in reverse backward.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Optional

from ..jqjson import number as num
from .zero_config import PlanError, ZeroConfig

# The optimizer's state tensors of one sub-group (optimizer_utils.py
# _get_state_tensors: every tensor in optimizer.state[param]).
# ops/adam/cpu_adam.py DeepSpeedCPUAdam.step: exp_avg, exp_avg_sq;
# ops/lion/cpu_lion.py DeepSpeedCPULion.step: exp_avg, exp_avg_sq (both
# allocated); ops/adagrad/cpu_adagrad.py DeepSpeedCPUAdagrad.step: exp_avg_sq.
STATE_NAMES = MappingProxyType({'adam': ('exp_avg', 'exp_avg_sq'), 'adamw': ('exp_avg', 'exp_avg_sq'),
                                'lion': ('exp_avg', 'exp_avg_sq'), 'adagrad': ('exp_avg_sq',)})

# swap_tensor/constants.py MIN_AIO_BYTES, AIO_ALIGNED_BYTES
MIN_AIO_BYTES = 1048576.0
AIO_ALIGNED_BYTES = 1024.0


def ceil_div(a: float, b: float) -> float:
    """ceil(a / b) for whole a, b, in doubles."""
    return float(math.floor((a + b - 1) / b))


def io_aligned(n: float, a: float) -> float:
    """optimizer_utils.py OptimizerSwapper._io_aligned_numel (and the same
    function in partitioned_param_swapper.py, async_swapper.py): n rounded
    up to a multiple of numel_alignment a."""
    r = float(int(n) % int(a))
    return n if r == 0 else n + a - r


def aligned_head(n: float, a: float) -> float:
    """optimizer_utils.py _adjust_for_misaligned_lengths: the aligned head
    of a gradient of n elements (swapped; the remainder stays in memory)."""
    return n - float(int(n) % int(a))


def swap_file(name: str, d: str, kind: str, nbytes: float, k: Any = None) -> dict[str, Any]:
    """A swap file as plan.json holds it: {k (parameters and gradients),
    name, dir (optimizer or params), kind (fp32, state, grad, param), bytes}."""
    f: dict[str, Any] = {} if k is None else {'k': k}
    f.update(name=name, dir=d, kind=kind, bytes=nbytes)
    return f


@dataclass(frozen=True)
class Rank:
    """One rank's geometry: element sizes (bytes), min_aio (bytes), the
    numel alignments, the tensors' full and per-rank numels (by ds_id),
    pfile (parameter files by ds_id), sg (the sub-groups, plan.json's
    per_rank.sub_groups) and nvme_params (NVMe parameter files in forward
    order, with reuse and kept)."""
    state_names: tuple[str, ...]
    opt_es: float
    par_es: float
    min_aio: float
    a_opt: float
    a_par: float
    nparams: int
    full: tuple[float, ...]
    parts: tuple[float, ...]
    rank_numel: float
    pfile: dict[int, dict[str, Any]]
    sg: tuple[dict[str, Any], ...]
    nvme_params: tuple[dict[str, Any], ...]


def sub_groups(parts: tuple[float, ...], size: float, rank_numel: float) -> list[list[int]]:
    """stage3.py _create_fp16_sub_groups: one group when sub_group_size >=
    the partition numel, else parameters (ds_ids) appended until the
    running sum reaches sub_group_size."""
    if size >= rank_numel:
        return [list(range(len(parts)))]
    groups: list[list[int]] = []
    cur: list[int] = []
    acc = 0.0
    for k, p in enumerate(parts):
        cur.append(k)
        acc += p
        if acc >= size:
            groups.append(cur)
            cur, acc = [], 0.0
    return groups + ([cur] if cur else [])


def _grad_files(g: list[int], parts: tuple[float, ...], dsid: str, a_opt: float, es: float,
                min_aio: float) -> list[dict[str, Any]]:
    """stage3.py partition_grads -> OptimizerSwapper._swap_out_gradients:
    one file per parameter's fp32 gradient partition whose aligned head is
    swappable, {ds_id}_gradient_{offset}_{length}.tensor.swp
    (OptimizerStateSwapInfo.get_or_create_gradient_paths), offset the
    parameter's place in the sub-group (stage3.py set_grad_positions)."""
    out, off = [], 0.0
    for k in g:
        o = off
        off += parts[k]
        h = aligned_head(parts[k], a_opt)
        if parts[k] * es >= min_aio and h * es >= min_aio:
            out.append(swap_file('%s_gradient_%s_%s.tensor.swp' % (dsid, num(o), num(h)), 'optimizer', 'grad',
                                 h * es, k))
    return out


def rank_geometry(c: ZeroConfig, params: float, world: float, param_numel: float,
                  numels: Optional[tuple[float, ...]] = None, inclusive: bool = True) -> Rank:
    """One rank's tensors and files for a model of params elements in
    tensors of param_numel (the last the remainder), or of numels (each
    tensor's elements in model order, --param-numels), split over world
    ranks. PlanError when DeepSpeed would assert or nothing is swapped;
    inclusive: a partition of offload_param.buffer_size elements fits
    (DeepSpeed 0.17.1 on, zero_release)."""
    state_names = STATE_NAMES[c.optimizer]
    # The optimizer swapper is built with dtype=torch.float32 (stage3.py
    # _configure_tensor_swapping); the param swapper with the model dtype
    # (partitioned_param_swapper.py _configure_aio: swap_element_size).
    opt_es = 4.0
    par_es = 4.0 if c.param_dtype == 'fp32' else 2.0
    # optimizer_utils.py OptimizerSwapper.__init__ (and partitioned_param_swapper
    # .py _configure_aio): min_aio_bytes = max(MIN_AIO_BYTES, block_size);
    # aligned_bytes = AIO_ALIGNED_BYTES * intra_op_parallelism;
    # numel_alignment = aligned_bytes / element size (swap_tensor/utils.py).
    min_aio = max(MIN_AIO_BYTES, float(c.block_size))
    a_opt = float(math.floor(AIO_ALIGNED_BYTES * c.intra_op_parallelism / opt_es))
    a_par = float(math.floor(AIO_ALIGNED_BYTES * c.intra_op_parallelism / par_es))
    # zero/partition_parameters.py _partition_param: each rank holds
    # ceil(numel / world) elements of every parameter.
    if numels is None:
        n = int(ceil_div(params, param_numel))
        full = tuple(params - param_numel * (n - 1) if k == n - 1 else param_numel for k in range(n))
    else:
        n, full = len(numels), tuple(numels)
    parts = tuple(ceil_div(t, world) for t in full)
    rank_numel = sum(parts)
    groups = sub_groups(parts, c.sub_group_size, rank_numel)
    # stage3.py _create_fp16_partitions_with_defragmentation (with
    # _create_param_groups_fp16_flat_cpu_memory): a sub-group's parameters get
    # a CPU flat buffer when its running end fits in max_in_cpu elements;
    # past it they live on NVMe (flat buffer None).
    ends, acc = [], 0.0
    for g in groups:
        acc += sum(parts[k] for k in g)
        ends.append(acc)
    # partitioned_param_swapper.py swappable_tensor: a parameter partition of
    # at least min_aio_bytes gets a file {ds_id}_param.tensor.swp when zero.Init
    # partitions it (partition_parameters.py _partition_param: get_buffer,
    # swap_out_and_release), CPU-resident or not; _io_aligned_numel elements.
    pfile = {k: swap_file('%d_param.tensor.swp' % k, 'params', 'param', io_aligned(parts[k], a_par) * par_es, k)
             for k in range(n) if c.param_nvme and parts[k] * par_es >= min_aio}
    sg = []
    for i, g in enumerate(groups):
        numel = sum(parts[k] for k in g)
        dsid = '%d_%d' % (g[0], g[-1])
        # stage3.py _swappable_optimizer_subgroup -> OptimizerSwapper.swappable_tensor
        oswap = c.opt_nvme and numel * opt_es >= min_aio
        pnvme = c.param_nvme and ends[i] > c.max_in_cpu
        # partitioned_optimizer_swapper.py _swap_in_parameter: every state
        # tensor is read with _io_aligned_numel(numel) elements; the
        # pipelined swapper also writes the aligned buffers.
        sbytes = io_aligned(numel, a_opt) * opt_es if oswap else 0.0
        s: dict[str, Any] = {
            'id': i, 'ds_id': dsid, 'numel': numel, 'params': len(g), 'param_ids': list(g),
            'optimizer_swap': oswap, 'params_on_nvme': pnvme, 'state_bytes': sbytes,
            'state_tensors': ['fp32'] + list(state_names) if oswap else [],
            # OptimizerStateSwapInfo._add_tensors([parameter]): "{ds_id}",
            # the state "{state}-{ds_id}" (optimizer_utils.py _get_state_tensors)
            'fp32_file': swap_file('%s.tensor.swp' % dsid, 'optimizer', 'fp32', sbytes) if oswap else None,
            'state_files': [swap_file('%s-%s.tensor.swp' % (x, dsid), 'optimizer', 'state', sbytes)
                            for x in state_names] if oswap else [],
            'grad_files': _grad_files(g, parts, dsid, a_opt, opt_es, min_aio) if oswap else [],
            'param_files': [pfile[k] for k in g if k in pfile]}
        s['grad_bytes'] = [f['bytes'] for f in s['grad_files']]
        s['param_bytes'] = [f['bytes'] for f in s['param_files']] if pnvme else []
        sg.append(s)
    nvme = reuse(c, full, [f for s in sg if s['params_on_nvme'] for f in s['param_files']])
    shape = ('--param-numel %s' % num(param_numel) if numels is None else '--param-numels')
    _check(c, sg, state_names, parts, par_es, min_aio, pfile, nvme, params, world, shape, inclusive)
    return Rank(tuple(state_names), opt_es, par_es, min_aio, a_opt, a_par, n, full, parts, rank_numel,
                pfile, tuple(sg), tuple(nvme))


def reuse(c: ZeroConfig, full: tuple[float, ...], nvme: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """zero/partitioned_param_coordinator.py __params_to_release: once the
    trace is complete (from the second forward on: reset_step at each
    forward, parameter_offload.py _start_of_forward_hook), a module's
    parameters are not released after forward when the modules after it
    use them again within max_reuse_distance elements (full tensors,
    ds_numel). Tensor k's reuse comes after the 2 x (tensors k+1..n-1) of
    forward and backward. Each NVMe parameter file gets reuse and kept."""
    suffix, acc = [0.0] * len(full), 0.0
    for k in range(len(full) - 1, -1, -1):
        acc += full[k]
        suffix[k] = acc
    out = []
    for f in nvme:
        k = f['k']
        after = suffix[k + 1] if k + 1 < len(full) else 0.0
        out.append(dict(f, reuse=2 * after, kept=2 * after < c.max_reuse_distance))
    return out


def _check(c: ZeroConfig, sg: list[dict[str, Any]], state_names: tuple[str, ...], parts: tuple[float, ...],
           par_es: float, min_aio: float, pfile: dict, nvme: list[dict[str, Any]], params: float, world: float,
           shape: str, inclusive: bool) -> None:
    """Configurations DeepSpeed itself rejects (an assert at init or in the
    first or second step), and plans with nothing to swap."""
    nopt = sum(1 for s in sg if s['optimizer_swap'])
    per_sg = len(state_names) + 2
    held = 1 + (1 if c.pipeline_read else 0) + (1 if c.pipeline_write else 0) if nopt > 1 else 1
    needed = per_sg * held
    too_big = sum(1 for p in parts if p * par_es >= min_aio
                  and (p > c.param_buffer_size if inclusive else p >= c.param_buffer_size))
    rel = '<=' if inclusive else '<'
    kept = sum(1 for f in nvme if f['kept'])
    nfiles = sum(len(s['state_tensors']) + len(s['grad_files']) for s in sg) + len(pfile)
    if c.opt_nvme and nopt > 0 and c.opt_buffer_count < needed:
        # OptimizerSwapper.__init__: SwapBufferManager(count=buffer_count);
        # a sub-group being swapped holds one buffer per tensor it swaps
        # (fp32 + state) plus one for its gradient (swap_in_optimizer_state,
        # _swap_in_optimizer_state: required_buffer_count). Pipelined, the
        # next sub-group's read and the previous one's write hold theirs too.
        where = ('pipelined_optimizer_swapper.py _swap_in_optimizer_state: ran out of swap buffers' if held > 1
                 else 'partitioned_optimizer_swapper.py swap_in_optimizer_state')
        raise PlanError('ds_config: offload_optimizer.buffer_count=%s: DeepSpeed needs at least %s (%s sub-group(s) '
                        'in flight x %s buffers: fp32, %s, gradient) or asserts (%s)'
                        % (num(c.opt_buffer_count), num(needed), num(held), num(per_sg), ', '.join(state_names), where))
    if c.param_nvme and too_big > 0:
        # zero/partition_parameters.py _partition_param -> partitioned_param_swapper
        # .py get_buffer: assert numel < buffer_size for every NVMe partition
        # (numel <= buffer_size from 0.17.1, #7215).
        if shape.startswith('--param-numel '):
            raise PlanError('--param-numel: a parameter partition of %s elements (ceil(%s / world %s)) does not fit '
                            'offload_param.buffer_size=%s (partitioned_param_swapper.py get_buffer asserts numel %s '
                            'buffer_size): lower --param-numel or raise buffer_size'
                            % (num(max(parts)), shape.split(' ')[1], num(world), num(c.param_buffer_size), rel))
        raise PlanError('--param-numels: tensor %d\'s partition of %s elements (over world %s) does not fit '
                        'offload_param.buffer_size=%s (partitioned_param_swapper.py get_buffer asserts numel %s '
                        'buffer_size): raise buffer_size'
                        % (parts.index(max(parts)), num(max(parts)), num(world), num(c.param_buffer_size), rel))
    if kept > c.param_buffer_count:
        # Each NVMe parameter kept for backward holds one of the param
        # swapper's buffer_count buffers; the next swap_in finds none and
        # asserts (DeepSpeed issue 3062): the second step fails.
        raise PlanError('ds_config: offload_param.buffer_count=%s: from the second step on DeepSpeed keeps the last '
                        '%d NVMe parameters of forward for backward (reused within stage3_max_reuse_distance=%s '
                        'elements, with %s), one swap buffer each, and asserts "Not enough buffers" '
                        '(partitioned_param_swapper.py swap_in): raise buffer_count to %d or lower '
                        'stage3_max_reuse_distance'
                        % (num(c.param_buffer_count), kept, num(c.max_reuse_distance), shape, kept))
    if nfiles == 0:
        raise PlanError('--params=%s --world=%s: nothing is swapped: every sub-group and parameter partition is below '
                        'min_aio_bytes=%s (optimizer_utils.py swappable_tensor)' % (num(params), num(world), num(min_aio)))
