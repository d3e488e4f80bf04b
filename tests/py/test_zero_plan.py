# SPDX-License-Identifier: GPL-2.0-only
"""tswap.plan.zero_*: tswap-zero's plan rules, one unit each, each against
the DeepSpeed v0.16.4 file and function it models
(deepspeed/runtime/...; docs/zero-infinity.md "The rules")."""
import copy
import json
from pathlib import Path

import pytest

from tswap.plan.zero_config import PlanError, read_config
from tswap.plan.zero_fiojob import FIO_MAX_JOBS, chunks, job_counts, job_text, replay_bytes, too_many_jobs
from tswap.plan.zero_plan import build, columns
from tswap.plan.zero_rank import aligned_head, io_aligned, rank_geometry, sub_groups
from tswap.plan.zero_steps import grad_order, grad_split

FIX = Path(__file__).resolve().parents[1] / 'fixtures' / 'zero'
A = json.loads((FIX / 'ds_config.issue23-A.json').read_text())
B = json.loads((FIX / 'ds_config.issue23-B.json').read_text())
REAL = json.loads((FIX / 'deepspeed-0.16.4-issue23.json').read_text())
# issue 23's model: 8 tensors of 2048 x 2048 on one rank
MODEL = (33554432.0, 1.0, 1.0, 4194304.0)


def plan(cfg, step='steady', dtype='', model=MODEL):
    return build(cfg, *model, step, dtype)


def with_(cfg, path, value):
    c = copy.deepcopy(cfg)
    d = c
    for k in path[:-1]:
        d = d.setdefault(k, {})
    d[path[-1]] = value
    return c


def phase_bytes(p):
    out = {}
    for ph in p['phases']:
        r, w = out.get(ph['name'], (0, 0))
        out[ph['name']] = (r + ph['read_bytes_per_rank'], w + ph['write_bytes_per_rank'])
    return out


def test_partition_is_ceil_of_numel_over_world():
    # zero/partition_parameters.py _partition_param: each rank holds
    # ceil(numel / world) elements of every parameter
    c, _ = read_config(A, '', 3.0, 'steady')
    rk = rank_geometry(c, 10.0 * 4194304 + 5, 3.0, 4194304.0)
    assert rk.full[-1] == 5 and rk.parts[0] == 1398102 and rk.parts[-1] == 2


def test_sub_groups_fill_until_sub_group_size():
    # zero/stage3.py _create_fp16_sub_groups: whole when sub_group_size >=
    # the partition, else parameters appended until the sum reaches it
    assert sub_groups((4.0, 4.0, 4.0, 4.0, 4.0), 10.0, 20.0) == [[0, 1, 2], [3, 4]]
    assert sub_groups((4.0, 4.0), 8.0, 8.0) == [[0, 1]]


def test_alignment_and_aligned_head():
    # swap_tensor/optimizer_utils.py _io_aligned_numel and
    # _adjust_for_misaligned_lengths
    assert io_aligned(1000.0, 256.0) == 1024.0 and io_aligned(512.0, 256.0) == 512.0
    assert aligned_head(1000.0, 256.0) == 768.0


def test_swap_files_are_named_as_deepspeed_names_them():
    # optimizer_utils.py OptimizerStateSwapInfo, _get_state_tensors;
    # OptimizerStateSwapInfo.get_or_create_gradient_paths;
    # partitioned_param_swapper.py _get_swap_paths
    p = plan(A)
    assert sorted(f['name'] for f in p['swap_files']) == REAL['files']


def test_a_sub_group_below_min_aio_bytes_is_not_swapped():
    # optimizer_utils.py swappable_tensor: numel * element size >= max(1 MiB, block_size)
    cfg = with_(A, ('aio', 'block_size'), 64 * 1048576)
    with pytest.raises(PlanError, match='nothing is swapped'):
        plan(cfg)


def test_parameters_past_max_in_cpu_live_on_nvme():
    # stage3.py _create_fp16_partitions_with_defragmentation: a sub-group's
    # parameters stay on NVMe when its running end passes max_in_cpu
    p = plan(A)
    assert [s['params_on_nvme'] for s in p['per_rank']['sub_groups']] == [False, True, True]


def test_steady_step_of_a_and_b_equals_deepspeed():
    # partitioned_param_coordinator.py __params_to_release (kept for
    # backward); stage3.py step; pipelined_optimizer_swapper.py
    for cfg, name in ((A, 'A'), (B, 'B')):
        got = {k: {'read': r, 'write': w} for k, (r, w) in phase_bytes(plan(cfg)).items()}
        assert got == REAL[name]['steady']['phases']


def test_first_step_reads_no_state_and_rereads_parameters():
    # ops/adam/cpu_adam.py DeepSpeedCPUAdam.step creates the state;
    # partitioned_param_coordinator.py release_sub_module without a
    # complete trace releases every parameter after forward
    got = {k: {'read': r, 'write': w} for k, (r, w) in phase_bytes(plan(A, 'first')).items()}
    assert got == REAL['A']['first']['phases']


def test_init_of_a_equals_deepspeed():
    # stage3.py _create_fp32_partitions, initialize_optimizer_states,
    # create_reduce_and_remove_grad_hooks; partition_parameters.py _partition_param
    s = plan(A, 'init')['steps']['init']
    assert (s['read_bytes_per_rank'], s['write_bytes_per_rank']) == (REAL['A']['init']['read'],
                                                                     REAL['A']['init']['write'])


def test_gradients_go_in_buckets_sorted_by_ds_id():
    # stage3.py reduce_independent_p_g_buckets_and_remove_grads and
    # __reduce_and_partition_ipg_grads (sorted when reduce_scatter)
    c, _ = read_config(with_(A, ('zero_optimization', 'reduce_bucket_size'), 2 * 4194304), '', 1.0, 'steady')
    assert grad_order(c, (4194304.0,) * 5) == [3, 4, 1, 2, 0]


def test_the_last_gradient_buffer_is_flushed_by_the_optimizer():
    # swap_tensor/async_swapper.py AsyncTensorSwapper; optimizer_utils.py
    # _flush_gradient_swapper
    files = {k: {'k': k, 'bytes': 10.0} for k in range(5)}
    done, flush = grad_split([4, 3, 2, 1, 0], files, 20.0)
    assert [f['k'] for f in done] == [4, 3, 2, 1] and [f['k'] for f in flush] == [0]


def test_pipeline_read_issues_the_next_read_beside_the_writes():
    # pipelined_optimizer_swapper.py swap_in_optimizer_state: R0 R1 P0 S0 R2 ...
    ops = [(o['rw'], o['file']) for o in plan(A)['ops'] if o['phase'] == 'optimizer']
    assert ops[:3] == [('write', '6_7_gradient_0_4194304.tensor.swp'),
                       ('write', '6_7_gradient_4194304_4194304.tensor.swp'), ('read', '0_2.tensor.swp')]
    assert [f"{o['rw']} {o['file']} {o['bytes']:.0f}" for o in plan(A)['ops']
            if o['phase'] == 'optimizer'] == REAL['A']['steady']['ops']['optimizer']


def test_gradient_accumulation_reads_parameters_each_micro_step():
    # stage3.py partition_grads: gradients swapped at the boundary only
    p = plan(with_(A, ('gradient_accumulation_steps',), 2))
    names = [(ph['name'], ph.get('micro_step')) for ph in p['phases']]
    assert names == [('forward', 1), ('backward', 1), ('forward', 2), ('backward', 2), ('optimizer', None)]
    assert p['phases'][1]['write_bytes_per_rank'] == 0 and p['phases'][3]['write_bytes_per_rank'] > 0


def test_too_few_optimizer_buffers_are_refused_as_deepspeed_asserts():
    # pipelined_optimizer_swapper.py _swap_in_optimizer_state: ran out of swap buffers
    with pytest.raises(PlanError, match='buffer_count=11: DeepSpeed needs at least 12'):
        plan(with_(A, ('zero_optimization', 'offload_optimizer', 'buffer_count'), 11))


def test_more_kept_parameters_than_param_buffers_are_refused():
    # partitioned_param_swapper.py swap_in asserts "Not enough buffers"
    with pytest.raises(PlanError, match='offload_param.buffer_count=4'):
        plan(with_(A, ('zero_optimization', 'offload_param', 'buffer_count'), 4))


def test_defaults_are_deepspeeds_and_listed():
    # zero/config.py DeepSpeedZeroConfig, zero/offload_config.py,
    # swap_tensor/constants.py
    c, d = read_config({'zero_optimization': {'stage': 3, 'offload_param': {'device': 'nvme', 'nvme_path': '/x'}}},
                       '', 1.0, 'steady')
    assert (c.sub_group_size, c.max_reuse_distance, c.param_buffer_count, c.block_size, c.queue_depth) == (
        1e9, 1e9, 5.0, 1048576.0, 8.0)
    assert 'offload_param.buffer_size=1e8 (zero/offload_config.py)' in d


def test_booleans_must_be_json_booleans():
    # swap_tensor/aio_config.py get_aio_config hands them to the C++ handle unconverted
    with pytest.raises(PlanError, match=r'aio.single_submit = "false": not a JSON boolean'):
        read_config(with_(A, ('aio', 'single_submit'), 'false'), '', 1.0, 'steady')


def test_fio_filename_lists_stay_below_fios_option_length():
    # fio parse.c: an option value of at most 4096 characters
    c = chunks(['x' * 99] * 100)
    assert all(sum(len(f) + 1 for f in part) < 4100 for part in c) and sum(map(len, c)) == 100


def test_replay_sizes_round_up_to_the_dio_unit_times_threads():
    p = {'config': {'intra_op_parallelism': 2.0}}
    assert replay_bytes(p, 4096.0, 1.0, 1024.0) == 8192.0
    assert replay_bytes(p, 4096.0, 3.0, 3 * 8192.0) == 8192.0


def test_a_stage_is_a_fio_group_and_serial_jobs_are_chained():
    # stage3.py step: a sub-group's parameters are written (waited for)
    # before its state (pipelined_optimizer_swapper.py swap_out_optimizer_state)
    text = job_text(plan(A), 'step', ['/t'], 4096.0, 1.0, 'tswap.so')
    lines = text.split('\n')
    i = lines.index('[optimizer.stage2.r0.sg1-state.write]')
    assert 'wait_for=optimizer.stage2.r0.sg1-param.write' in lines[i:i + 12]
    assert lines[lines.index('[forward.param-in.r0.param.read]') + 9] == 'stonewall'


def test_columns_align_tab_separated_runs():
    assert columns(['a\tbb', 'ccc\td', 'x', 'e\tf']) == ['a    bb', 'ccc  d', 'x', 'e  f']


def test_param_numels_give_each_tensor_its_own_size():
    # zero/partition_parameters.py _partition_param per real tensor;
    # stage3.py _create_fp16_sub_groups over their partitions
    numels = tuple(float(w * w) for w in (2048, 4096, 1024, 3072))
    p = build(A, sum(numels), 3.0, 1.0, 5e7, 'steady', '', numels)
    assert [f['bytes'] for f in p['swap_files'] if f['kind'] == 'param'] == [
        io_aligned(-(-n // 3), 256.0) * 4 for n in numels]
    assert p['inputs']['param_numel'] is None and p['inputs']['param_numels'] == list(numels)
    # the uniform shape is the same plan as its list
    q = build(A, 4 * 4194304.0, 1.0, 1.0, 4194304.0, 'steady', '')
    r = build(A, 4 * 4194304.0, 1.0, 1.0, 5e7, 'steady', '', (4194304.0,) * 4)
    assert q['phases'] == r['phases'] and q['swap_files'] == r['swap_files']


def test_job_counts_are_the_job_files_sections_and_the_limit_is_fios():
    # fio.h REAL_MAX_JOBS 4096 in segments of 8, init.c add_thread_segment
    # allocates 511 of them: a 4089th job fails
    assert FIO_MAX_JOBS == 4088
    ex = json.loads((FIX.parents[2] / 'jobs' / 'ds_config.example.json').read_text())
    # 326 tensors per rank, each its own sub-group (as tests/zero.bats)
    sg = with_(ex, ('zero_optimization', 'sub_group_size'), 100000)
    for cfg, model in ((A, MODEL), (sg, (1.3e9, 8.0, 8.0, 4e6))):
        p = plan(cfg, model=model)
        ranks = int(p['inputs']['ranks'])
        for mode in ('step', 'layout'):
            text = job_text(p, mode, ['/d'] * ranks, 4096.0, 1.0, 'tswap.so')
            jobs = sum(1 for line in text.split('\n') if line.startswith('[')) - 1
            assert sum(c for _, c in job_counts(p, mode)) * ranks == jobs
    assert too_many_jobs(plan(A), 'step') == ''
    m = too_many_jobs(plan(sg, model=(1.3e9, 8.0, 8.0, 4e6)), 'step')
    assert m.startswith('7832 fio jobs (979 per rank x 8 ranks: backward 3, optimizer 976)')
    assert m.endswith('raise sub_group_size or use fewer --ranks')
