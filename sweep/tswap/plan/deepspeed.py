# SPDX-License-Identifier: GPL-2.0-only
"""What each DeepSpeed release does that tswap models, 0.3.15 to 0.19.5.

Pure facts, no I/O: best-aio.json (tswap.report.best_aio) takes its keys
from here, tswap-sweep's --ds-version is checked here, and tswap-zero
can take its rules from release() too.
Every fact names the DeepSpeed file and function it was read from, and
the release (git tag) it first holds in; docs/deepspeed.md has the table.

- aio keys: deepspeed/runtime/swap_tensor/aio_config.py get_aio_config
  (AIO_DEFAULT_DICT, constants.py): from 0.3.15 block_size, queue_depth,
  thread_count, single_submit, overlap_events; use_gds from 0.15.0
  (#5852); thread_count renamed intra_op_parallelism in 0.16.4 (#7056).
  Unchanged from 0.16.4 to 0.19.5. get_scalar_param ignores other keys.
- swap alignment: deepspeed/runtime/swap_tensor/optimizer_utils.py
  OptimizerSwapper.__init__ and partitioned_param_swapper.py
  AsyncPartitionedParameterSwapper._configure_aio: tensors are padded
  to AIO_ALIGNED_BYTES (1024, utils.py) x threads, every release.
- handle alignment: csrc/aio/py_lib/deepspeed_py_io_handle.cpp
  deepspeed_io_handle_t::get_alignment(): intra_op_parallelism x 512
  (O_DIRECT_ALIGNMENT), from 0.17.1 (#7215); deepspeed/io's writer
  asserts its buffer and offsets are multiples of it.
- pread bound: deepspeed_py_io_handle.cpp is_valid_bytes_to_read(),
  called by deepspeed_io_handle_t::pread from 0.17.1 (#7215): it prints
  "file_offset + buffer nbytes > file bytes" and asserts file_offset +
  buffer bytes <= the file's size. Before, pread let the buffer exceed
  the file ("buffer can exceed file size to enable 4k alignment") and
  asserted only file size % intra_op_parallelism == 0.
- locked swap buffers: deepspeed/runtime/swap_tensor/utils.py
  SwapBufferManager.__init__ takes its buffers from the handle's
  new_cpu_locked_tensor (posix_memalign, mlock) from 0.19.4 (#8212);
  before, accelerator pin_memory(torch.zeros(...)).
- pin_memory default: deepspeed/runtime/zero/offload_config.py
  DeepSpeedZeroOffloadParamConfig and DeepSpeedZeroOffloadOptimizerConfig
  pin_memory: true from 0.19.5 (#8207), false before.
- ds_nvme_tune: deepspeed/nvme (from 0.15.2) perf_run_sweep.py
  DEFAULT_SWEEP_CONFIG: 8 points per direction (tswap grid "deepspeed"),
  64 from 0.17.1 (#7215, grid "deepspeed-0.17"); perf_generate_param.py
  convert_to_param prints num_threads and string booleans, every release.
- checkpoint writer: deepspeed/runtime/model_checkpointing/
  writer_factory.py _setup_for_aio builds FastFileWriter's handle from
  the same aio section, from 0.17.1 (#7215).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

Version = tuple[int, int, int]

FIRST = (0, 3, 15)      # the aio section appears (aio_config.py)
NEWEST = (0, 19, 5)     # the newest release these facts were read from
GDS = (0, 15, 0)        # use_gds (#5852)
RENAME = (0, 16, 4)     # thread_count -> intra_op_parallelism (#7056)
TUNE = (0, 15, 2)       # deepspeed/nvme, ds_nvme_tune
DEEPNVME = (0, 17, 1)   # #7215: get_alignment, pread bound, 64-point sweep, FastPersist
LOCKED = (0, 19, 4)     # #8212: swap buffers from new_cpu_locked_tensor
PINNED = (0, 19, 5)     # #8207: pin_memory true

# DeepSpeed's releases 0.MINOR.0 to 0.MINOR.LAST_PATCH[MINOR], read from
# its git tags v0.1.0..v0.19.5 (every patch in between tagged, none past
# the last of a minor): a patch past the last is no release
LAST_PATCH = (-1, 0, 0, 16, 5, 10, 7, 7, 3, 5, 3, 2, 6, 5, 5, 4, 9, 6, 9, 5)

AIO_ALIGNED_BYTES = 1024   # deepspeed/runtime/swap_tensor/utils.py
O_DIRECT_ALIGNMENT = 512   # csrc/aio/py_lib/deepspeed_py_io_handle.cpp

# ds_nvme_tune's block: perf_generate_param.py convert_to_param, in its order
TUNE_KEYS = ('single_submit', 'overlap_events', 'num_threads', 'queue_depth', 'block_size')

_SYNTAX = re.compile(r'(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})(\.(0|[1-9][0-9]{0,3}))?')


class ReleaseError(ValueError):
    """--ds-version names no release tswap knows: the one-line rule."""


def show(v: Version) -> str:
    """(0, 19, 5) -> "0.19.5"."""
    return '%d.%d.%d' % v


def parse(ds: str) -> Version:
    """--ds-version MAJOR.MINOR[.PATCH] as (major, minor, patch); "" is
    NEWEST. ReleaseError (naming --ds-version and the rule) for another
    shape, a release before FIRST or after NEWEST, or a patch DeepSpeed
    never released (0.17.99: LAST_PATCH, its git tags)."""
    if ds == '':
        return NEWEST
    m = _SYNTAX.fullmatch(ds)
    if m is None:
        raise ReleaseError('--ds-version: not a DeepSpeed release MAJOR.MINOR[.PATCH] (e.g. 0.16.4): %s'
                           % ds.replace('\n', '\\n'))
    v = (int(m.group(1)), int(m.group(2)), int(m.group(4) or 0))
    if v < FIRST:
        raise ReleaseError('--ds-version: DeepSpeed %s has no aio section (it appears in %s)'
                           % (ds, show(FIRST)))
    if v > NEWEST:
        raise ReleaseError('--ds-version: DeepSpeed %s is newer than %s, the newest release tswap knows'
                           ' (its aio keys and rules are unchecked)' % (ds, show(NEWEST)))
    last = LAST_PATCH[v[1]]
    if v[2] > last:
        raise ReleaseError('--ds-version: DeepSpeed %s is no release: 0.%d has 0.%d.0 to 0.%d.%d (DeepSpeed\'s '
                           'git tags)' % (ds, v[1], v[1], v[1], last))
    return v


@dataclass(frozen=True)
class Release:
    """The facts of one DeepSpeed release (module docstring for sources).

    keys: the aio keys get_aio_config reads, in AIO_DEFAULT_DICT's order
    (best-aio.json writes them in it); key_range: the releases with that
    key set (PEP 440); threads_key: the intra-op thread count's key;
    handle_alignment: get_alignment() exists (bytes = threads x 512);
    pread_bound: pread refuses offset + buffer > file size;
    locked_swap_buffers: swap buffers from new_cpu_locked_tensor;
    pin_memory: the offload configs' default; tune_grid: tswap's grid of
    ds_nvme_tune's default sweep ("" before deepspeed/nvme);
    checkpoint_writer: FastFileWriter reads the aio section."""
    version: Version
    keys: tuple[str, ...]
    key_range: str
    threads_key: str
    handle_alignment: bool
    pread_bound: bool
    locked_swap_buffers: bool
    pin_memory: bool
    tune_grid: str
    checkpoint_writer: bool


def release(ds: str) -> Release:
    """The facts of --ds-version ds ("" is NEWEST); ReleaseError as parse."""
    v = parse(ds)
    threads = 'intra_op_parallelism' if v >= RENAME else 'thread_count'
    keys = ('block_size', 'queue_depth', threads, 'single_submit', 'overlap_events')
    if v >= RENAME:
        rng = '>=%s' % show(RENAME)
    elif v >= GDS:
        rng = '>=%s,<%s' % (show(GDS), show(RENAME))
    else:
        rng = '>=%s,<%s' % (show(FIRST), show(GDS))
    if v >= GDS:
        keys += ('use_gds',)
    grid = 'deepspeed-0.17' if v >= DEEPNVME else 'deepspeed' if v >= TUNE else ''
    return Release(version=v, keys=keys, key_range=rng, threads_key=threads,
                   handle_alignment=v >= DEEPNVME, pread_bound=v >= DEEPNVME,
                   locked_swap_buffers=v >= LOCKED, pin_memory=v >= PINNED,
                   tune_grid=grid, checkpoint_writer=v >= DEEPNVME)


def swap_alignment(threads: int) -> int:
    """Bytes a swapped tensor is padded to (every release): 1024 x threads
    (optimizer_utils.py OptimizerSwapper.__init__ aligned_bytes)."""
    return AIO_ALIGNED_BYTES * threads


def handle_alignment(r: Release, threads: int) -> Optional[int]:
    """The handle's get_alignment() in bytes, threads x 512; None before
    0.17.1, which has no such call."""
    return O_DIRECT_ALIGNMENT * threads if r.handle_alignment else None


def pread_fits(r: Release, offset: int, nbytes: int, file_size: int) -> bool:
    """Whether pread accepts a buffer of nbytes at offset of a file of
    file_size bytes: offset + nbytes <= file_size from 0.17.1, any size
    before (is_valid_bytes_to_read)."""
    return offset + nbytes <= file_size or not r.pread_bound


def aio_block(r: Release, block: Any, qd: Any, threads: Any, single: bool,
              overlap: bool) -> dict[str, Any]:
    """The ds_config "aio" section for r: exactly r.keys, in order, with
    integers and JSON booleans (use_gds false: tswap does not model it)."""
    vals = {'block_size': block, 'queue_depth': qd, r.threads_key: threads,
            'single_submit': single, 'overlap_events': overlap, 'use_gds': False}
    return {k: vals[k] for k in r.keys}
