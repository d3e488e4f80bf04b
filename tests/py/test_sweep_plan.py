# SPDX-License-Identifier: GPL-2.0-only
"""tswap.plan.values, .grid, .expand and .jobs: fio size notation, grid
files, their expansion into plan lines, the device-ceiling lines and the
grid's job files (docs/sweep.md "Grid files", "The device ceiling", "Job
files"). These were tests/sweep-lib.bats' shell-function tests before
the front end moved to Python."""
from dataclasses import replace

import pytest

from tswap.plan import expand, grid, jobs
from tswap.plan.values import (Refusal, bytes_to_size, comma_fields, is_uint, size_to_bytes,
                               split_list)


def load(*lines, tmax=1024):
    g, notes = grid.load('/g/t.grid', ''.join(x + '\n' for x in lines), '/w', lambda: tmax)
    return grid.with_defaults(g), notes


def refused(*lines, **kw):
    with pytest.raises(Refusal) as e:
        load(*lines, **kw)
    return e.value


def test_size_to_bytes_fio_notation_binary_units_case_and_suffix():
    assert size_to_bytes('4096') == 4096
    assert size_to_bytes('4k') == 4096
    assert size_to_bytes('1M') == 1 << 20
    assert size_to_bytes('1MiB') == 1 << 20
    assert size_to_bytes('2gb') == 2 << 30
    assert size_to_bytes('1t') == 1 << 40
    assert size_to_bytes('010m') == 10 << 20  # not octal
    for bad in ('', '1.5m', '-1m', '1x', 'm', '1m2', '1 m', '$(id)', '1m\n'):
        assert size_to_bytes(bad) is None, bad


def test_numbers_that_would_wrap_bash_arithmetic_are_refused():
    assert is_uint('999999999') and is_uint('000000000001')
    assert not is_uint('1000000000')
    assert size_to_bytes('99999999999999999999') is None
    assert size_to_bytes('8388608t') is None
    assert size_to_bytes('4194303t') == 4194303 << 40


def test_bytes_to_size_the_shortest_exact_notation():
    assert [bytes_to_size(n) for n in (1 << 20, 1 << 30, 3 << 30, 1536 << 10, 4097, 512)] == \
        ['1m', '1g', '3g', '1536k', '4097', '512']
    for v in ('4k', '1m', '400m', '1g', '1536k', '12345'):
        assert bytes_to_size(size_to_bytes(v)) == v


def test_split_list_and_comma_fields():
    assert split_list('read, write,,io_uring  libaio') == ('read', 'write', 'io_uring', 'libaio')
    assert split_list('') == ()
    # bash's IFS=, read -a: one trailing empty field dropped, others kept
    assert comma_fields('a,,b') == ('a', '', 'b')
    assert comma_fields('a,') == ('a',)
    assert comma_fields(',') == ('',)
    assert comma_fields('') == ()


def test_grid_values_defaults_and_scalar_keys():
    g, notes = load('# a comment', 'rw read  # trailing comment', 'qd 8 32', 'runtime 3',
                    'ceiling off', 'description two  words')
    assert (g.name, g.rw, g.qd, g.runtime, g.ceiling, g.desc) == \
        ('t', ('read',), ('8', '32'), '3', 'off', 'two words')
    # the keys left out: ds_config aio defaults
    assert (g.backend, g.tensor, g.iodepth, g.block, g.window, g.submit, g.threads, g.ranks) == \
        (('libaio',), ('64m',), ('1',), ('1m',), ('overlap',), ('block',), ('1',), ('1',))
    assert notes == ()


def test_a_bad_grid_line_is_refused_naming_file_line_and_rule():
    r = refused('rw read', 'window sideways')
    assert (r.code, r.message) == (2, "/g/t.grid:2: window must be sequential or overlap, not 'sideways'")
    assert refused('block 0').message == '/g/t.grid:1: block: must not be 0'
    assert "threads: not a positive integer: 'x'" in refused('threads 2 x').message
    assert "unknown grid key 'speed'" in refused('speed 11').message
    assert 'runtime must be at least 1' in refused('runtime 0').message
    assert "'qd' repeated (first on line 1)" in refused('qd 8', 'rw read', 'qd 16').message
    assert '(1 to 9 digits)' in refused('qd 99999999999999999999').message
    assert 'threads: 2048 is above 1024' in refused('threads 2048').message
    assert "targets: an empty path in the list 'a,,b'" in refused('targets a,,b').message
    assert 'targets: /w/a is named twice' in refused('targets a /w/a').message


def test_crlf_and_a_byte_order_mark_are_read_without_them_with_a_note():
    g, notes = grid.load('/g/t.grid', '\ufeffrw read\r\ntensor 16m\r\nqd 8 16\r\n', '/', lambda: 1)
    assert (g.rw, g.tensor, g.qd) == (('read',), ('16m',), ('8', '16'))
    assert notes == ('grid /g/t.grid starts with a UTF-8 byte order mark: read without it',
                     'grid /g/t.grid has CRLF line endings: read without the carriage returns')


def test_the_engine_limit_is_asked_only_for_threads():
    def never():
        raise AssertionError('engine asked')
    grid.load('/g/t.grid', 'rw read\nqd 8\n', '/', never)


def test_list_options_override_the_grid_checked_under_the_option_name():
    g, _ = load('rw read write')
    g2 = grid.with_options(g, (('rw', '--rw', 'write'), ('tensor', '--tensor-size', '')), lambda: 1)
    assert g2.rw == ('write',) and g2.tensor == ('64m',)
    with pytest.raises(Refusal) as e:
        grid.with_options(g, (('rw', '--rw', 'sideways'),), lambda: 1)
    assert e.value.message == "--rw: rw must be read, write or readwrite, not 'sideways'"


def test_expand_the_cartesian_product_as_plan_lines_keys_unique():
    g, _ = load('rw read write', 'tensor 4m', 'block 1m 512k', 'qd 8 16', 'window overlap',
                'submit block single', 'threads 1')
    ex = expand.expand(g)
    assert len(ex.lines) == 16 and ex.skipped == 0  # 2 rw x 2 block x 2 qd x 2 submit
    assert ex.lines[0] == '\t'.join(('read-libaio-t4m-b1m-q8-block-overlap-p1-d1', 'tswap', 'read',
                                     'libaio', '4194304', '1048576', '8', 'block', 'overlap', '1', '1'))
    assert len({x.split('\t')[0] for x in ex.lines}) == 16
    # a value given twice (16m, 16M) is one point; 08 is 8 in the key
    g, _ = load('rw read', 'tensor 16m 16M', 'qd 08')
    assert [x.split('\t')[0] for x in expand.expand(g).lines] == ['read-libaio-t16m-b1m-q8-block-overlap-p1-d1']


def test_expand_ranks_outermost_with_the_key_suffix_and_column():
    g, _ = load('rw read', 'tensor 16m', 'ranks 1 2')
    a, b = expand.expand(g).lines
    assert a.count('\t') == 10 and b.endswith('\t1\t2') and b.split('\t')[0].endswith('-d1-n2')


def test_unaligned_tensor_parts_and_blocks_are_left_out_and_counted():
    g, _ = load('rw read', 'tensor 4m', 'threads 1 3', 'block 1m 6000', 'qd 4')
    ex = expand.expand(g)
    # threads 3 does not divide 4m; block 6000 is not a multiple of 4096
    assert [x.split('\t')[0] for x in ex.lines] == ['read-libaio-t4m-b1m-q4-block-overlap-p1-d1']
    assert ex.skipped == 3
    assert expand.skipped_warning(3) == (
        'left out 3 point(s) whose tensor size is not divisible into 4096-aligned parts per'
        ' thread, or whose block size is not a multiple of 4096')


def plan(*lines):
    g, _ = load(*lines)
    return expand.expand(g).lines


def test_add_ceilings_one_line_before_each_directions_first_point():
    out = expand.add_ceilings(plan('rw read write', 'qd 8 16'), 64, 1)
    assert len(out) == 6
    assert [x.split('\t')[:7] for x in (out[0], out[3])] == [
        ['ceiling-read-fio-libaio-bs1m-qd64', 'ceiling', 'read', 'fio-libaio', '1048576', '0', '64'],
        ['ceiling-write-fio-libaio-bs1m-qd64', 'ceiling', 'write', 'fio-libaio', '1048576', '0', '64']]
    assert expand.writes(out) and not expand.writes(tuple(x for x in out if 'write' not in x))


def test_ceiling_jobs_the_most_threads_of_a_single_handle_point():
    assert expand.ceiling_jobs(plan('rw read write', 'tensor 16m', 'qd 8', 'threads 1 4'), 64) == 4
    assert expand.ceiling_jobs(plan('rw read', 'tensor 16m', 'qd 8', 'threads 1'), 64) == 1
    # never more jobs than blocks in flight
    assert expand.ceiling_jobs(plan('rw read', 'tensor 16m', 'qd 8', 'threads 8'), 4) == 4
    # several jobs: the one-job ceiling too, and the -jJ one
    out = expand.add_ceilings(plan('rw read write', 'tensor 16m', 'qd 8', 'threads 1 4'), 64, 4)
    ceil = [x.split('\t') for x in out if '\tceiling\t' in x]
    assert [(f[0], f[9]) for f in ceil] == [
        ('ceiling-read-fio-libaio-bs1m-qd64', '0'), ('ceiling-read-fio-libaio-bs1m-qd64-j4', '4'),
        ('ceiling-write-fio-libaio-bs1m-qd64', '0'), ('ceiling-write-fio-libaio-bs1m-qd64-j4', '4')]


def test_ceiling_depth_blocks_in_flight_at_least_64_capped_by_aio_max_nr():
    # quick-like: 16m tensors, 2 queued: 32 MiB in flight -> the minimum
    assert expand.ceiling_depth(plan('rw read', 'tensor 16m', 'iodepth 2', 'block 1m 4m',
                                     'qd 8 32'), '65536') == expand.Depth(64, None)
    # 400m tensors, 8 threads x 128 x 8m caps at the tensor: 400
    assert expand.ceiling_depth(plan('rw read write', 'tensor 400m', 'block 1m 8m', 'qd 32 128',
                                     'threads 1 8'), '65536').qd == 400
    # ops queued do not add (a worker runs one operation at a time)
    assert expand.ceiling_depth(plan('rw read', 'tensor 2m', 'iodepth 64', 'qd 2'), '').qd == 64
    assert expand.ceiling_depth(plan('rw read', 'tensor 512m', 'iodepth 4', 'qd 64',
                                     'threads 4'), '').qd == 256
    # 2 ranks x readwrite = 4 jobs: fs.aio-max-nr / 4, with the warning
    d = expand.ceiling_depth(plan('rw readwrite', 'ranks 2', 'tensor 64g', 'block 64m', 'qd 64',
                                  'threads 64'), '8000')
    assert d.qd == 2000 and d.warning.startswith(
        'device ceiling: the deepest point keeps 64g in flight, 65536 x 1m; the ceiling runs at'
        ' iodepth 2000 (the most 4 job(s) get from fs.aio-max-nr=8000 and 4096)')


def test_steady_state_needs_a_runtime_of_ramp_plus_the_window():
    assert expand.steady_on(False, '', False, '8', '1')
    assert not expand.steady_on(False, '', False, '7', '1')
    assert not expand.steady_on(True, '', False, '100', '1')
    assert not expand.steady_on(False, '16m', False, '', '')
    assert not expand.steady_on(False, '', True, '100', '1')


def test_job_file_single_handle_points_of_one_direction():
    lines = plan('rw read readwrite', 'tensor 16m', 'qd 8', 'ranks 1 2')
    text, n = jobs.job_file('t', '', 'read', lines, jobs.run_options('', '5', '1'))
    assert n == 1
    assert text.startswith('; t-read.fio - GENERATED by `make jobs` from sweep/grids/t.grid'
                           ': do not edit.\n; grid t: the read points, one stonewalled section each.\n')
    assert text.endswith('time_based=1\nruntime=5\nramp_time=1\n\n'
                         '[read-libaio-t16m-b1m-q8-block-overlap-p1-d1]\nstonewall\nrw=read\nbs=16m\n'
                         'iodepth=1\ntswap_backend=libaio\ntswap_block_size=1m\ntswap_queue_depth=8\n'
                         'tswap_submit=block\ntswap_window=overlap\ntswap_threads=1\n')
    assert jobs.run_options('16384k', '', '') == 'io_size=16m\n'


def test_a_grid_of_more_than_points_max_points_is_counted_not_expanded():
    g, _ = load('rw read write', 'qd ' + ' '.join(map(str, range(1, 101))),
                'iodepth ' + ' '.join(map(str, range(1, 101))), 'tensor 16m 32m 64m 128m 256m',
                'block 4k 8k 16k 32k 64k 128k 256k 512k 1m 2m')
    assert expand.combinations(g) == 1000000 > expand.POINTS_MAX
    # repeated values count once, as expand() keeps each key once
    g, _ = load('qd 8 8 8', 'rw read read')
    assert expand.combinations(g) == 1
    # a checkpoint grid's writer lists count; its missing tensor does not
    g, _ = load('block 1m 2m', 'io_buffer_size 64m 128m 256m', 'io_buffer_double on off')
    assert expand.combinations(replace(g, rw=('write',), tensor=(), iodepth=())) == 2 * 3 * 2
