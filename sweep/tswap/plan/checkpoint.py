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
from typing import Any, Optional

from .deepspeed import O_DIRECT_ALIGNMENT, aio_block, release
from .expand import Expanded
from .grid import DEFAULTS, Grid
from .jobs import tswap_options
from .values import EXIT_ERROR, EXIT_USAGE, Refusal, bytes_to_size, size_to_bytes

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


# --workload checkpoint: the grid keys it takes, the others it refuses
# (a tensor grid's), and its points (docs/sweep.md "Checkpoint writes").
CHECKPOINT_KEYS = ('io_buffer_size', 'io_buffer_double', 'block', 'qd', 'window', 'submit',
                   'threads')
_TENSOR_ONLY = ('tensor', 'iodepth', 'ranks')
ALIGN = 4096    # a block the sweep takes (tswap.plan.expand ALIGN)


def grid_check(g: Grid, workload: str) -> None:
    """Refuse (exit 2, one line) a grid that does not fit the workload: a
    checkpoint run takes no tensor, iodepth or ranks key, rw only write
    and backend only libaio (FastFileWriter writes through the aio handle,
    one file); a tensor run no io_buffer_* key."""
    if workload != 'checkpoint':
        for k in ('io_buffer_size', 'io_buffer_double'):
            if getattr(g, k):
                raise Refusal(EXIT_USAGE, 'grid %s: %s is a checkpoint key: only with --workload'
                              ' checkpoint (see --help)' % (g.name, k))
        return
    for k in _TENSOR_ONLY:
        if getattr(g, k):
            raise Refusal(EXIT_USAGE, 'grid %s: %s is not a checkpoint key (--workload checkpoint'
                          ' writes one file of --size bytes; its keys: %s)'
                          % (g.name, k, ' '.join(CHECKPOINT_KEYS)))
    for k, only in (('rw', 'write'), ('backend', 'libaio')):
        bad = [v for v in getattr(g, k) if v != only]
        if bad:
            raise Refusal(EXIT_USAGE, 'grid %s: %s %s: --workload checkpoint takes only %s %s'
                          % (g.name, k, bad[0], k, only))


def expand_points(g: Grid) -> Expanded:
    """A checkpoint grid's points as plan lines (tswap.plan.expand's
    fields): kind checkpoint, rw write, backend libaio, tensor =
    io_buffer_size (bytes), iodepth = the writer's buffers (2 with
    io_buffer_double, else 1); keys left out get DeepSpeed's defaults
    (64m, on; the ds_config aio block's). Loops: io_buffer_size,
    io_buffer_double, threads, window, submit, block, qd. A buffer
    FastFileWriter would refuse with those threads (sections()), or a
    block not a multiple of 4096, is left out and counted."""
    out: list[str] = []
    seen = set()
    skipped = 0
    d = dict(DEFAULTS)
    bufs = g.io_buffer_size or (bytes_to_size(IO_BUFFER_SIZE_DEFAULT),)
    dbls = g.io_buffer_double or ('on',)
    threads, window, submit = g.threads or d['threads'], g.window or d['window'], g.submit or d['submit']
    block, qd = g.block or d['block'], g.qd or d['qd']
    for buf in bufs:
        ib = size_to_bytes(buf) or 0
        for dbl in dbls:
            for p in map(int, threads):
                try:
                    sections(1, ib, dbl == 'on', p)
                except CheckpointError:
                    skipped += len(window) * len(submit) * len(block) * len(qd)
                    continue
                for w in window:
                    for s in submit:
                        for b in block:
                            bb = size_to_bytes(b) or 0
                            if bb % ALIGN:
                                skipped += len(qd)
                                continue
                            for q in map(int, qd):
                                key = 'ckpt-io%s-%s-b%s-q%d-%s-%s-p%d' % (
                                    bytes_to_size(ib), 'double' if dbl == 'on' else 'single',
                                    bytes_to_size(bb), q, s, w, p)
                                if key in seen:
                                    continue
                                seen.add(key)
                                out.append('%s\tcheckpoint\twrite\tlibaio\t%d\t%d\t%d\t%s\t%s\t%d\t%d'
                                           % (key, ib, bb, q, s, w, p, 2 if dbl == 'on' else 1))
    return Expanded(tuple(out), skipped)


def skipped_warning(skipped: int) -> str:
    """The warning for points expand_points() left out."""
    return ('left out %d checkpoint point(s) whose io_buffer_size is not a multiple of threads x'
            ' 512 (x 2 with io_buffer_double: DeepSpeed asserts it), or whose block size is not'
            ' a multiple of 4096' % skipped)


def job_file(line: str, file_bytes: int) -> str:
    """The fio job of a checkpoint plan line for a file of file_bytes:
    jobs/fastpersist-checkpoint.fio's sections that have bytes (body,
    rem: the tswap engine with its buffer fill, tswap_fill=double or
    single as io_buffer_double, fio's own buffer unlocked: tswap_pin=0;
    tail: fio's sync engine, buffered), stonewalled, the last with
    end_fsync=1. fio's
    runtime of each includes its end_fsync (backend.c: do_io, then
    update_runtime), so the bytes over the sections' runtimes are the
    whole file's GB/s (tswap.results.result)."""
    f = line.split('\t')
    key, ib, bb, q, s, w, p, bufs = f[0], int(f[4]), int(f[5]), f[6], f[7], f[8], int(f[9]), int(f[10])
    sec = sections(file_bytes, ib, bufs == 2, p)
    eng = ('ioengine=external:${TSWAP_ENGINE}\n' + tswap_options('libaio', bb, q, s, w, str(p))
           + 'tswap_fill=%s\ntswap_pin=0\ndirect=1\n' % ('double' if bufs == 2 else 'single'))
    out = ['; tswap-sweep point %s\n' % key,
           '; checkpoint: one file of %d bytes as DeepSpeed\'s FastFileWriter writes it\n' % file_bytes,
           '; (jobs/fastpersist-checkpoint.fio): io_buffer_size %s, io_buffer_double %s:\n'
           % (bytes_to_size(ib), 'true' if bufs == 2 else 'false'),
           '; body %d bytes in drains of %d, rem %d, tail %d; fsync ends %s.\n'
           % (sec.body, sec.drain, sec.rem, sec.tail, sec.last),
           '; aio: block %s, queue depth %s, submit %s, window %s, %d thread(s).\n'
           % (bytes_to_size(bb), q, s, w, p),
           '; Environment: TSWAP_ENGINE (tswap.so), TSWAP_TARGET (the file, \':\' escaped as \'\\:\').\n',
           '; run.sh in this directory sets them and reruns the point.\n\n',
           '[global]\nfilename=${TSWAP_TARGET}\nrw=write\nfallocate=none\niodepth=1\n']
    off = 0
    for name in sec.names:
        n = getattr(sec, name)
        out.append('\n[%s]\n' % name)
        if off:
            out.append('stonewall\n')
        out.append(eng if name != 'tail' else 'ioengine=sync\ndirect=0\n')
        out.append('offset=%d\nbs=%d\nsize=%d\nend_fsync=%d\n'
                   % (off, sec.drain if name == 'body' else n, n, 1 if name == sec.last else 0))
        off += n
    return ''.join(out)


def memlock_need(line: str, file_bytes: int, page: int) -> int:
    """The bytes one fio of the checkpoint plan line mlocks at once for a
    file of file_bytes, page: the page size (bytes). The engine's rule,
    engine/fill.c tswap_fill_init (as DeepSpeed's new_cpu_locked_tensor:
    posix_memalign to a page, then mlock): the section's bs, twice for
    tswap_fill=double (io_buffer_double), rounded up to a page; fio's own
    buffer is not locked (tswap_pin=0). job_file's body has bs = the
    drain, rem bs = rem; the tail is fio's sync engine (nothing locked);
    the sections are stonewalled jobs, each its own process, so the need
    is the larger of body and rem."""
    f = line.split('\t')
    double = int(f[10]) == 2
    sec = sections(file_bytes, int(f[4]), double, int(f[9]))
    need = max(sec.drain if sec.body else 0, sec.rem) * (2 if double else 1)
    return -(-need // page) * page


def memlock_check(lines: tuple[str, ...], file_bytes: int, limit: Optional[int], ipc_lock: bool,
                  page: int) -> None:
    """Refusal (exit 3: the environment cannot run the points, as a
    missing fio) when a checkpoint point of the plan lines needs more
    locked memory (memlock_need) than RLIMIT_MEMLOCK's soft limit
    (limit, bytes; None: unlimited) lets a process lock: mlock(2) fails
    with ENOMEM once the locked pages exceed limit // page (mm/mlock.c
    do_mlock), unless the process has CAP_IPC_LOCK (ipc_lock). Names the
    largest need and its point."""
    if ipc_lock or limit is None:
        return
    need, key = max(((memlock_need(x, file_bytes, page), x.split('\t', 1)[0])
                     for x in lines if x.split('\t')[1:2] == ['checkpoint']), default=(0, ''))
    if need > limit // page * page:
        raise Refusal(EXIT_ERROR, '--workload checkpoint: point %s needs %d bytes of locked memory'
                      ' (tswap_fill mlocks its I/O buffer, as DeepSpeed'
                      "'s new_cpu_locked_tensor) but RLIMIT_MEMLOCK (ulimit -l) is %d bytes and"
                      ' this user has no CAP_IPC_LOCK: raise ulimit -l to %d KiB or more, or sweep'
                      ' a smaller io_buffer_size' % (key, need, limit, need // 1024))
