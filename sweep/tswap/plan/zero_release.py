# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero --ds-version: what changes in ZeRO-Infinity's swap I/O from
DeepSpeed 0.16.4 to 0.19.5 (git diff v0.16.4 v0.19.5 --
deepspeed/runtime/swap_tensor/ deepspeed/runtime/zero/), on top of the
release facts of tswap.plan.deepspeed.

What changes the plan or its replay:
- swap buffers: from 0.19.4 (#8212) SwapBufferManager.__init__
  (swap_tensor/utils.py) and AsyncPartitionedParameterSwapper._configure_aio
  (partitioned_param_swapper.py) take them from the handle's
  new_cpu_locked_tensor (csrc/pin_memory/page_alloc.cpp
  ds_page_aligned_alloc: posix_memalign of a page, mlock): the replay's fio
  jobs use tswap_alloc=deepspeed. Before, get_accelerator().pin_memory(
  torch.zeros(...)) (CUDA's page-locked host allocator): fio's allocation,
  locked by tswap_pin=auto.
- pread bound: from 0.17.1 (#7215) deepspeed_py_io_handle.cpp
  is_valid_bytes_to_read asserts offset + buffer <= the file's size; every
  planned read is checked against its file (check_reads).
- buffer_size: partitioned_param_swapper.py get_buffer asserted numel <
  buffer_size before 0.17.1, numel <= buffer_size from it (#7215).
- padded state writes: from 0.16.9 (#7046) the non-pipelined swapper
  writes each state tensor's aligned swap buffer
  (partitioned_optimizer_swapper.py _swap_out_optimizer_state,
  optimizer_utils.py OptimizerStateSwapInfo.get_swap_buffers_and_paths);
  before, the unpadded compute tensor (the plan pads: a note).
- ds_config keys: zero/config.py and zero/offload_config.py add fields
  (ADDED_KEYS), which the schema takes from their release on.

What does not: pin_memory's default (true from 0.19.5, #8207) pins only
CPU-resident copies (partition_parameters.py _partition_param for device
cpu; stage3.py grad_partitions_flat_buffer and the sub-group gradient
buffer, copied into the swapper's own buffers before a write:
async_swapper.py AsyncTensorSwapper); the files, sizes and order of the
swaps stay. partitioned_param_coordinator.py's changes (#7825 leaf-module
fetch lock, #8043 trace invalidation, #8148 recompute of frozen
parameters under activation checkpointing, __n_available_params reset in
reset_step) leave __prefetch_nvme_param_partitions and
__params_to_release as they were.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from . import deepspeed as ds
from ..jqjson import number as num
from .zero_config import PlanError

# tswap-zero's rules were read from and checked against 0.16.4 (issues 23,
# 37), and the diffs above bring them to 0.19.5; earlier swappers differ
OLDEST = (0, 16, 4)
PADDED_WRITES = (0, 16, 9)      # #7046
BUFFER_SIZE_INCLUSIVE = (0, 17, 1)  # #7215

# ds_config fields DeepSpeed added after 0.16.4: model -> key -> (first
# release, kind as zero_schema reads it, source)
ADDED_KEYS = MappingProxyType({
    'zero_optimization': MappingProxyType({
        'zenflow': ((0, 17, 5), 'dict', 'zero/config.py zenflow'),
        'enable_sanity_checks': ((0, 17, 6), 'bool', 'zero/config.py enable_sanity_checks'),
        'leaf_module': ((0, 18, 0), 'dict', 'zero/config.py leaf_module'),
        'allgather_sequential': ((0, 18, 5), 'bool', 'zero/config.py allgather_sequential'),
        'stage3_allgather_sequential': ((0, 18, 5), 'bool', 'zero/config.py allgather_sequential'),
        'save_muon_momentum_buffer_in_memory': ((0, 18, 9), 'bool',
                                                'zero/config.py save_muon_momentum_buffer_in_memory')}),
    'optimizer': MappingProxyType({
        'super_offload': ((0, 18, 0), 'bool', 'zero/offload_config.py super_offload'),
        'cpuadam_cores_perc': ((0, 18, 0), 'ratio', 'zero/offload_config.py cpuadam_cores_perc')}),
    'param': MappingProxyType({})})


@dataclass(frozen=True)
class ZeroRelease:
    """The DeepSpeed release a plan follows (module docstring for sources):
    version (0, 19, 5); locked_swap_buffers: new_cpu_locked_tensor;
    pread_bound: reads must fit their file; pin_memory: the offload
    configs' default; buffer_size_inclusive: a partition of buffer_size
    elements fits; padded_writes: the non-pipelined swapper writes the
    aligned buffers."""
    version: ds.Version
    locked_swap_buffers: bool
    pread_bound: bool
    pin_memory: bool
    buffer_size_inclusive: bool
    padded_writes: bool

    def as_json(self) -> dict[str, Any]:
        """plan.json's "deepspeed" object."""
        return {'version': ds.show(self.version),
                'swap_buffers': 'new_cpu_locked_tensor' if self.locked_swap_buffers else 'pin_memory',
                'pread_bound': self.pread_bound, 'pin_memory_default': self.pin_memory,
                'buffer_size_inclusive': self.buffer_size_inclusive, 'padded_state_writes': self.padded_writes}


def zero_release(version: str = '') -> ZeroRelease:
    """--ds-version version ("" the newest); deepspeed.ReleaseError (one
    line naming --ds-version) for a release tswap does not know or one
    before OLDEST."""
    r = ds.release(version)
    v = r.version
    if v < OLDEST:
        raise ds.ReleaseError('--ds-version: tswap-zero follows DeepSpeed %s to %s (its swap rules were checked '
                              'against %s); %s is older' % (ds.show(OLDEST), ds.show(ds.NEWEST), ds.show(OLDEST),
                                                            version))
    return ZeroRelease(version=v, locked_swap_buffers=r.locked_swap_buffers, pread_bound=r.pread_bound,
                       pin_memory=r.pin_memory, buffer_size_inclusive=v >= BUFFER_SIZE_INCLUSIVE,
                       padded_writes=v >= PADDED_WRITES)


def added_key(model: str, key: str, version: ds.Version) -> tuple[str, str]:
    """(kind, "") when release version reads model's key, ("", rule) when
    a later release adds it, ("", "") when no release tswap knows has it."""
    a = ADDED_KEYS.get(model, {}).get(key)
    if a is None:
        return '', ''
    first, kind, src = a
    if version >= first:
        return kind, ''
    return '', 'DeepSpeed %s adds it (%s), --ds-version %s has no such field' % (ds.show(first), src, ds.show(version))


def check_reads(ops: list[dict[str, Any]], files: list[dict[str, Any]], r: ZeroRelease) -> None:
    """Every read of ops fits its file (its bytes as plan.json's swap_files
    give them): from 0.17.1 DeepSpeed asserts file_offset + buffer bytes <=
    file bytes (csrc/aio/py_lib/deepspeed_py_io_handle.cpp
    is_valid_bytes_to_read, #7215); PlanError naming the file otherwise."""
    if not r.pread_bound:
        return
    size = {}
    for f in files:
        key = (f['dir'], f['name'])
        size[key] = max(size.get(key, 0.0), f['bytes'])
    for op in ops:
        if op['rw'] != 'read':
            continue
        have = size.get((op['dir'], op['file']))
        if have is None or op['bytes'] > have:
            raise PlanError('--ds-version %s: the %s read of %s/%s takes %s bytes from a file of %s; DeepSpeed '
                            'asserts file_offset + buffer nbytes <= file bytes from 0.17.1 (deepspeed_py_io_handle.cpp '
                            'is_valid_bytes_to_read)' % (ds.show(r.version), op['phase'], op['dir'], op['file'],
                                                         num(op['bytes']), 'none' if have is None else num(have)))
