# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero: the swap jobs of deepspeed.initialize and of a first and a
steady training step (the plan's third part).

phases(config, rank, ranks) -> Phases: each step a list of phases, a
phase's stages in issue order, a stage's jobs run at once. A job: files
of one folder and one size, in order, moved in one direction by one
handle with iodepth tensors issued before its wait(); a serial job runs
after the previous serial one of its chain (fio wait_for in the replay).

Every rule cites DeepSpeed v0.16.4 (deepspeed/runtime/...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..jqjson import number as num
from .zero_config import ZeroConfig
from .zero_prefetch import Op, Reads, param_reads
from .zero_rank import Rank, io_aligned

Job = dict[str, Any]
Phase = dict[str, Any]
# "as many as there are": a depth no job reaches
ALL = 1e18


def runs(files: list[dict[str, Any]]) -> list[Job]:
    """Consecutive files of a list that share folder and size form one job."""
    out: list[Job] = []
    for f in files:
        if out and out[-1]['bytes'] == f['bytes'] and out[-1]['dir'] == f['dir']:
            out[-1]['files'].append(f['name'])
        else:
            out.append({'dir': f['dir'], 'kind': f['kind'], 'bytes': f['bytes'], 'files': [f['name']]})
    return out


def jobs(jid: str, files: list[dict[str, Any]], rw: str, handle: str, depth: float) -> list[Job]:
    """The jobs moving files (rw read or write) on handle, depth tensors
    issued before a wait; ids jid, or jid-0, jid-1, ... when several."""
    r = runs(files)
    out = []
    for i, j in enumerate(r):
        cnt = len(j['files'])
        j.update(id='%s-%d' % (jid, i) if len(r) > 1 else jid, rw=rw, handle=handle, count=cnt,
                 iodepth=cnt if cnt < depth else depth)
        out.append(j)
    return out


def serial(jid: str, files: list[dict[str, Any]], rw: str, handle: str, depth: float, chain: str) -> list[Job]:
    """jobs(), one after the other on one handle (chained in the replay)."""
    out = jobs(jid, files, rw, handle, depth)
    for j in out:
        j.update(serial=True, chain=chain)
    return out


def totals(phases: list[Phase], ranks: float) -> list[Phase]:
    """The stages with jobs, with their bytes per rank; a phase's bytes
    per rank and per node (ranks)."""
    for p in phases:
        st = []
        for s in p['stages']:
            if not s['jobs']:
                continue
            s['read_bytes_per_rank'] = sum(j['count'] * j['bytes'] for j in s['jobs'] if j['rw'] == 'read')
            s['write_bytes_per_rank'] = sum(j['count'] * j['bytes'] for j in s['jobs'] if j['rw'] == 'write')
            st.append(s)
        p['stages'] = st
        p['read_bytes_per_rank'] = sum(s['read_bytes_per_rank'] for s in st)
        p['write_bytes_per_rank'] = sum(s['write_bytes_per_rank'] for s in st)
        p['read_bytes'] = p['read_bytes_per_rank'] * ranks
        p['write_bytes'] = p['write_bytes_per_rank'] * ranks
    return phases


def summary(phases: list[Phase]) -> dict[str, Any]:
    """A step's bytes per rank, and per phase name (micro-steps summed;
    names in sorted order)."""
    names = sorted({p['name'] for p in phases})
    return {'read_bytes_per_rank': sum(p['read_bytes_per_rank'] for p in phases),
            'write_bytes_per_rank': sum(p['write_bytes_per_rank'] for p in phases),
            'phases': [{'name': n,
                        'read_bytes_per_rank': sum(p['read_bytes_per_rank'] for p in phases if p['name'] == n),
                        'write_bytes_per_rank': sum(p['write_bytes_per_rank'] for p in phases if p['name'] == n)}
                       for n in names]}


@dataclass(frozen=True)
class Phases:
    """The three steps' phases (totals filled in), whether the optimizer
    swapper is PipelinedOptimizerSwapper, and a gradient buffer's bytes."""
    steady: list[Phase]
    first: list[Phase]
    init: list[Phase]
    pipelined: bool
    gbuf_bytes: float
    kept: frozenset[int]


def grad_order(c: ZeroConfig, full: tuple[float, ...]) -> list[int]:
    """stage3.py reduce_independent_p_g_buckets_and_remove_grads: backward
    hands gradients over last layer first, in buckets of
    reduce_bucket_size elements (full tensors); __reduce_and_partition_ipg_grads
    sorts a bucket by ds_id when reduce_scatter is on (the default)."""
    b: list[list[int]] = []
    cur: list[int] = []
    n = 0.0
    for k in range(len(full) - 1, -1, -1):
        if n + full[k] > c.reduce_bucket_size and n > 0:
            b.append(cur)
            cur, n = [k], full[k]
        else:
            cur.append(k)
            n += full[k]
    b.append(cur)
    return [k for x in b for k in (sorted(x) if c.reduce_scatter else x)]


def grad_split(order: list[int], gfile: dict[int, dict[str, Any]],
               gbuf: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """optimizer_utils.py _swap_out_gradients -> async_swapper.py
    AsyncTensorSwapper: a buffer of gbuf bytes is written when the next
    gradient does not fit; the last one only when the optimizer step's
    first swap_in_optimizer_state flushes the swapper
    (_flush_gradient_swapper). (written in backward, flushed)."""
    done: list[dict[str, Any]] = []
    cur: list[dict[str, Any]] = []
    used = 0.0
    for f in (gfile[k] for k in order if k in gfile):
        if used + f['bytes'] > gbuf and cur:
            done += cur
            cur, used = [f], f['bytes']
        else:
            cur.append(f)
            used += f['bytes']
    return done, cur


FileSel = Callable[[dict[str, Any]], list[dict[str, Any]]]


def optimizer(c: ZeroConfig, sg: tuple[dict[str, Any], ...], pipelined: bool, r: FileSel, w: FileSel,
              gr: bool, flush: list[dict[str, Any]], split: bool) -> list[dict[str, Any]]:
    """The stages of the optimizer step (and initialize_optimizer_states):
    stage3.py step: for each sub-group _prepare_sub_group (swap in state
    and gradients), _optimizer_step, _reassign_or_swap_out_partitioned_parameters
    (NVMe parameters written by the param swapper's write handle, waited
    for: SwapBufferPool.swap_out async_op=False), _release_sub_group (swap
    out state). r, w: a sub-group's files read and written; gr: its
    gradients read; flush: the gradients written first; split: the
    non-pipelined swapper writes fp32 (pinned) and the new state apart."""
    o = [s['id'] for s in sg if s['optimizer_swap']]
    m = len(o)
    gh = 'optimizer-write' if pipelined else 'optimizer'

    def rfiles(i: int) -> list[dict[str, Any]]:
        return r(sg[i]) if sg[i]['optimizer_swap'] else []

    def reads(i: int) -> list[Job]:
        return (jobs('sg%d-state' % i, rfiles(i), 'read', 'optimizer-read', ALL)
                + (jobs('sg%d-grad' % i, sg[i]['grad_files'], 'read', 'optimizer-read', ALL) if gr else []))

    def reads_then(i: int, ch: str) -> list[Job]:
        out = reads(i)
        for j in out:
            if j['kind'] != 'grad':
                j.update(serial=True, chain=ch)
        return out

    def pwrite(i: int, ch: str) -> list[Job]:
        if not sg[i]['params_on_nvme']:
            return []
        return serial('sg%d-param' % i, sg[i]['param_files'], 'write', 'param-write', ALL, ch)

    def swrite(i: int, ch: str, h: str) -> list[Job]:
        # partitioned_optimizer_swapper.py swap_out_optimizer_state,
        # _swap_out_unpinned_tensors: pinned tensors written and waited for,
        # then a first step's new (unpinned) state; pipelined: one op.
        if not sg[i]['optimizer_swap']:
            return []
        f = w(sg[i])
        if pipelined or not split:
            return serial('sg%d-state' % i, f, 'write', h, ALL, ch)
        return (serial('sg%d-fp32' % i, [x for x in f if x['kind'] == 'fp32'], 'write', h, ALL, ch)
                + serial('sg%d-state' % i, [x for x in f if x['kind'] != 'fp32'], 'write', h, ALL, ch))

    out = [{'name': 'grad-flush', 'jobs': serial('grad', flush, 'write', gh, ALL, 'grad')}] if flush else []
    if pipelined and c.pipeline_read:
        # pipelined_optimizer_swapper.py PipelinedOptimizerSwapper: a read
        # and a write handle; swap_in_optimizer_state(i, next) waits for the
        # read of i, then issues the read of the next swappable sub-group
        # (stage3.py _create_next_swappable_fp32_groups);
        # swap_out_optimizer_state waits for the previous ASYNC_SWAP_OUT
        # (_complete_swap_out), then issues S(i). Stage j = R(o_j) ||
        # (P(o_j-1) -> S(o_j-1)).
        for k in range(m + 1):
            js = reads(o[k]) if k < m else []
            if k > 0:
                ch = 'sg%d-out' % o[k - 1]
                js += pwrite(o[k - 1], ch) + swrite(o[k - 1], ch, 'optimizer-write')
            out.append({'name': 'stage%d' % k, 'jobs': js})
    elif pipelined:
        # pipeline_write only: stage j = S(o_j-1) || (R(o_j) -> P(o_j)).
        for k in range(m + 1):
            js = swrite(o[k - 1], 'sg%d-out' % o[k - 1], 'optimizer-write') if k > 0 else []
            if k < m:
                ch = 'sg%d-in' % o[k]
                js += reads_then(o[k], ch) + pwrite(o[k], ch)
            out.append({'name': 'stage%d' % k, 'jobs': js})
    else:
        # partitioned_optimizer_swapper.py: one handle; swap_in_optimizer_state
        # reads the state and waits (_swap_in_parameter), then the gradients
        # (_swap_in_gradients); parameters written and waited for;
        # swap_out_optimizer_state writes the state and waits.
        for i, s in enumerate(sg):
            out += [{'name': 'sg%d-in' % i, 'jobs': jobs('sg%d-state' % i, rfiles(i), 'read', 'optimizer', ALL)},
                    {'name': 'sg%d-in-grad' % i,
                     'jobs': jobs('sg%d-grad' % i, s['grad_files'], 'read', 'optimizer', ALL)
                     if gr and s['optimizer_swap'] else []},
                    {'name': 'sg%d-param-out' % i, 'jobs': pwrite(i, 'sg%d-param' % i)},
                    {'name': 'sg%d-out' % i, 'jobs': swrite(i, 'sg%d-out' % i, 'optimizer')}]
    return out


def _fp32(s: dict[str, Any]) -> list[dict[str, Any]]:
    return [s['fp32_file']]


def _fp32_state(s: dict[str, Any]) -> list[dict[str, Any]]:
    return [s['fp32_file']] + s['state_files']


def param_jobs(ops: tuple[Op, ...]) -> list[Job]:
    """The parameter reads of a phase as jobs on the param-read handle,
    one after the other: a run of swap_in calls of one file each (waited
    for, or a prefetch of one parameter: either way one read in flight)
    is one job of iodepth 1, cut by folder and size (runs) and where a
    file comes again (a fio job lists a file once); a prefetch of several
    files (one async swap_in) is its own job, as deep as its files."""
    segs: list[tuple[list[dict[str, Any]], bool, set[str]]] = []
    for op in ops:
        deep = op.prefetch and len(op.files) > 1
        names = {f['name'] for f in op.files}
        if not deep and segs and not segs[-1][1] and not names & segs[-1][2]:
            segs[-1][0].extend(op.files)
            segs[-1][2].update(names)
        else:
            segs.append((list(op.files), deep, names))
    out: list[Job] = []
    for i, (files, deep, _) in enumerate(segs):
        out += serial('param' if len(segs) == 1 else 'param-%d' % i, files, 'read', 'param-read',
                      float(len(files)) if deep else 1, 'param')
    return out


def train(c: ZeroConfig, rk: Rank, pipelined: bool, first: bool, gdone: list, gflush: list,
          gdepth: float, record: Reads, steady: Reads) -> list[Phase]:
    """A step: gradient_accumulation_steps micro-steps (forward, backward),
    then the optimizer step; gradients are swapped out only at the
    accumulation boundary (stage3.py partition_grads). The NVMe parameter
    reads of forward and backward are the parameter coordinator's
    (zero_prefetch: the first micro-step of training records the trace,
    later ones prefetch)."""
    gas = int(c.gas)
    gh = 'optimizer-write' if pipelined else 'optimizer'
    out: list[Phase] = []
    for u in range(1, gas + 1):
        mb = '-mb%d' % u if gas > 1 else ''
        micro = {'micro_step': u} if gas > 1 else {}
        reads = record if first and u == 1 else steady
        out.append(dict({'name': 'forward', 'stages': [
            {'name': 'param-in' + mb, 'jobs': param_jobs(reads.forward)}]}, **micro))
        js = param_jobs(reads.backward)
        if u == gas:
            js += serial('grad', gdone, 'write', gh, gdepth, 'grad')
        out.append(dict({'name': 'backward', 'stages': [
            {'name': ('param-in-grad-out' if u == gas else 'param-in') + mb, 'jobs': js}]}, **micro))
    # The first step: the CPU optimizers create their state in their first
    # step() (cpu_adam.py, cpu_lion.py, cpu_adagrad.py), so only the fp32
    # partitions and gradients are read, then fp32 and the new state written.
    if first:
        st = optimizer(c, rk.sg, pipelined, _fp32, _fp32_state, True, gflush, True)
    else:
        st = optimizer(c, rk.sg, pipelined, _fp32_state, _fp32_state, True, gflush, False)
    out.append({'name': 'optimizer', 'stages': st})
    return out


def init(c: ZeroConfig, rk: Rank, pipelined: bool) -> list[Phase]:
    """deepspeed.initialize's swaps."""
    sg = rk.sg
    gh = 'optimizer-write' if pipelined else 'optimizer'
    cpu_params = [f for s in sg if not s['params_on_nvme'] for f in s['param_files']]
    cpu_fp32 = [s['fp32_file'] for s in sg if s['optimizer_swap'] and not s['params_on_nvme']]
    bc = int(c.opt_buffer_count)
    fp32_jobs: list[Job] = []
    for s in sg:
        if s['params_on_nvme']:
            i = s['id']
            fp32_jobs += serial('sg%d-param' % i, s['param_files'], 'read', 'param-read', 1, 'init')
            if s['optimizer_swap']:
                fp32_jobs += serial('sg%d-fp32' % i, [s['fp32_file']], 'write', gh, 1, 'init')
    for b in range(0, len(cpu_fp32), bc):
        fp32_jobs += serial('fp32-b%s' % num(float(b // bc)), cpu_fp32[b:b + bc], 'write', gh, ALL, 'init')
    return [
        # zero.Init (partition_parameters.py _partition_param): every
        # parameter partition of at least min_aio_bytes written, one at a time.
        {'name': 'zero-init', 'stages': [{'name': 'param-out', 'jobs': serial(
            'param', [rk.pfile[k] for k in sorted(rk.pfile)], 'write', 'param-write', 1, 'param')}]},
        # stage3.py _create_fp16_partitions_with_defragmentation ->
        # _move_to_flat_buffer: the CPU sub-groups' parameters read back.
        {'name': 'fp16-partitions', 'stages': [{'name': 'param-in', 'jobs': serial(
            'param', cpu_params, 'read', 'param-read', 1, 'param')}]},
        # stage3.py _create_fp32_partitions: per sub-group with its
        # parameters on NVMe, the parameters read
        # (_swap_in_sub_group_to_flat_buffer) and its fp32 partition written
        # (initialize_parameters); then the fp32 partitions of the others,
        # buffer_count per op (optimizer_utils.py _swap_out_unpinned_tensors).
        {'name': 'fp32-partitions', 'stages': [{'name': 'fp32-out', 'jobs': fp32_jobs}]},
        # stage3.py initialize_optimizer_states: every sub-group walked as a
        # step without the optimizer: fp32 read, parameters written, fp32 written.
        {'name': 'optimizer-states', 'stages': optimizer(c, sg, pipelined, _fp32, _fp32, False, [], False)},
        # stage3.py create_reduce_and_remove_grad_hooks: param.all_gather()
        # on every parameter reads the NVMe ones once more.
        {'name': 'grad-hooks', 'stages': [{'name': 'param-in', 'jobs': serial(
            'param', list(rk.nvme_params), 'read', 'param-read', 1, 'param')}]}]


def phases(c: ZeroConfig, rk: Rank, ranks: float) -> Phases:
    """The three steps of a rank's plan, node totals for ranks ranks."""
    pipelined = c.opt_nvme and (c.pipeline_read is True or c.pipeline_write is True)
    order = grad_order(c, rk.full)
    gfile = {f['k']: f for s in rk.sg for f in s['grad_files']}
    gbuf = io_aligned(max(s['numel'] for s in rk.sg), rk.a_opt) * 4.0
    gmax = max((f['bytes'] for s in rk.sg for f in s['grad_files']), default=1.0)
    gdepth = max(1.0, c.opt_buffer_count * float((gbuf / gmax) // 1))
    done, flush = grad_split(order, gfile, gbuf)
    record, steady = param_reads(c, rk, True), param_reads(c, rk, False)
    # NVMe parameters kept from forward for backward: not read again in a
    # steady backward
    again = {f['k'] for op in steady.backward for f in op.files}
    kept = frozenset(f['k'] for f in rk.nvme_params if f['k'] not in again)
    return Phases(steady=totals(train(c, rk, pipelined, False, done, flush, gdepth, record, steady), ranks),
                  first=totals(train(c, rk, pipelined, True, done, flush, gdepth, record, steady), ranks),
                  init=totals(init(c, rk, pipelined), ranks), pipelined=pipelined, gbuf_bytes=gbuf, kept=kept)
