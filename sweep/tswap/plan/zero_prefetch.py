# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero: which NVMe parameters a micro-step's forward and backward
read, and when, as DeepSpeed v0.16.4's parameter coordinator decides it
(deepspeed/runtime/zero/partitioned_param_coordinator.py
PartitionedParameterCoordinator).

param_reads(config, rank, record) -> Reads: per phase the swap-in
operations in issue order, each the files one swap_in call reads (async:
a prefetch, several files in one op; else one file, waited for).

The model (one module per tensor k, ds_id k, forward in ds_id order,
backward reversed; the root module, without parameters, first in both):
- record (the first micro-step of training: reset_step turns an invalid
  trace into a recorded one): fetch_sub_module swaps a parameter in when
  its module needs it (partition_parameters.py
  _ensure_availability_of_partitioned_params, swap_in async_op=False);
  release_sub_module releases every parameter after its module.
- complete trace (from the second micro-step on): fetch_sub_module then
  pops the module's own entries off the parameter queue (the trace of
  forward and backward uses) and, when stage3_prefetch_bucket_size > 0,
  walks on: entries whose parameter is available or already swapped in
  are popped (their latest use recorded: __most_recent_step_id_param_fetched_for),
  gathered ones counted against the bucket (and stage3_max_live_parameters),
  until a parameter still on NVMe; then __prefetch_nvme_param_partitions
  swaps in, in one async swap_in, the next NVMe parameters of the queue
  while free param swap buffers last and the numel considered is at most
  twice the numel in flight. release_sub_module keeps
  (__params_to_release) a parameter whose recorded use lies after the
  current step, or that a module within stage3_max_reuse_distance
  elements (full tensors) uses again; a released NVMe parameter frees
  its buffer (remove_partition_and_release_buffers).
- A swap-in waited for that finds fewer free buffers than it needs is
  DeepSpeed's assert in partitioned_param_swapper.py swap_in ("Not enough
  buffers"): PlanError.
Not modelled: persistent parameters (stage3_param_persistence_threshold),
all-gathers across ranks (a rank's partitions only), a parameter listed
twice in one prefetch swap_in (counted once).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from ..jqjson import number as num
from .zero_config import PlanError, ZeroConfig
from .zero_rank import Rank

NA, INFLIGHT, AVAILABLE = 'not-available', 'inflight', 'available'


@dataclass(frozen=True)
class Op:
    """One swap_in call: the parameter files it reads (dicts of
    zero_rank.swap_file), and whether it is an async prefetch."""
    files: tuple[dict[str, Any], ...]
    prefetch: bool


@dataclass(frozen=True)
class Reads:
    """A micro-step's swap-in operations, forward and backward."""
    forward: tuple[Op, ...]
    backward: tuple[Op, ...]


class _Coordinator:
    """The state PartitionedParameterCoordinator and the param swapper keep
    for one rank: each parameter's ds_status (all-gather), its partition's
    status (NVMe parameters: on NVMe or in a swap buffer), the in-flight
    registry, the parameter queue."""

    def __init__(self, c: ZeroConfig, rk: Rank, record: bool):
        self.c, self.record = c, record
        self.full = rk.full
        self.files = {f['k']: f for f in rk.nvme_params}
        self.status = {k: NA for k in range(len(rk.full))}
        # partitions in a swap buffer (NVMe parameters only)
        self.buffered: set[int] = set()
        self.free = int(c.param_buffer_count)
        self.registry: list[int] = []
        self.n_available = 0.0
        self.ops: list[Op] = []
        # the trace: root, modules 0..n-1 forward, root, n-1..0 backward;
        # a module is its parameter's ds_id (None: the root)
        n = len(rk.full)
        self.modules: list[Any] = [None] + list(range(n)) + [None] + list(range(n - 1, -1, -1))
        self.queue = deque((k, s) for s, k in enumerate(self.modules) if k is not None)
        self.recent: dict[int, int] = {}
        self.step = 0

    def on_nvme(self, k: int) -> bool:
        """_is_currently_on_nvme: an NVMe parameter whose partition is not
        in a buffer."""
        return k in self.files and k not in self.buffered

    def swap_in(self, ks: list[int], prefetch: bool) -> None:
        if len(ks) > self.free:
            raise PlanError('ds_config: offload_param.buffer_count=%s: a parameter swap-in needs %d buffer(s), %d '
                            'free (the others hold NVMe parameters kept or prefetched for later modules), and '
                            'DeepSpeed asserts "Not enough buffers" (partitioned_param_swapper.py swap_in): raise '
                            'buffer_count or lower stage3_max_reuse_distance'
                            % (num(self.c.param_buffer_count), len(ks), self.free))
        self.free -= len(ks)
        self.buffered.update(ks)
        self.ops.append(Op(tuple(self.files[k] for k in ks), prefetch))

    def all_gather(self, ks: list[int]) -> None:
        """__all_gather_params_: NVMe partitions not in a buffer are
        swapped in and waited for (_ensure_availability_of_partitioned_params)."""
        todo = [k for k in ks if self.status[k] == NA]
        sync = [k for k in todo if self.on_nvme(k)]
        if sync:
            self.swap_in(sync, False)
        for k in todo:
            self.status[k] = INFLIGHT
            self.registry.append(k)
            self.n_available += self.full[k]

    def fetch(self, k: Any) -> None:
        """fetch_sub_module of the module at self.step."""
        mine = [] if k is None else [k]
        self.all_gather(mine)
        for p in mine:
            if p in self.registry:
                self.registry.remove(p)
                self.status[p] = AVAILABLE
        if not self.record:
            self._prefetch(mine)
        self.step += 1

    def _prefetch(self, mine: list[int]) -> None:
        not_fetched = {p for p in mine if self.recent.get(p, -1e10) < self.step}
        popped: set[int] = set()
        while self.queue and len(popped) < len(not_fetched):
            p, s = self.queue.popleft()
            self.recent[p] = s
            popped.add(p)
        bucket = self.c.prefetch_bucket_size
        if bucket <= 0:
            return
        limit = min(self.c.max_live_parameters - self.n_available, bucket)
        chosen: list[int] = []
        numel = 0.0
        while self.queue and numel < limit:
            p, s = self.queue.popleft()
            if self.on_nvme(p):
                self.queue.appendleft((p, s))
                break
            self.recent[p] = max(self.recent.get(p, -1e10), s)
            if self.status[p] == NA and p not in chosen:
                chosen.append(p)
                numel += self.full[p]
        if numel > 0:
            self.all_gather(chosen)
        if self.c.param_nvme:
            self._prefetch_nvme()

    def _prefetch_nvme(self) -> None:
        """__prefetch_nvme_param_partitions."""
        in_flight = sum(self.full[p] for p in self.registry)
        considered = 0.0
        ks: list[int] = []
        for p, _ in self.queue:
            if considered > 2 * in_flight or len(ks) >= self.free:
                break
            if self.on_nvme(p) and p not in ks:
                ks.append(p)
            considered += self.full[p]
        if ks:
            self.swap_in(ks, True)

    def release(self, k: Any) -> None:
        """release_sub_module of the module just run (self.step is past it)."""
        if k is None:
            return
        if not self.record:
            if self.recent.get(k, -1e10) > self.step:
                return
            traversed = 0.0
            for m in self.modules[self.step:]:
                if traversed >= self.c.max_reuse_distance:
                    break
                if m is None:
                    continue
                if m == k:
                    return
                traversed += self.full[m]
        if self.status[k] == AVAILABLE:
            self.status[k] = NA
            self.n_available -= self.full[k]
            if k in self.buffered:
                self.buffered.discard(k)
                self.free += 1

    def run(self, ks: list[Any]) -> tuple[Op, ...]:
        start = len(self.ops)
        for k in ks:
            self.fetch(k)
            self.release(k)
        return tuple(self.ops[start:])


def param_reads(c: ZeroConfig, rk: Rank, record: bool) -> Reads:
    """The NVMe parameter reads of one micro-step (module docstring):
    record for the first micro-step of training, else a complete trace."""
    if not rk.nvme_params:
        return Reads((), ())
    co = _Coordinator(c, rk, record)
    n = len(rk.full)
    fwd = co.run(co.modules[:n + 1])
    bwd = co.run(co.modules[n + 1:])
    return Reads(fwd, bwd)
