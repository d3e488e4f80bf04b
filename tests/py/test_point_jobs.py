# SPDX-License-Identifier: GPL-2.0-only
"""tswap.plan.jobs point_job and a fleet host's job (tswap.executor.fleet
job_or_exit): each point's standalone job file (docs/sweep.md "What a run does", "Steady state",
"Bandwidth over time", "Ranks, several targets and readwrite";
docs/fleet.md), made once per pass over the plan."""
import pytest

from tswap.executor.fleet import FleetHost, job_or_exit
from tswap.plan import jobs
from tswap.plan.jobs import Host, JobError, JobSettings, point_job

M = 1 << 20
# plan lines (tswap.plan.expand): key kind rw backend tensor block qd
# submit window threads iodepth [ranks]
READ = 'read-libaio-t16m-b1m-q8-block-overlap-p1-d2\ttswap\tread\tlibaio\t%d\t%d\t8\tblock\toverlap\t1\t2' % (16 * M, M)
CEIL = 'ceiling-read-fio-libaio-bs1m-qd64\tceiling\tread\tfio-libaio\t%d\t0\t64\t-\t-\t0\t64' % M
CEIL4 = 'ceiling-read-fio-libaio-bs1m-qd64-j4\tceiling\tread\tfio-libaio\t%d\t0\t64\t-\t-\t4\t64' % M
RANKS3 = READ.replace('-d2\t', '-d2-n3\t') + '\t3'
RW2 = ('readwrite-libaio-t16m-b1m-q8-block-overlap-p1-d2-n2\ttswap\treadwrite\tlibaio\t%d\t%d\t8'
       '\tblock\toverlap\t1\t2\t2' % (16 * M, M))


def settings(**kw):
    base = dict(size_bytes=100 * M, runtime='10', ramp='2', io_size='', steady=True,
                ss_crit='bw_slope:2%', ss_dur=5, bwlog_msec='250',
                targets=('/t/a.swap',), kinds=('file',))
    base.update(kw)
    return JobSettings(**base)


def test_a_single_handle_point_is_one_section_on_the_target_rounded_to_whole_tensors():
    text = point_job(READ, settings())
    assert text.startswith('; tswap-sweep point read-libaio-t16m-b1m-q8-block-overlap-p1-d2\n'
                           '; read, backend libaio, tensor 16m, block 1m, queue depth 8, submit block,'
                           ' window overlap, 1 thread(s), 2 op(s) queued\n')
    # 100m rounded down to whole 16m tensors: fio 3.33 ends a time-based
    # job with ramp_time early on a partial block
    assert text.endswith(
        '[global]\nioengine=external:${TSWAP_ENGINE}\ntswap_backend=libaio\ntswap_block_size=1m\n'
        'tswap_queue_depth=8\ntswap_submit=block\ntswap_window=overlap\ntswap_threads=1\n'
        'tswap_stats=stats.json\nfilename=${TSWAP_TARGET}\nsize=96m\ndirect=1\n'
        'time_based=1\nruntime=10\nramp_time=2\n'
        'steadystate=bw_slope:2%\nss_dur=5\nss_ramp=2\n'
        'write_bw_log=bw\nlog_avg_msec=250\n'
        '\n[read-libaio-t16m-b1m-q8-block-overlap-p1-d2]\nrw=read\nbs=16m\niodepth=2\n')


def test_steady_state_needs_ramp_plus_7_s_and_one_handle():
    # docs/sweep.md "Steady state": runtime < ramp + 7 s runs fixed;
    # several handles run fixed; ss_ramp equals ramp_time
    on = 'steadystate=bw_slope:2%\nss_dur=5\nss_ramp=1\n'
    assert jobs.steady_options('read', 1, settings(runtime='8', ramp='1')) == on
    assert jobs.steady_options('read', 1, settings(runtime='7', ramp='1')) == ''
    assert jobs.steady_options('read', 2, settings(runtime='80', ramp='1')) == ''
    assert jobs.steady_options('readwrite', 1, settings(runtime='80', ramp='1')) == ''
    assert jobs.steady_options('read', 1, settings(runtime='80', ramp='1', steady=False)) == ''
    assert jobs.steady_options('read', 1, settings(runtime='7', ramp='')) == on.replace('=1\n', '=0\n')
    assert on not in point_job(READ, settings(runtime='8', ramp='1', steady=False))


def test_io_size_replaces_the_runtime_and_a_ceiling_moves_4x_its_bytes_in_flight():
    # docs/sweep.md "What a run does" 2: with --io-size at least 4x its
    # bytes in flight (a 1m x 64 ceiling: 256m)
    s = settings(io_size='32m', steady=False)
    assert 'io_size=32m\n' in point_job(READ, s) and 'runtime=' not in point_job(READ, s)
    assert 'io_size=256m\n' in point_job(CEIL, s)
    assert 'io_size=1g\n' in point_job(CEIL, settings(io_size='1g', steady=False))
    assert jobs.run_options('32m', '', '', 64 * M) == 'io_size=256m\n'


def test_a_ceiling_is_fios_libaio_and_j_jobs_split_the_queue_each_on_its_slice():
    one = point_job(CEIL, settings())
    assert '[global]\nioengine=libaio\nfilename=${TSWAP_TARGET}\nsize=100m\n' in one
    assert one.endswith('[ceiling-read-fio-libaio-bs1m-qd64]\nrw=read\nbs=1m\niodepth=64\n')
    assert '; as ' not in one
    four = point_job(CEIL4, settings())
    assert '; as 4 jobs (submitting threads) of iodepth 16, each on its own 1/4 of the target\n' in four
    assert four.endswith('rw=read\nbs=1m\niodepth=16\nnumjobs=4\nsize=25m\noffset_increment=25m\n')


def test_ranks_go_round_robin_over_targets_files_by_variable_devices_by_region():
    # docs/sweep.md "Ranks": rank R uses target R mod the target count:
    # its file (TSWAP_RANKn), or its own region of a block device
    s = settings(targets=('/dev/loop0', '/t/b.swap'), kinds=('block', 'file'))
    text = point_job(RANKS3, s)
    assert 'filename=${TSWAP_TARGET}' not in text and 'tswap_stats=stats.job%n.json\ndirect=1\n' in text
    assert 'steadystate' not in text
    sec = text.split('\n\n[')[2:]
    assert sec == ['read-libaio-t16m-b1m-q8-block-overlap-p1-d2-n3.rank0]\nrw=read\nbs=16m\niodepth=2\n'
                   'filename=${TSWAP_RANK0}\noffset=0\nsize=%d' % (48 * M),
                   'read-libaio-t16m-b1m-q8-block-overlap-p1-d2-n3.rank1]\nrw=read\nbs=16m\niodepth=2\n'
                   'filename=${TSWAP_RANK1}\nsize=96m',
                   'read-libaio-t16m-b1m-q8-block-overlap-p1-d2-n3.rank2]\nrw=read\nbs=16m\niodepth=2\n'
                   'filename=${TSWAP_RANK2}\noffset=%d\nsize=%d\n' % (48 * M, 48 * M)]


def test_readwrite_gives_each_rank_a_read_and_a_write_handle():
    # DeepSpeed pipelined_optimizer_swapper.py: read_aio_handle and
    # write_aio_handle at once
    text = point_job(RW2, settings())
    assert '; 2 rank(s) at once, one job (one tswap handle) per rank and direction, one group,\n' in text
    names = [x.split(']')[0] for x in text.split('\n\n[')[2:]]
    assert names == ['%s.rank%s' % (RW2.split('\t')[0], r) for r in ('0.read', '0.write', '1.read', '1.write')]
    assert 'rw=write\nbs=16m\niodepth=2\nfilename=${TSWAP_RANK1_WRITE}\n' in text


def test_handles_that_leave_less_than_one_tensor_of_a_device_stop_with_the_text_so_far():
    s = settings(size_bytes=40 * M, targets=('/dev/loop0',), kinds=('block',))
    with pytest.raises(JobError) as e:
        point_job(RANKS3, s)
    assert str(e.value) == ('point read-libaio-t16m-b1m-q8-block-overlap-p1-d2-n3: 3 handles on'
                            ' /dev/loop0 leave less than one tensor each of --size 40m')
    assert e.value.text.endswith('filename=${TSWAP_RANK0}\n')


def test_a_fleet_hosts_job_names_its_engine_and_target_and_ends_with_its_options():
    # docs/fleet.md: fio expands ${VAR} on the server; no tswap_stats,
    # steady state or bandwidth log; overwrite=1; the host's options last
    h = Host('b', '127.0.0.3,8765', '/opt/tswap.so', '/srv/b:1.swap', 'rate=100m,50m\nramp_time=0')
    text = point_job(READ, settings(), h)
    assert '; fleet host b: run.sh in this directory reruns the point there with\n' \
           ';   fio --client=127.0.0.3,8765 job.fio\n' in text
    assert 'ioengine=external:/opt/tswap.so\n' in text and 'filename=/srv/b\\:1.swap\n' in text
    assert 'tswap_stats' not in text and 'steadystate' not in text and 'write_bw_log' not in text
    assert ('ramp_time=2\noverwrite=1\n; options of this host in the hosts file\n'
            'rate=100m,50m\nramp_time=0\n\n[read-') in text
    assert 'options of this host' not in point_job(READ, settings(), Host('b', 'a', '/e', '/t', ''))


def test_a_fleet_host_gets_its_own_job_and_an_error_its_status():
    a = FleetHost(0, 'h00-a', 'a', 'h1,8765', "/it's.swap", '/e.so', '')
    b = FleetHost(1, 'h01-b', 'b', 'h2,8765', '/b', '/e.so', 'x=1')
    assert job_or_exit(READ, settings(), b) == \
        (point_job(READ, settings(), Host('b', 'h2,8765', '/e.so', '/b', 'x=1')), None)
    text, err = job_or_exit(READ, settings(), a)
    assert "filename=/it's.swap\n" in text and err is None
    s40 = settings(size_bytes=40 * M, targets=('/dev/loop0',), kinds=('block',))
    text, err = job_or_exit(RANKS3, s40, a)
    assert err[0] == 2
    assert err[1].startswith('tswap-sweep: point read-libaio-t16m-b1m-q8-block-overlap-p1-d2-n3: 3 handles on')
    with pytest.raises(JobError) as e:
        point_job(RANKS3, s40, a.job_host())
    assert text == e.value.text
