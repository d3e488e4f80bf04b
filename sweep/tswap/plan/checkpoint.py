# SPDX-License-Identifier: GPL-2.0-only
"""FastPersist checkpoint writes (DeepSpeed >= 0.17.1, #7215): how
FastFileWriter cuts one checkpoint file into I/O, and the ds_config
blocks that tune it (best-checkpoint.json).

The arithmetic is jobs/fastpersist-plan's (the standalone job profile
jobs/fastpersist-checkpoint.fio keeps its POSIX sh copy; tests/py/
test_checkpoint.py checks that both give the same sections), read from
deepspeed/io at v0.19.5:
- A = intra_op_parallelism x 512: the handle's get_alignment()
  (csrc/aio/py_lib/deepspeed_py_io_handle.cpp), which FastFileWriter
  keeps its O_DIRECT offsets multiples of (fast_file_writer.py
  _drain_io_buffer);
- H, the bytes of one drain: io_buffer_size / 2 with io_buffer_double
  (double_io_buffer.py Double_IO_Buffer._split_buffer), else
  io_buffer_size (single_io_buffer.py Single_IO_Buffer); one
  async_pwrite of H each time the buffer (half) is full
  (fast_file_writer.py FastFileWriter._write_from_tensor);
- body: S - S % H bytes in drains of H; rem: the aligned rest of the
  buffer, one more write (FastFileWriter._force_drain); tail: the last
  S % A bytes, a buffered append (FastFileWriter._unaligned_drain); one
  fsync at the end (FastFileWriter._fini);
- io_buffer_size a multiple of A (base_io_buffer.py Base_IO_Buffer
  asserts it), of 2 x A with double buffering (Double_IO_Buffer).

The keys: deepspeed/runtime/model_checkpointing/config.py
get_checkpoint_writer_config reads "checkpoint"."writer" with
get_scalar_param (constants.py: CHECKPOINT_WRITER_TYPE ...
CHECKPOINT_IO_MULTIPLIER, their defaults), and writer_factory.py
CheckpointWriterFactory._setup_for_aio builds the handle from the
top-level "aio" block (aio_config.py get_aio_config: tswap.plan.deepspeed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .deepspeed import O_DIRECT_ALIGNMENT, aio_block, release

# constants.py CHECKPOINT_IO_BUFFER_SIZE_DEFAULT (64 * 1024**2),
# CHECKPOINT_IO_BUFFER_DOUBLE_DEFAULT (True)
IO_BUFFER_SIZE_DEFAULT = 64 << 20
IO_BUFFER_DOUBLE_DEFAULT = True
# the writer keys get_checkpoint_writer_config reads, in its order
# (v0.19.5 config.py; unchanged since #7215, v0.17.1)
WRITER_KEYS = ('type', 'io_buffer_size', 'io_buffer_double', 'show_statistics',
               'data_parallel', 'decoupled', 'io_multiplier')


class CheckpointError(ValueError):
    """Arguments FastFileWriter refuses: the one-line rule, naming the
    argument (IO_BUFFER_SIZE, ...) as jobs/fastpersist-plan does."""


@dataclass(frozen=True)
class Sections:
    """One checkpoint file of file_bytes as FastFileWriter writes it, bytes:
    align (A), drain (H), body (drains of H), rem (one aligned write,
    0: none), tail (the buffered append, 0: none); body + rem + tail =
    file_bytes. last: the section that ends with the fsync ("body", "rem"
    or "tail"; "" for an empty file)."""
    file_bytes: int
    align: int
    drain: int
    body: int
    rem: int
    tail: int

    @property
    def last(self) -> str:
        return 'tail' if self.tail else 'rem' if self.rem else 'body' if self.body else ''

    @property
    def names(self) -> tuple[str, ...]:
        """The sections that have bytes, in order."""
        return tuple(n for n, b in (('body', self.body), ('rem', self.rem), ('tail', self.tail))
                     if b)


def sections(file_bytes: int, io_buffer_size: int, double: bool, threads: int) -> Sections:
    """The sections of a file of file_bytes (> 0) written with
    checkpoint.writer io_buffer_size bytes (> 0), io_buffer_double and
    aio.intra_op_parallelism threads (1..1024, tswap_threads); the module
    docstring gives each rule's source. CheckpointError for a buffer
    DeepSpeed's Base_IO_Buffer or Double_IO_Buffer would assert on."""
    for name, v in (('FILE_BYTES', file_bytes), ('IO_BUFFER_SIZE', io_buffer_size),
                    ('THREADS', threads)):
        if v < 1:
            raise CheckpointError('%s=%d: must be a positive decimal integer' % (name, v))
    if threads > 1024:
        raise CheckpointError('THREADS=%d: must be at most 1024 (tswap_threads)' % threads)
    align = threads * O_DIRECT_ALIGNMENT
    if double:
        if io_buffer_size % (2 * align):
            raise CheckpointError(
                'IO_BUFFER_SIZE=%d: must be a multiple of 2 x THREADS x 512 = %d with double'
                " buffering (DeepSpeed's Double_IO_Buffer asserts it)" % (io_buffer_size, 2 * align))
        drain = io_buffer_size // 2
    else:
        if io_buffer_size % align:
            raise CheckpointError(
                "IO_BUFFER_SIZE=%d: must be a multiple of THREADS x 512 = %d (DeepSpeed's"
                ' Base_IO_Buffer asserts it)' % (io_buffer_size, align))
        drain = io_buffer_size
    rest = file_bytes % drain
    return Sections(file_bytes=file_bytes, align=align, drain=drain, body=file_bytes - rest,
                    rem=rest - rest % align, tail=rest % align)


def writer_block(io_buffer_size: int, double: bool) -> dict[str, Any]:
    """checkpoint.writer for FastFileWriter (type "fast") with this buffer:
    exactly WRITER_KEYS, the others at constants.py's defaults
    (show_statistics false, data_parallel null = None, decoupled false,
    io_multiplier 1). type is written "fast", as the docs write it
    (config.py upper-cases it: FAST)."""
    return {'type': 'fast', 'io_buffer_size': io_buffer_size, 'io_buffer_double': double,
            'show_statistics': False, 'data_parallel': None, 'decoupled': False,
            'io_multiplier': 1}


def best_checkpoint(point: dict[str, Any], verdict: Any, ds: str = '') -> dict[str, Any]:
    """best-checkpoint.json's document from a picked checkpoint point
    (aggregate.json's: tensor = io_buffer_size bytes, iodepth = 2 with
    io_buffer_double else 1, block, qd, threads, submit, window):
    {deepspeed_versions, checkpoint: {writer}, aio, reason}. The aio
    block has the keys release ds reads (tswap.plan.deepspeed.aio_block);
    the writer exists from 0.17.1 (">=0.17.1" at the least)."""
    r = release(ds)
    aio = aio_block(r, point.get('block'), point.get('qd'), point.get('threads'),
                    point.get('submit') == 'single', point.get('window') == 'overlap')
    iobuf = point.get('tensor')
    return {'deepspeed_versions': '>=0.17.1',
            'checkpoint': {'writer': writer_block(int(iobuf) if iobuf is not None else 0,
                                                  point.get('iodepth') == 2)},
            'aio': aio, 'reason': verdict}
