# SPDX-License-Identifier: GPL-2.0-only
"""tswap.plan.checkpoint: FastFileWriter's sections of one checkpoint file
(DeepSpeed v0.19.5 deepspeed/io: fast_file_writer.py _write_from_tensor,
_force_drain, _unaligned_drain, _fini; double_io_buffer.py
Double_IO_Buffer._split_buffer; base_io_buffer.py Base_IO_Buffer) and
best-checkpoint.json's keys (runtime/model_checkpointing/config.py
get_checkpoint_writer_config, constants.py), checked against
jobs/fastpersist-plan, the job profile's copy of the same rule; and
tswap-sweep --workload checkpoint's rules: its grid, points, point job,
tie order and refusals; the locked memory a point needs (engine/fill.c
tswap_fill_init, tswap_fill's mlock)."""
import subprocess
from pathlib import Path

import pytest

from tswap.cli.sweep_args import parse
from tswap.plan.checkpoint import (IO_BUFFER_DOUBLE_DEFAULT, IO_BUFFER_SIZE_DEFAULT, WRITER_KEYS,
                                   CheckpointError, best_checkpoint, expand_points, grid_check,
                                   job_file, memlock_check, memlock_need, sections, skipped_warning,
                                   writer_block)
from tswap.plan.grid import Grid
from tswap.plan.values import Refusal
from tswap.stats.pick import cost

PLAN = Path(__file__).resolve().parents[2] / 'jobs' / 'fastpersist-plan'
MIB = 1 << 20


def test_double_buffering_drains_half_the_buffer_then_the_aligned_rest_then_the_tail():
    # 5 MiB + 3 KiB + 100 with a 2 MiB double buffer, 2 threads: H = 1 MiB,
    # A = 1024: 5 drains, 3072 aligned bytes (_force_drain), 100 bytes of
    # tail (_unaligned_drain), which ends with the fsync (_fini)
    s = sections(5 * MIB + 3072 + 100, 2 * MIB, True, 2)
    assert (s.align, s.drain, s.body, s.rem, s.tail) == (1024, MIB, 5 * MIB, 3072, 100)
    assert s.names == ('body', 'rem', 'tail') and s.last == 'tail'
    assert s.body + s.rem + s.tail == s.file_bytes


def test_single_buffering_drains_the_whole_buffer():
    s = sections(3 * 64 * MIB, 64 * MIB, False, 1)
    assert (s.drain, s.body, s.rem, s.tail) == (64 * MIB, 192 * MIB, 0, 0)
    assert s.names == ('body',) and s.last == 'body'


def test_a_file_smaller_than_one_drain_has_no_body():
    s = sections(4096 + 7, 64 * MIB, True, 4)
    assert (s.body, s.rem, s.tail) == (0, 4096, 7) and s.names == ('rem', 'tail')


@pytest.mark.parametrize('iobuf,double,threads,rule', [
    (3 * 512, True, 1, 'multiple of 2 x THREADS x 512 = 1024 with double buffering'),
    (1536, False, 2, 'multiple of THREADS x 512 = 1024'),
    (64 * MIB, True, 1025, 'at most 1024'),
    (0, True, 1, 'IO_BUFFER_SIZE=0: must be a positive'),
])
def test_buffers_deepspeed_asserts_on_are_refused_in_one_line(iobuf, double, threads, rule):
    with pytest.raises(CheckpointError) as e:
        sections(MIB, iobuf, double, threads)
    assert rule in str(e.value) and '\n' not in str(e.value)


def _script(s: int, iobuf: int, double: bool, threads: int) -> dict[str, str]:
    r = subprocess.run(['sh', str(PLAN), str(s), str(iobuf), '1' if double else '0', str(threads)],
                       stdout=subprocess.PIPE, check=True, text=True)
    out = {}
    for line in r.stdout.splitlines():
        k, v = line.removeprefix('export ').split('=', 1)
        out[k] = v.strip("'")
    return out


@pytest.mark.parametrize('s,iobuf,double,threads', [
    (5 * MIB + 3072 + 100, 2 * MIB, True, 2),
    (192 * MIB, 64 * MIB, False, 1),
    (4096 + 7, 64 * MIB, True, 4),
    (100, 16 * MIB, True, 8),
    (48 * MIB + 512, 32 * MIB, False, 1),
])
def test_the_job_profiles_plan_script_cuts_the_file_the_same_way(s, iobuf, double, threads):
    p = sections(s, iobuf, double, threads)
    sh = _script(s, iobuf, double, threads)
    assert int(sh['TSWAP_FP_DRAIN']) == p.drain
    assert sh['TSWAP_FP_SECTIONS'].split() == ['--section=%s' % n for n in p.names]
    assert int(sh['TSWAP_FP_REM_OFFSET']) == p.body
    assert int(sh['TSWAP_FP_TAIL_OFFSET']) == p.body + p.rem
    for name, size in (('BODY', p.body), ('REM', p.rem), ('TAIL', p.tail)):
        if size:
            assert int(sh['TSWAP_FP_%s' % name]) == size
        assert sh['TSWAP_FP_FSYNC_%s' % name] == ('1' if p.last == name.lower() else '0')


def test_the_writer_block_has_exactly_the_keys_deepspeed_0_19_5_reads():
    # config.py get_checkpoint_writer_config at v0.19.5: type,
    # io_buffer_size, io_buffer_double, show_statistics, data_parallel,
    # decoupled, io_multiplier; defaults from constants.py
    assert WRITER_KEYS == ('type', 'io_buffer_size', 'io_buffer_double', 'show_statistics',
                           'data_parallel', 'decoupled', 'io_multiplier')
    w = writer_block(IO_BUFFER_SIZE_DEFAULT, IO_BUFFER_DOUBLE_DEFAULT)
    assert tuple(w) == WRITER_KEYS
    assert w == {'type': 'fast', 'io_buffer_size': 67108864, 'io_buffer_double': True,
                 'show_statistics': False, 'data_parallel': None, 'decoupled': False,
                 'io_multiplier': 1}


def test_best_checkpoint_names_the_writer_and_the_aio_block_of_the_release():
    pt = {'tensor': 32 * MIB, 'iodepth': 1, 'block': 4 * MIB, 'qd': 32, 'threads': 2,
          'submit': 'single', 'window': 'sequential'}
    doc = best_checkpoint(pt, 'won')
    assert tuple(doc) == ('deepspeed_versions', 'checkpoint', 'aio', 'reason')
    assert tuple(doc['checkpoint']) == ('writer',)
    assert doc['checkpoint']['writer']['io_buffer_size'] == 32 * MIB
    assert doc['checkpoint']['writer']['io_buffer_double'] is False
    # aio_config.py get_aio_config at v0.19.5 (AIO_DEFAULT_DICT's order)
    assert doc['aio'] == {'block_size': 4 * MIB, 'queue_depth': 32, 'intra_op_parallelism': 2,
                          'single_submit': True, 'overlap_events': False, 'use_gds': False}
    assert best_checkpoint(dict(pt, iodepth=2), 'x')['checkpoint']['writer']['io_buffer_double']


# --workload checkpoint: the grid, its points, a point's job, the pick


def test_a_checkpoint_grid_left_empty_is_deepspeeds_defaults():
    # constants.py: 64 MiB, double; ds_config aio: 1m, 8, block, overlap, 1
    ex = expand_points(Grid(name='g'))
    assert ex.lines == ('ckpt-io64m-double-b1m-q8-block-overlap-p1\tcheckpoint\twrite\tlibaio'
                        '\t67108864\t1048576\t8\tblock\toverlap\t1\t2',)
    assert ex.skipped == 0


def test_points_a_buffer_deepspeed_refuses_are_left_out_and_counted():
    # 1536 bytes single is a multiple of A = 512 (1 thread) only; double
    # needs 2 x A
    g = Grid(name='g', io_buffer_size=('1536',), io_buffer_double=('on', 'off'),
             threads=('1', '2'), qd=('4', '8'))
    ex = expand_points(g)
    assert [x.split('\t')[0] for x in ex.lines] == ['ckpt-io1536-single-b1m-q4-block-overlap-p1',
                                                    'ckpt-io1536-single-b1m-q8-block-overlap-p1']
    assert ex.skipped == 6
    assert 'left out 6 checkpoint point(s) whose io_buffer_size' in skipped_warning(6)


@pytest.mark.parametrize('g,workload,rule', [
    (Grid(name='q', tensor=('16m',)), 'checkpoint', 'grid q: tensor is not a checkpoint key'),
    (Grid(name='q', ranks=('2',)), 'checkpoint', 'grid q: ranks is not a checkpoint key'),
    (Grid(name='q', rw=('read', 'write')), 'checkpoint', 'grid q: rw read: --workload checkpoint takes only rw write'),
    (Grid(name='q', backend=('io_uring',)), 'checkpoint', 'only backend libaio'),
    (Grid(name='c', io_buffer_double=('on',)), 'tensor', 'grid c: io_buffer_double is a checkpoint key'),
])
def test_a_grid_that_does_not_fit_the_workload_is_refused_in_one_line(g, workload, rule):
    with pytest.raises(Refusal) as e:
        grid_check(g, workload)
    assert e.value.code == 2 and rule in e.value.message and '\n' not in e.value.message


def test_a_point_job_has_the_sections_with_bytes_and_fsyncs_in_the_last():
    line = expand_points(Grid(name='g', io_buffer_size=('2m',), threads=('2',))).lines[0]
    job = job_file(line, 5 * MIB + 3072 + 100)
    secs = job.split('\n[')[1:]
    assert [s.split(']')[0] for s in secs] == ['global', 'body', 'rem', 'tail']
    assert 'offset=0\nbs=1048576\nsize=5242880\nend_fsync=0\n' in secs[1]
    assert 'tswap_threads=2\ntswap_fill=double\ntswap_pin=0\ndirect=1\n' in secs[1]
    assert secs[2].startswith('rem]\nstonewall\n') and 'offset=5242880\nbs=3072\nsize=3072\nend_fsync=0\n' in secs[2]
    assert 'ioengine=sync\ndirect=0\noffset=5245952\nbs=100\nsize=100\nend_fsync=1\n' in secs[3]
    # a file of whole drains: the body alone, fsync there
    whole = job_file(line, 4 * MIB)
    assert '\n[rem]' not in whole and '\n[tail]' not in whole and 'end_fsync=1' in whole


def test_a_tie_goes_to_the_smaller_buffer():
    # stats.pick cost: the writer's pinned io_buffer_size counts
    base = {'kind': 'checkpoint', 'threads': 1, 'qd': 8, 'block': MIB, 'submit': 'block', 'gbs': 1.0}
    assert cost(dict(base, tensor=16 * MIB)) < cost(dict(base, tensor=64 * MIB, gbs=1.01))


@pytest.mark.parametrize('argv,msg', [
    (['--workload', 'checkpoint', '--rw', 'read,write'], '--rw read,write (only write)'),
    (['--workload', 'x'], "--workload: tensor or checkpoint, not 'x'"),
    (['--workload', 'checkpoint', '--tensor-size', '4m'], 'no --tensor-size'),
    (['--workload', 'checkpoint', '--budget', '60'], 'no --budget'),
    (['--workload', 'checkpoint', '--ds-version', '0.17.0'], 'DeepSpeed 0.17.0 has no FastFileWriter'),
])
def test_workload_refusals(argv, msg):
    with pytest.raises(Refusal) as e:
        parse(argv)
    assert msg in e.value.message and e.value.code == 2


def test_workload_checkpoint_defaults_to_its_grid_and_write():
    assert parse(['--workload', 'checkpoint']).grid == 'checkpoint'
    assert parse(['--workload', 'checkpoint', '--grid', 'x.grid']).grid == 'x.grid'
    assert parse(['--workload', 'checkpoint', '--rw', 'write']).rw_opt == 'write'
    assert parse([]).grid == 'quick' and parse([]).workload == 'tensor'


def _line(iobuf, double, threads=1):
    return expand_points(Grid(name='g', io_buffer_size=(iobuf,), io_buffer_double=(double,),
                              threads=(str(threads),))).lines[0]


def _job_lock(job, page):
    """What the engine mlocks per section of a point job (engine/fill.c
    tswap_fill_init: bs, 2 x bs for tswap_fill=double, to a page; fio's
    buffer unlocked with tswap_pin=0), the largest: read from the job
    text itself."""
    glob = dict(x.split('=', 1) for x in job.split('\n[')[1].split('\n')[1:] if '=' in x)
    most = 0
    for sec in job.split('\n[')[2:]:
        o = {**glob, **dict(x.split('=', 1) for x in sec.split('\n')[1:] if '=' in x)}
        if o.get('tswap_fill') in ('single', 'double'):
            assert o.get('tswap_pin') == '0' and 'tswap_alloc' not in o
            n = int(o['bs']) * (2 if o['tswap_fill'] == 'double' else 1)
            most = max(most, -(-n // page) * page)
    return most


@pytest.mark.parametrize('iobuf,double,threads,file_bytes,need', [
    ('64m', 'on', 1, 1 << 30, 64 * MIB),           # two halves: the whole buffer
    ('2m', 'off', 2, 3 * MIB + 1636, 2 * MIB),     # the whole buffer
    ('2m', 'on', 2, 3 * MIB + 1636, 2 * MIB),
    ('2m', 'off', 2, 3072 + 100, 4096),            # no body: rem's 3072 bytes, a page
    ('3072', 'off', 2, 3 * MIB, 4096),             # a drain of less than a page
])
def test_a_points_lock_is_its_largest_engine_section_to_a_page(iobuf, double, threads, file_bytes, need):
    line = _line(iobuf, double, threads)
    assert memlock_need(line, file_bytes, 4096) == need
    # the same as the point's job file makes the engine lock
    assert _job_lock(job_file(line, file_bytes), 4096) == need


def test_memlock_is_refused_past_the_limits_whole_pages_in_one_line_exit_3():
    lines = ('ceiling-write-fio-libaio-bs1m-qd64\tceiling\twrite\tfio-libaio\t1048576\t0\t64\t-\t-\t0\t64',
             _line('2m', 'on', 2), _line('2m', 'off', 2))
    size = 3 * MIB + 1636
    memlock_check(lines, size, 2 * MIB, False, 4096)           # exactly the need
    memlock_check(lines, size, None, False, 4096)              # unlimited
    memlock_check(lines, size, 0, True, 4096)                  # CAP_IPC_LOCK
    memlock_check(lines[:1], size, 0, False, 4096)             # no checkpoint point
    for limit in (2 * MIB - 4096, 2 * MIB - 1):                # mlock counts whole pages
        with pytest.raises(Refusal) as e:
            memlock_check(lines, size, limit, False, 4096)
        assert e.value.code == 3 and '\n' not in e.value.message
        assert e.value.message.startswith('--workload checkpoint: point ckpt-io2m-single-b1m-q8-block-overlap-p2'
                                          ' needs 2097152 bytes of locked memory')
        assert 'RLIMIT_MEMLOCK (ulimit -l) is %d bytes' % limit in e.value.message
