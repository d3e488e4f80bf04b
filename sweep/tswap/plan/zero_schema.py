# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero: a ds_config checked as DeepSpeed v0.16.4 checks it, before
the plan reads it.

zero_optimization, offload_param and offload_optimizer are pydantic models
(runtime/zero/config.py DeepSpeedZeroConfig, runtime/zero/offload_config.py
DeepSpeedZeroOffloadParamConfig, DeepSpeedZeroOffloadOptimizerConfig), on
runtime/config_utils.py DeepSpeedConfigModel: extra="forbid" (an unknown
key: "extra fields not permitted"), enums by exact value (OffloadDeviceEnum
"nvme", not "NVMe"; ZeroStageEnum 0 to 3), ints (a whole, finite number;
Field ge=0 where DeepSpeed says so), and every value "auto" dropped in
DeepSpeedConfigModel.__init__ (the default taken instead). The aio block
is read with get_scalar_param (swap_tensor/aio_config.py get_aio_config)
and handed to the C++ handle: its sizes are checked against the tswap
engine's limits (engine/options.c, engine/plan.h, engine/backend.h).

check(ds_config) -> (the ds_config with "auto" values dropped, notes: one
per "auto" key); PlanError with one line naming the key and the rule.
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any

from ..jqjson import dumps
from .deepspeed import NEWEST, Version
from .zero_config import PlanError, is_num
from .zero_release import added_key

# kinds: bool, obool (Optional[bool]), int (any whole number), int0 (ge=0),
# stage (ZeroStageEnum), device (OffloadDeviceEnum), path (Optional[Path]),
# dict (Optional[Dict]), ratio (float 0..1), param / optimizer (the models)
ZERO = MappingProxyType({
    'stage': 'stage', 'contiguous_gradients': 'bool', 'reduce_scatter': 'bool', 'reduce_bucket_size': 'int0',
    'use_multi_rank_bucket_allreduce': 'bool', 'allgather_partitions': 'bool', 'allgather_bucket_size': 'int0',
    'overlap_comm': 'obool', 'load_from_fp32_weights': 'bool', 'elastic_checkpoint': 'bool',
    'offload_param': 'param', 'offload_optimizer': 'optimizer', 'sub_group_size': 'int0',
    'cpu_offload_param': 'obool', 'cpu_offload_use_pin_memory': 'obool', 'cpu_offload': 'obool',
    'prefetch_bucket_size': 'int0', 'stage3_prefetch_bucket_size': 'int0',
    'param_persistence_threshold': 'int0', 'stage3_param_persistence_threshold': 'int0',
    'model_persistence_threshold': 'int0', 'stage3_model_persistence_threshold': 'int0',
    'max_live_parameters': 'int0', 'stage3_max_live_parameters': 'int0',
    'max_reuse_distance': 'int0', 'stage3_max_reuse_distance': 'int0',
    'gather_16bit_weights_on_model_save': 'bool', 'stage3_gather_16bit_weights_on_model_save': 'bool',
    'module_granularity_threshold': 'int', 'stage3_module_granularity_threshold': 'int',
    'use_all_reduce_for_fetch_params': 'bool', 'stage3_use_all_reduce_for_fetch_params': 'bool',
    'stage3_gather_fp16_weights_on_model_save': 'bool', 'ignore_unused_parameters': 'bool',
    'legacy_stage1': 'bool', 'round_robin_gradients': 'bool', 'zero_hpz_partition_size': 'int0',
    'zero_quantized_weights': 'bool', 'zero_quantized_nontrainable_weights': 'bool',
    'zero_quantized_gradients': 'bool', 'zeropp_loco_param': 'dict', 'mics_shard_size': 'int',
    'mics_hierarchical_params_gather': 'bool', 'memory_efficient_linear': 'bool',
    'pipeline_loading_checkpoint': 'bool', 'override_module_apply': 'bool', 'log_trace_cache_warnings': 'bool'})
PARAM = MappingProxyType({'device': 'device', 'nvme_path': 'path', 'buffer_count': 'int0', 'buffer_size': 'int0',
                          'max_in_cpu': 'int0', 'pin_memory': 'bool'})
OPTIMIZER = MappingProxyType({'device': 'device', 'nvme_path': 'path', 'buffer_count': 'int0', 'pin_memory': 'bool',
                              'pipeline_read': 'bool', 'pipeline_write': 'bool', 'fast_init': 'bool',
                              'ratio': 'ratio'})
# The defaults DeepSpeed takes for a dropped "auto" (the models' Field
# defaults); a bool not named here defaults to false.
_ZERO_DEFAULTS = MappingProxyType({
    'stage': '0', 'reduce_bucket_size': '5e8', 'allgather_bucket_size': '5e8', 'sub_group_size': '1e9',
    'prefetch_bucket_size': '5e7', 'stage3_prefetch_bucket_size': '5e7', 'param_persistence_threshold': '1e5',
    'stage3_param_persistence_threshold': '1e5', 'max_live_parameters': '1e9', 'stage3_max_live_parameters': '1e9',
    'max_reuse_distance': '1e9', 'stage3_max_reuse_distance': '1e9', 'model_persistence_threshold': 'sys.maxsize',
    'stage3_model_persistence_threshold': 'sys.maxsize', 'zero_hpz_partition_size': '1', 'mics_shard_size': '-1',
    'module_granularity_threshold': '0', 'stage3_module_granularity_threshold': '0', 'overlap_comm': 'None',
    'zeropp_loco_param': 'None', 'offload_param': 'None', 'offload_optimizer': 'None', 'cpu_offload': 'None',
    'cpu_offload_param': 'None', 'cpu_offload_use_pin_memory': 'None', 'contiguous_gradients': 'true',
    'reduce_scatter': 'true', 'use_multi_rank_bucket_allreduce': 'true', 'allgather_partitions': 'true',
    'load_from_fp32_weights': 'true', 'ignore_unused_parameters': 'true', 'memory_efficient_linear': 'true',
    'override_module_apply': 'true'})
_PARAM_DEFAULTS = MappingProxyType({'device': '"none"', 'nvme_path': 'None', 'buffer_count': '5', 'buffer_size': '1e8',
                                    'max_in_cpu': '1e9'})
_OPTIMIZER_DEFAULTS = MappingProxyType({'device': '"none"', 'nvme_path': 'None', 'buffer_count': '4', 'ratio': '1.0'})
# pydantic's lax booleans (strings compared in lower case)
_LAX_BOOL = frozenset(('0', 'off', 'f', 'false', 'n', 'no', '1', 'on', 't', 'true', 'y', 'yes'))

# The tswap engine's limits on the aio values it replays: tswap_block_size
# a multiple of the DIO offset alignment (512 at least) and at most
# MAX_RW_COUNT (engine/options.c); tswap_queue_depth at most INT_MAX
# (engine/backend.h TSWAP_MAX_QUEUE_DEPTH: io_setup takes an int);
# tswap_threads at most TSWAP_MAX_THREADS (engine/plan.h).
AIO_LIMITS = MappingProxyType({
    'block_size': (512, 2147479552, 'tswap_block_size: a multiple of 512 bytes (the DIO offset alignment) up to '
                   '2147479552 (MAX_RW_COUNT, engine/options.c)'),
    'queue_depth': (1, 2147483647, 'tswap_queue_depth: 1 to 2147483647 (io_setup takes an int, engine/backend.h)'),
    'intra_op_parallelism': (1, 1024, 'tswap_threads: 1 to 1024 (engine/plan.h TSWAP_MAX_THREADS)')})


_MODEL = MappingProxyType({
    'zero_optimization': ('zero/config.py DeepSpeedZeroConfig', ZERO, _ZERO_DEFAULTS),
    'param': ('zero/offload_config.py DeepSpeedZeroOffloadParamConfig', PARAM, _PARAM_DEFAULTS),
    'optimizer': ('zero/offload_config.py DeepSpeedZeroOffloadOptimizerConfig', OPTIMIZER, _OPTIMIZER_DEFAULTS)})


def _show(v: Any) -> str:
    """v as the ds_config wrote it (infinity as Infinity, Python's json)."""
    if is_num(v) and math.isinf(v):
        return 'Infinity' if v > 0 else '-Infinity'
    if is_num(v) and v != v:
        return 'NaN'
    return dumps(v, compact=True)


def _whole(v: Any) -> bool:
    return is_num(v) and math.isfinite(v) and v == math.floor(v)


def _value_error(key: str, v: Any, kind: str, where: str) -> str:
    """The rule a value of kind breaks, or "" when it is valid."""
    if kind in ('int', 'int0'):
        if not is_num(v):
            return '%s = %s: not an integer (%s)' % (key, _show(v), where)
        if not math.isfinite(v):
            return '%s = %s: not a finite number (%s)' % (key, _show(v), where)
        if v != math.floor(v):
            return '%s = %s: not a whole number (%s)' % (key, _show(v), where)
        if kind == 'int0' and v < 0:
            return '%s = %s: must be at least 0 (%s, Field ge=0)' % (key, _show(v), where)
    elif kind == 'stage':
        if not _whole(v) or not 0 <= v <= 3:
            return '%s = %s: not a ZeRO stage 0, 1, 2 or 3 (zero/config.py ZeroStageEnum)' % (
                key, _show(v))
    elif kind == 'device':
        if v not in ('none', 'cpu', 'nvme'):
            return '%s = %s: not one of "none", "cpu", "nvme" (zero/offload_config.py OffloadDeviceEnum; ' \
                   'case-sensitive)' % (key, _show(v))
    elif kind == 'bool' or (kind == 'obool' and v is not None):
        ok = isinstance(v, bool) or (is_num(v) and v in (0, 1)) or (isinstance(v, str) and v.lower() in _LAX_BOOL)
        if not ok:
            return '%s = %s: not a boolean (%s)' % (key, _show(v), where)
    elif kind == 'path':
        if v is not None and not isinstance(v, str):
            return '%s = %s: not a path (a string; %s)' % (key, _show(v), where)
    elif kind == 'dict':
        if v is not None and not isinstance(v, dict):
            return '%s = %s: not an object (%s)' % (key, _show(v), where)
    elif kind == 'ratio':
        if not is_num(v) or not math.isfinite(v) or not 0 <= v <= 1:
            return '%s = %s: not a number from 0 to 1 (%s, Field ge=0.0, le=1.0)' % (key, _show(v), where)
    return ''


def _model(d: Any, key: str, model: str, notes: list[str], version: Version) -> Any:
    """d checked against one of DeepSpeed's models as release version has
    it (a copy with "auto" values dropped); the nested offload models
    checked in turn."""
    where, fields, defaults = _MODEL[model]
    if not isinstance(d, dict):
        raise PlanError('ds_config: %s = %s: not an object (%s)' % (key, _show(d), where))
    out = {}
    for k, v in d.items():
        name = '%s.%s' % (key, k)
        kind = fields.get(k)
        later = ''
        if kind is None:
            kind, later = added_key(model, k, version)
        if not kind:
            raise PlanError('ds_config: %s: extra fields not permitted (%s: runtime/config_utils.py '
                            'DeepSpeedConfigModel, extra="forbid")%s' % (name, where, '; ' + later if later else ''))
        if v == 'auto':
            # runtime/config_utils.py DeepSpeedConfigModel.__init__ drops it
            notes.append('%s = "auto": DeepSpeed drops it and takes the default %s (runtime/config_utils.py '
                         'DeepSpeedConfigModel)' % (name, defaults.get(k, 'false')))
            continue
        if kind in ('param', 'optimizer'):
            out[k] = None if v is None else _model(v, name, kind, notes, version)
            continue
        err = _value_error(name, v, kind, where)
        if err:
            raise PlanError('ds_config: ' + err)
        out[k] = v
    return out


def _aio(aio: Any) -> None:
    """The aio values as the C++ handle and the tswap engine take them."""
    if aio is None:
        return
    if not isinstance(aio, dict):
        raise PlanError('ds_config: aio = %s: not an object (swap_tensor/aio_config.py get_aio_config reads '
                        'aio.block_size, ...)' % _show(aio))
    for k, (lo, hi, rule) in AIO_LIMITS.items():
        v = aio.get(k)
        if v is None:
            continue
        if not _whole(v):
            raise PlanError('ds_config: aio.%s = %s: not a whole number (the aio handle takes an int; %s)'
                            % (k, _show(v), rule))
        if not lo <= v <= hi or (k == 'block_size' and v % 512):
            raise PlanError('ds_config: aio.%s = %s: out of the engine\'s range (%s)' % (k, _show(v),
                                                                                       rule))


def _on(v: Any) -> bool:
    """A pydantic lax boolean that reads as true."""
    return v is True or (is_num(v) and v == 1) or (isinstance(v, str) and v.lower() in ('1', 'on', 't', 'true', 'y',
                                                                                       'yes'))


def _unmodelled(z: dict) -> None:
    """Fields of later releases that take another optimizer path than the
    NVMe swappers the plan models: refused."""
    oo = z.get('offload_optimizer') or {}
    if _on(oo.get('super_offload')):
        raise PlanError('ds_config: zero_optimization.offload_optimizer.super_offload = %s: SuperOffload '
                        '(zero/offload_config.py super_offload, stage3.py) is not modelled by tswap-zero: leave it '
                        'false' % _show(oo['super_offload']))
    if z.get('zenflow') is not None:
        raise PlanError('ds_config: zero_optimization.zenflow: ZenFlow (zero/config.py zenflow, '
                        'runtime/zenflow) is not modelled by tswap-zero: leave it out')


def check(cfg: dict, version: Version = NEWEST) -> tuple[dict, tuple[str, ...]]:
    """cfg checked as DeepSpeed release version does (module docstring;
    the fields later releases add: zero_release.ADDED_KEYS); the ds_config
    with zero_optimization's "auto" values dropped, and a note per key
    dropped. PlanError: one line naming the key and the rule."""
    notes: list[str] = []
    out = dict(cfg)
    for sec in ('bf16', 'bfloat16', 'fp16'):
        v = cfg.get(sec)
        if v is not None and not isinstance(v, dict):
            raise PlanError('ds_config: %s = %s: not an object (runtime/config.py reads %s.enabled)'
                            % (sec, _show(v), sec))
    # Hugging Face's Trainer fills these in before DeepSpeed sees them;
    # DeepSpeed itself does not (runtime/config.py
    # _set_batch_related_parameters): the plan leaves them out, with a note
    for k in ('gradient_accumulation_steps', 'train_batch_size', 'train_micro_batch_size_per_gpu'):
        if cfg.get(k) == 'auto':
            del out[k]
            notes.append('%s = "auto": a Hugging Face Trainer placeholder DeepSpeed does not resolve; left out%s'
                         % (k, ': 1 used (TrainingArguments\' default)' if k == 'gradient_accumulation_steps' else ''))
    z = cfg.get('zero_optimization')
    if isinstance(z, bool):
        # zero/config.py get_zero_config: the deprecated boolean form is stage 1 or 0
        raise PlanError('ds_config: zero_optimization = %s: the deprecated boolean form means stage %d '
                        '(zero/config.py read_zero_config_deprecated); NVMe offload needs stage 3'
                        % (dumps(z), 1 if z else 0))
    if z is not None:
        out['zero_optimization'] = _model(z, 'zero_optimization', 'zero_optimization', notes, version)
        _unmodelled(out['zero_optimization'])
    _aio(cfg.get('aio'))
    return out, tuple(notes)
