# SPDX-License-Identifier: GPL-2.0-only
"""tswap.plan.zero_release: tswap-zero --ds-version, what changed in
ZeRO-Infinity's swap I/O from DeepSpeed 0.16.4 to 0.19.5, each rule
against the file, function and PR it models."""
import copy
import itertools
import json
from pathlib import Path

import pytest

from tswap.plan.deepspeed import ReleaseError
from tswap.plan.zero_config import PlanError
from tswap.plan.zero_fiojob import job_text
from tswap.plan.zero_plan import build
from tswap.plan.zero_release import check_reads, zero_release
from tswap.plan.zero_schema import check

FIX = Path(__file__).resolve().parents[1] / 'fixtures' / 'zero'
A = json.loads((FIX / 'ds_config.issue23-A.json').read_text())
A2 = json.loads((FIX / 'ds_config.issue37-A2.json').read_text())
MODEL = (33554432.0, 1.0, 1.0, 4194304.0)


def plan(cfg, ds='', step='steady', model=MODEL):
    return build(cfg, *model, step, '', None, zero_release(ds))


def with_(cfg, path, value):
    c = copy.deepcopy(cfg)
    d = c
    for k in path[:-1]:
        d = d.setdefault(k, {})
    d[path[-1]] = value
    return c


def test_default_is_the_newest_release():
    assert zero_release('').version == (0, 19, 5)
    assert build(A, *MODEL, 'steady', '')['deepspeed']['version'] == '0.19.5'


def test_releases_before_0164_and_unknown_ones_are_refused():
    # tswap-zero's rules were checked against 0.16.4 (issues 23, 37)
    for bad, text in (('0.16.3', 'follows DeepSpeed 0.16.4 to 0.19.5'), ('0.20.0', 'newer than 0.19.5'),
                      ('0.17.99', 'is no release'), ('v0.19.5', 'not a DeepSpeed release')):
        with pytest.raises(ReleaseError) as e:
            zero_release(bad)
        assert str(e.value).startswith('--ds-version: ') and text in str(e.value), str(e.value)


def test_swap_buffers_locked_from_0194():
    # swap_tensor/utils.py SwapBufferManager.__init__: new_cpu_locked_tensor
    # from 0.19.4 (#8212): the replay allocates as the engine's
    # tswap_alloc=deepspeed (posix_memalign + mlock); before, fio's buffers
    for ds, locked in (('0.16.4', False), ('0.19.3', False), ('0.19.4', True), ('0.19.5', True)):
        p = plan(A, ds)
        assert p['deepspeed']['swap_buffers'] == ('new_cpu_locked_tensor' if locked else 'pin_memory')
        for mode in ('step', 'layout'):
            text = job_text(p, mode, ['/d'], 4096, 1, 'tswap.so')
            glob = text.split('\n\n', 1)[0]
            assert ('tswap_alloc=deepspeed' in glob.split('\n')) is locked, (ds, mode)
            assert text.count('tswap_alloc=') == (1 if locked else 0)


def test_buffer_size_assert_is_inclusive_from_0171():
    # partitioned_param_swapper.py get_buffer: numel < buffer_size before
    # 0.17.1, numel <= buffer_size from it (#7215)
    c = with_(A, ('zero_optimization', 'offload_param', 'buffer_size'), 4194304)
    for ds in ('0.16.4', '0.17.0'):
        with pytest.raises(PlanError) as e:
            plan(c, ds)
        assert 'asserts numel < buffer_size' in str(e.value)
    assert plan(c, '0.17.1')['per_rank']['model_tensors'] == 8
    c = with_(A, ('zero_optimization', 'offload_param', 'buffer_size'), 4194303)
    with pytest.raises(PlanError) as e:
        plan(c, '0.17.1')
    assert 'asserts numel <= buffer_size' in str(e.value)


def test_pin_memory_default_changes_no_io():
    # zero/offload_config.py pin_memory true from 0.19.5 (#8207): it pins
    # CPU-resident copies only; the swaps are the same
    p4, p5 = plan(A2, '0.19.4'), plan(A2, '0.19.5')
    assert (p4['deepspeed']['pin_memory_default'], p5['deepspeed']['pin_memory_default']) == (False, True)
    assert p4['ops'] == p5['ops'] and p4['swap_files'] == p5['swap_files']


@pytest.mark.parametrize('step', ['steady', 'first', 'init'])
def test_every_planned_read_fits_its_file(step):
    # deepspeed_py_io_handle.cpp is_valid_bytes_to_read (0.17.1, #7215):
    # every read of every plan is within the file DeepSpeed wrote
    for cfg, pipe, world in itertools.product((A, A2), (False, True), (1.0, 3.0)):
        c = with_(cfg, ('zero_optimization', 'offload_optimizer', 'pipeline_read'), pipe)
        p = build(c, 33554432.0 + 12345, world, 1.0, 4194304.0, step, '', None, zero_release('0.19.5'))
        size = {(f['dir'], f['name']): f['bytes'] for f in p['swap_files']}
        reads = [o for o in p['ops'] if o['rw'] == 'read']
        assert all(o['bytes'] <= size[(o['dir'], o['file'])] for o in reads)


def test_a_read_past_its_file_is_refused_from_0171():
    files = [{'dir': 'optimizer', 'name': 'x.tensor.swp', 'bytes': 4096.0}]
    ops = [{'phase': 'optimizer', 'rw': 'read', 'dir': 'optimizer', 'file': 'x.tensor.swp', 'bytes': 8192.0}]
    check_reads(ops, files, zero_release('0.17.0'))   # 0.16.4's pread let the buffer exceed the file
    with pytest.raises(PlanError) as e:
        check_reads(ops, files, zero_release('0.17.1'))
    assert 'optimizer read of optimizer/x.tensor.swp takes 8192 bytes from a file of 4096' in str(e.value)
    assert 'is_valid_bytes_to_read' in str(e.value)


def test_state_writes_padded_from_0169():
    # partitioned_optimizer_swapper.py _swap_out_optimizer_state writes the
    # aligned swap buffers from 0.16.9 (#7046); before, a note
    c = with_(A, ('zero_optimization', 'offload_optimizer'), {'device': 'nvme', 'nvme_path': '/x'})
    odd = (33554432.0 + 12345, 1.0, 1.0, 4194304.0)
    note = [n for n in build(c, *odd, 'steady', '', None, zero_release('0.16.4'))['notes'] if 'unpadded' in n]
    assert len(note) == 1 and '#7046' in note[0]
    assert not [n for n in build(c, *odd, 'steady', '', None, zero_release('0.16.9'))['notes'] if 'unpadded' in n]


def test_keys_later_releases_add():
    # zero/offload_config.py super_offload, cpuadam_cores_perc (0.18.0);
    # zero/config.py enable_sanity_checks (0.17.6), stage3_allgather_sequential (0.18.5)
    z = {'zero_optimization': {'stage': 3.0, 'enable_sanity_checks': False,
                               'offload_optimizer': {'device': 'nvme', 'cpuadam_cores_perc': 0.5}}}
    check(z, (0, 19, 5))
    with pytest.raises(PlanError) as e:
        check(z, (0, 16, 4))
    assert 'zero_optimization.enable_sanity_checks: extra fields not permitted' in str(e.value)
    assert 'DeepSpeed 0.17.6 adds it' in str(e.value)
    with pytest.raises(PlanError) as e:
        check(with_(z, ('zero_optimization', 'offload_optimizer', 'cpuadam_cores_perc'), 2.0), (0, 19, 5))
    assert 'cpuadam_cores_perc = 2: not a number from 0 to 1' in str(e.value)
    with pytest.raises(PlanError) as e:
        check(with_(z, ('zero_optimization', 'offload_optimizer', 'super_offload'), True), (0, 19, 5))
    assert 'super_offload = true: SuperOffload' in str(e.value) and 'not modelled' in str(e.value)
    with pytest.raises(PlanError) as e:
        check(with_(z, ('zero_optimization', 'stage3_allgather_sequential'), True), (0, 18, 4))
    assert 'DeepSpeed 0.18.5 adds it' in str(e.value)
