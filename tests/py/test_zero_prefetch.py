# SPDX-License-Identifier: GPL-2.0-only
"""tswap.plan.zero_prefetch: the NVMe parameter reads of a micro-step as
DeepSpeed v0.16.4's parameter coordinator issues them
(runtime/zero/partitioned_param_coordinator.py fetch_sub_module,
__prefetch_nvme_param_partitions, __params_to_release, release_sub_module;
runtime/swap_tensor/partitioned_param_swapper.py swap_in)."""
import copy
import json
from pathlib import Path

import pytest

from tswap.plan.zero_config import PlanError, read_config
from tswap.plan.zero_prefetch import param_reads
from tswap.plan.zero_rank import rank_geometry
from tswap.plan.zero_steps import param_jobs

FIX = Path(__file__).resolve().parents[1] / 'fixtures' / 'zero'
A2 = json.loads((FIX / 'ds_config.issue37-A2.json').read_text())


def reads(cfg, record=False, **zero):
    cfg = copy.deepcopy(cfg)
    z = cfg['zero_optimization']
    for k, v in zero.items():
        if k == 'buffer_count':
            z['offload_param']['buffer_count'] = v
        else:
            z[k] = v
    c, _ = read_config(cfg, '', 1.0, 'steady')
    rk = rank_geometry(c, 33554432.0, 1.0, 4194304.0)
    r = param_reads(c, rk, record)
    show = lambda ops: [([f['k'] for f in op.files], op.prefetch) for op in ops]  # noqa: E731
    return show(r.forward), show(r.backward)


def test_a2_prefetches_every_nvme_parameter_and_keeps_it_for_backward():
    # fetch_sub_module: the walk pops backward's entries of available
    # parameters (their use recorded); __prefetch_nvme_param_partitions swaps
    # 3..7 in at once (5 free buffers); __params_to_release keeps them
    fwd, bwd = reads(A2)
    assert fwd == [([3, 4, 5, 6, 7], True)]
    assert bwd == []


def test_a4_without_the_prefetch_releases_by_reuse_distance():
    # prefetch_bucket_size 0: neither prefetch runs; reuse distance 0
    # releases every parameter after forward
    fwd, bwd = reads(A2, stage3_prefetch_bucket_size=0)
    assert fwd == [([k], False) for k in (3, 4, 5, 6, 7)]
    assert bwd == [([k], False) for k in (7, 6, 5, 4, 3)]


def test_the_recording_step_reads_each_parameter_when_its_module_runs():
    # no complete trace: no prefetch, release_sub_module releases all
    fwd, bwd = reads(A2, record=True)
    assert fwd == [([k], False) for k in (3, 4, 5, 6, 7)]
    assert bwd == [([k], False) for k in (7, 6, 5, 4, 3)]


def test_fewer_buffers_limit_the_prefetch():
    # available_swap_in_buffers bounds one prefetch; released parameters
    # free theirs (remove_partition_and_release_buffers); at the end of
    # forward the walk reaches backward's first use of a released parameter
    fwd, bwd = reads(A2, buffer_count=2)
    assert fwd == [([3, 4], True), ([5], True), ([6], True), ([7], True), ([6], True)]
    assert bwd == [([5], True), ([4], True), ([3], True)]


def test_without_prefetch_reuse_distance_alone_keeps_the_last_ones():
    # __params_to_release: a module within max_reuse_distance elements
    # that uses the parameter again keeps it (2 x the tensors after it)
    fwd, bwd = reads(A2, stage3_prefetch_bucket_size=0, stage3_max_reuse_distance=16777216)
    assert bwd == [([k], False) for k in (5, 4, 3)]


def test_more_parameters_kept_than_buffers_is_deepspeeds_assert():
    # partitioned_param_swapper.py swap_in: "Not enough buffers" (5 kept
    # by reuse distance, one buffer each, 4 buffers: zero_rank refuses it)
    with pytest.raises(PlanError, match='Not enough buffers'):
        reads(A2, stage3_max_reuse_distance=10 ** 9, buffer_count=4)


def param_jobs_of(cfg, **zero):
    """(count, iodepth) of the forward's parameter jobs, steady step."""
    cfg = copy.deepcopy(cfg)
    z = cfg['zero_optimization']
    for k, v in zero.items():
        if k == 'buffer_count':
            z['offload_param']['buffer_count'] = v
        else:
            z[k] = v
    c, _ = read_config(cfg, '', 1.0, 'steady')
    rk = rank_geometry(c, 33554432.0, 1.0, 4194304.0)
    return [(j['count'], j['iodepth']) for j in param_jobs(param_reads(c, rk, False).forward)]


def test_one_parameter_prefetches_in_a_row_are_one_job_of_depth_one():
    # swap_in of 3 and 4 at once (depth 2); then 5, 6, 7 one at a time:
    # one read in flight, the same I/O as one job over the three files;
    # 6 again starts a new job (a fio job lists a file once)
    assert param_jobs_of(A2, buffer_count=2) == [(2, 2), (3, 1), (1, 1)]
    # the A2 prefetch of all five stays one job as deep as its files
    assert param_jobs_of(A2) == [(5, 5)]
    # reads waited for one at a time: one job
    assert param_jobs_of(A2, stage3_prefetch_bucket_size=0) == [(5, 1)]
