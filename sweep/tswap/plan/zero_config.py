# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero: a ds_config as DeepSpeed v0.16.4 reads it (the first part
of the plan, docs/zero-infinity.md "Rules").

read_config(ds_config, dtype, world, step) -> (ZeroConfig, defaults): the
settings the plan uses, DeepSpeed's defaults filled in, and a line per
default taken; PlanError with one line for a ds_config DeepSpeed would
reject or that has nothing on NVMe.

Numbers are JSON's doubles (floats), as DeepSpeed's json/hjson reader gives
them to pydantic; every rule cites DeepSpeed's file and function
(deepspeed/runtime/...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from ..jqjson import dumps, text


class PlanError(Exception):
    """A ds_config or option the plan refuses: one line. A message that
    starts with "--" is about a command-line option, one that starts with
    "ds_config: " about the ds_config."""


@dataclass(frozen=True)
class ZeroConfig:
    """The settings a plan uses, in plan.json's "config" order: sizes in
    elements (block_size in bytes), counts, booleans; opt_path and
    param_path as the ds_config gives them; optimizer lower case (adam,
    adamw, adagrad, lion); param_dtype fp32, fp16 or bf16; gas the
    gradient accumulation steps."""
    stage: Any
    sub_group_size: Any
    max_reuse_distance: Any
    reduce_bucket_size: Any
    reduce_scatter: Any
    opt_nvme: bool
    opt_path: Any
    opt_buffer_count: Any
    pipeline_read: Any
    pipeline_write: Any
    fast_init: Any
    param_nvme: bool
    param_path: Any
    param_buffer_count: Any
    param_buffer_size: Any
    max_in_cpu: Any
    block_size: Any
    queue_depth: Any
    intra_op_parallelism: Any
    single_submit: Any
    overlap_events: Any
    optimizer: str
    param_dtype: str
    thread_count_ignored: bool
    gas: Any
    prefetch_bucket_size: Any = 5e7
    max_live_parameters: Any = 1e9

    def as_json(self) -> dict[str, Any]:
        """The fields as plan.json's "config" holds them (without
        thread_count_ignored, a note instead)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != 'thread_count_ignored'}


def show(v: Any) -> str:
    """v as the ds_config wrote it, compact: NaN and infinities by name
    (jq would print null and 1.7976931348623157e+308)."""
    if is_num(v) and not math.isfinite(v):
        return 'NaN' if v != v else 'Infinity' if v > 0 else '-Infinity'
    return dumps(v, compact=True)


def is_num(v: Any) -> bool:
    """v is a JSON number (bool is not)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def alt(v: Any, d: Any) -> Any:
    """jq's `v // d`: d when v is null or false."""
    return d if v is None or v is False else v


def bool_or(v: Any, d: Any) -> Any:
    """v, or d when v is null (false stays false)."""
    return d if v is None else v


def section(parent: Any, key: str, where: str) -> Any:
    """parent[key] as jq's .key reads it: None when parent is None or lacks
    it; PlanError when parent is not an object (DeepSpeed's pydantic model
    refuses a section that is not a dict)."""
    if parent is None:
        return None
    if not isinstance(parent, dict):
        raise PlanError('ds_config: %s = %s: not an object' % (where, show(parent)))
    return parent.get(key)


def downcase(s: str) -> str:
    """ASCII letters to lower case (jq ascii_downcase)."""
    return ''.join(chr(ord(c) + 32) if 'A' <= c <= 'Z' else c for c in s)


_BOOL_KEYS = (('zero_optimization', 'offload_optimizer', 'pipeline_read'),
              ('zero_optimization', 'offload_optimizer', 'pipeline_write'),
              ('zero_optimization', 'offload_optimizer', 'fast_init'),
              ('zero_optimization', 'reduce_scatter'),
              ('aio', 'single_submit'), ('aio', 'overlap_events'), ('aio', 'use_gds'))


def _getpath(cfg: Any, path: tuple[str, ...]) -> Any:
    v = cfg
    for i, k in enumerate(path):
        v = section(v, k, '.'.join(path[:i]) or 'ds_config')
    return v


def _bool_errors(cfg: dict, bf16: Any, fp16: Any, dtype: str) -> list[str]:
    """Booleans: DeepSpeed hands aio's to the C++ handle unconverted
    (swap_tensor/aio_config.py get_aio_config) and lets pydantic coerce the
    others ("false", 0); the plan takes only JSON true/false."""
    out = []
    for k in _BOOL_KEYS:
        v = _getpath(cfg, k)
        if v is not None and not isinstance(v, bool):
            out.append('%s = %s: not a JSON boolean (true or false)' % ('.'.join(k), show(v)))
    for name, sec in (('bf16', bf16), ('fp16', fp16)):
        v = section(sec, 'enabled', name)
        if v is None or isinstance(v, bool) or (v == 'auto' and dtype != ''):
            continue
        if v == 'auto':
            out.append('%s.enabled = "auto": a Hugging Face Trainer placeholder DeepSpeed itself does not '
                       'resolve; give --dtype fp32|fp16|bf16' % name)
        else:
            out.append('%s.enabled = %s: not a JSON boolean (true or false)' % (name, show(v)))
    return out


def _batch_gas(cfg: dict, world: float) -> Any:
    """runtime/config.py _set_batch_related_parameters:
    gradient_accumulation_steps, else train_batch_size //
    train_micro_batch_size_per_gpu // world size, else 1 (DeepSpeed's
    world_size is every GPU; here the data-parallel world)."""
    tb, mb = cfg.get('train_batch_size'), cfg.get('train_micro_batch_size_per_gpu')
    given = alt(cfg.get('gradient_accumulation_steps'), None)
    if given is not None:
        return given
    if is_num(tb) and is_num(mb) and mb > 0:
        return float((float(tb) / float(mb)) // 1 / world // 1)
    return 1.0


def _defaults(cfg: dict, z: Any, oo: Any, op: Any, aio: Any, rd_given: Any) -> list[str]:
    """A line per default taken. zero/config.py DeepSpeedZeroConfig (stage
    0, sub_group_size 1e9, stage3_max_reuse_distance 1e9,
    reduce_bucket_size 5e8); zero/offload_config.py
    DeepSpeedZeroOffloadOptimizerConfig (buffer_count 4,
    pipeline_read/pipeline_write false) and DeepSpeedZeroOffloadParamConfig
    (buffer_count 5, buffer_size 1e8, max_in_cpu 1e9);
    swap_tensor/constants.py AIO_*_DEFAULT read by swap_tensor/aio_config.py
    get_aio_config."""
    g = lambda d, k: section(d, k, '')  # noqa: E731 (sections checked already)
    oo_nvme = alt(g(oo, 'device'), 'none') == 'nvme'
    op_nvme = alt(g(op, 'device'), 'none') == 'nvme'
    out = []
    if g(z, 'stage') is None:
        out.append('zero_optimization.stage=0 (zero/config.py)')
    if g(z, 'sub_group_size') is None:
        out.append('sub_group_size=1e9 (zero/config.py)')
    if op_nvme and rd_given is None:
        out.append('stage3_max_reuse_distance=1e9 (zero/config.py)')
    if op_nvme and g(z, 'stage3_prefetch_bucket_size') is None and g(z, 'prefetch_bucket_size') is None:
        out.append('stage3_prefetch_bucket_size=5e7 (zero/config.py)')
    if oo_nvme and g(z, 'reduce_bucket_size') is None:
        out.append('reduce_bucket_size=5e8 (zero/config.py)')
    for k, d in (('buffer_count', '4'), ('pipeline_read', 'false'), ('pipeline_write', 'false')):
        if oo_nvme and g(oo, k) is None:
            out.append('offload_optimizer.%s=%s (zero/offload_config.py)' % (k, d))
    for k, d in (('buffer_count', '5'), ('buffer_size', '1e8'), ('max_in_cpu', '1e9')):
        if op_nvme and g(op, k) is None:
            out.append('offload_param.%s=%s (zero/offload_config.py)' % (k, d))
    for k, d in (('block_size', '1048576'), ('queue_depth', '8'), ('intra_op_parallelism', '1'),
                 ('single_submit', 'false'), ('overlap_events', 'true')):
        if g(aio, k) is None:
            out.append('aio.%s=%s (swap_tensor/constants.py)' % (k, d))
    if cfg.get('gradient_accumulation_steps') is None:
        if is_num(cfg.get('train_batch_size')) and is_num(cfg.get('train_micro_batch_size_per_gpu')):
            out.append('gradient_accumulation_steps=train_batch_size // train_micro_batch_size_per_gpu'
                       ' // world (runtime/config.py)')
        else:
            out.append('gradient_accumulation_steps=1 (runtime/config.py)')
    if section(cfg.get('optimizer'), 'type', 'optimizer') is None:
        out.append('optimizer.type=adam (no optimizer section: assumed DeepSpeedCPUAdam)')
    return out


_INT_KEYS = ('prefetch_bucket_size', 'max_live_parameters', 'sub_group_size', 'opt_buffer_count', 'param_buffer_count', 'param_buffer_size', 'max_in_cpu',
             'max_reuse_distance', 'reduce_bucket_size', 'block_size', 'queue_depth', 'intra_op_parallelism')


def read_config(cfg: dict, dtype: str, world: float, step: str) -> tuple[ZeroConfig, tuple[str, ...]]:
    """The ds_config cfg (a JSON object) as the plan's settings and the
    defaults taken; dtype "" (from bf16/fp16.enabled), fp32, fp16 or bf16;
    world the data-parallel world size; step steady, first or init.
    PlanError: one line naming the key and the rule."""
    z = alt(cfg.get('zero_optimization'), {})
    oo = alt(section(z, 'offload_optimizer', 'zero_optimization'), {})
    op = alt(section(z, 'offload_param', 'zero_optimization'), {})
    aio = alt(cfg.get('aio'), {})
    # runtime/config.py get_bfloat16_enabled reads "bf16" or the older "bfloat16".
    bf16 = alt(cfg['bf16'] if 'bf16' in cfg else cfg.get('bfloat16'), {})
    fp16 = alt(cfg.get('fp16'), {})
    for name, sec in (('zero_optimization.offload_optimizer', oo), ('zero_optimization.offload_param', op),
                      ('aio', aio), ('bf16', bf16), ('fp16', fp16)):
        section(sec, 'x', name)
    errors = _bool_errors(cfg, bf16, fp16, dtype)
    rd_given = alt(z.get('stage3_max_reuse_distance'), z.get('max_reuse_distance'))
    defaults = _defaults(cfg, z, oo, op, aio, rd_given)
    opt_type = alt(section(cfg.get('optimizer'), 'type', 'optimizer'), 'adam')
    bf_on, fp_on = bf16.get('enabled'), fp16.get('enabled')
    c = ZeroConfig(
        stage=alt(z.get('stage'), 0.0),
        sub_group_size=alt(z.get('sub_group_size'), 1e9),
        max_reuse_distance=alt(rd_given, 1e9),
        reduce_bucket_size=alt(z.get('reduce_bucket_size'), 5e8),
        reduce_scatter=bool_or(z.get('reduce_scatter'), True),
        opt_nvme=alt(oo.get('device'), 'none') == 'nvme',
        opt_path=oo.get('nvme_path'),
        opt_buffer_count=alt(oo.get('buffer_count'), 4.0),
        pipeline_read=bool_or(oo.get('pipeline_read'), False),
        pipeline_write=bool_or(oo.get('pipeline_write'), False),
        fast_init=bool_or(oo.get('fast_init'), False),
        param_nvme=alt(op.get('device'), 'none') == 'nvme',
        param_path=op.get('nvme_path'),
        param_buffer_count=alt(op.get('buffer_count'), 5.0),
        param_buffer_size=alt(op.get('buffer_size'), 1e8),
        max_in_cpu=alt(op.get('max_in_cpu'), 1e9),
        block_size=alt(aio.get('block_size'), 1048576.0),
        queue_depth=alt(aio.get('queue_depth'), 8.0),
        intra_op_parallelism=alt(aio.get('intra_op_parallelism'), 1.0),
        single_submit=bool_or(aio.get('single_submit'), False),
        overlap_events=bool_or(aio.get('overlap_events'), True),
        optimizer=downcase(opt_type) if isinstance(opt_type, str) else dumps(opt_type, compact=True),
        param_dtype=dtype if dtype != '' else 'bf16' if bf_on is True else 'fp16' if fp_on is True else 'fp32',
        thread_count_ignored=aio.get('thread_count') is not None and aio.get('intra_op_parallelism') is None,
        gas=_batch_gas(cfg, world),
        prefetch_bucket_size=alt(alt(z.get('stage3_prefetch_bucket_size'), z.get('prefetch_bucket_size')), 5e7),
        max_live_parameters=alt(alt(z.get('stage3_max_live_parameters'), z.get('max_live_parameters')), 1e9))
    _check(c, cfg, errors, bf_on, fp_on, dtype, step)
    return c, tuple(defaults)


def _whole(v: Any) -> bool:
    """jq's `type == "number" and . >= 0 and . == floor` (infinity passes)."""
    return is_num(v) and v >= 0 and (math.isinf(v) or v == math.floor(v))


def _check(c: ZeroConfig, cfg: dict, errors: list[str], bf_on: Any, fp_on: Any, dtype: str, step: str) -> None:
    """The ds_config's own errors, the first one raised."""
    if errors:
        raise PlanError('ds_config: ' + errors[0])
    if bf_on is True and fp_on is True and dtype == '':
        raise PlanError('ds_config: bf16.enabled and fp16.enabled are both true: DeepSpeed refuses that '
                        '(runtime/config.py _do_error_check)')
    if not (c.opt_nvme or c.param_nvme):
        raise PlanError('ds_config: no offload_optimizer or offload_param with "device": "nvme": '
                        'nothing is swapped to NVMe')
    if not is_num(c.stage) or c.stage < 3:
        raise PlanError('ds_config: zero_optimization.stage=%s: NVMe offload needs stage 3 '
                        '(zero/stage3.py DeepSpeedZeroOptimizer_Stage3)' % show(c.stage))
    if c.opt_nvme and c.opt_path in (None, ''):
        raise PlanError('ds_config: offload_optimizer.device is nvme but offload_optimizer.nvme_path is missing')
    if c.param_nvme and c.param_path in (None, ''):
        raise PlanError('ds_config: offload_param.device is nvme but offload_param.nvme_path is missing')
    if not all(_whole(getattr(c, k)) for k in _INT_KEYS):
        raise PlanError('ds_config: sub_group_size, stage3_max_reuse_distance, reduce_bucket_size, buffer_count, '
                        'buffer_size, max_in_cpu and the aio sizes must be non-negative integers')
    g = c.gas
    if not is_num(g) or not math.isfinite(g) or g < 1 or g > 1024 or g != math.floor(g):
        raise PlanError('ds_config: gradient_accumulation_steps (given, or train_batch_size // '
                        'train_micro_batch_size_per_gpu // world) must be an integer from 1 to 1024')
    if min(c.block_size, c.queue_depth, c.intra_op_parallelism, c.opt_buffer_count, c.param_buffer_count) < 1:
        raise PlanError('ds_config: aio.block_size, aio.queue_depth, aio.intra_op_parallelism and the offload '
                        'buffer_counts must be at least 1')
    if c.optimizer not in ('adam', 'adamw', 'adagrad', 'lion'):
        t = section(cfg.get('optimizer'), 'type', 'optimizer')
        raise PlanError('ds_config: optimizer.type=%s: unknown to ZeRO-Infinity\'s CPU optimizers (adam, adamw, '
                        'adagrad, lion: runtime/engine.py _configure_basic_optimizer)' % text(t))
    if step == 'init' and c.opt_nvme and c.fast_init and c.param_nvme:
        raise PlanError('--step init: offload_optimizer.fast_init=true initialises the fp32 partitions from the '
                        'swapped parameters (optimizer_utils.py _initialize_from_swapped_fp16_params), which the '
                        'plan does not model')
