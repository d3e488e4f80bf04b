# SPDX-License-Identifier: GPL-2.0-only
"""tswap.results.result: one fio run into result.json and its progress
line (docs/sweep.md "Outputs"; results.sh result_json)."""
import pytest

from tswap.results.result import (Run, done_entry, error_tail, error_text, fio_json_text, fio_used,
                                  handle_sums, handles, merge_stats, progress_line, result)

TARGETS = ['/t/a', '/t/b']


def run(rw='read', rc=0.0, ranks=1.0, targets=TARGETS):
    return Run(runkey='p.r1', point='p', repeat=1.0, kind='tswap', rw=rw, backend='libaio',
               tensor=16777216.0, block=1048576.0, qd=8.0, submit='block', window='overlap',
               threads=1.0, iodepth=1.0, rc=rc, wall=1.5, ranks=ranks, targets=targets)


def job(name='p', rw='read', bw=1e9, io=4e9, iops=60.0, p99=2000000.0, err=0.0, **kw):
    d = {'bw_bytes': bw, 'io_bytes': io, 'iops': iops,
         'clat_ns': {'percentile': {'50.000000': 1e6, '99.000000': p99, '99.900000': 3e6}}}
    j = {'jobname': name, 'error': err, 'job_runtime': 1000.0, 'usr_cpu': 1.0, 'sys_cpu': 2.0,
         'job options': {'rw': rw}, rw: d}
    j.update(kw)
    return j


def fio(*jobs):
    return {'fio version': 'fio-3.33', 'jobs': list(jobs)}


def test_fio_json_after_notes():
    assert fio_json_text('{"jobs": []}\n') == '{"jobs": []}\n'
    assert fio_json_text('note\n{"jobs": [\n]}') == '{"jobs": [\n]}'
    assert fio_json_text('note only\n') == ''


def test_error_tail_last_two_lines_not_blank():
    # stderr first; fio's notes before its JSON when stderr says nothing
    assert error_tail('first\n\n  \nsecond\nthird\n', '') == ': second third '
    assert error_tail('only\n', '') == ': only '
    assert error_tail('', 'fio: err=30 Read-only\n{"jobs": [') == ': fio: err=30 Read-only '
    assert error_tail(' \n', '') == ''
    assert len(error_tail('x' * 400, '')) == 2 + 300


def test_error_text_order():
    # no JSON, then fio's exit status (each with fio's last words), then a
    # job's error, then no bytes (results.sh result_json, result.jq $err)
    assert error_text(None, 1.0, ': boom ', None, 0) == 'fio gave no JSON (exit 1): boom '
    assert error_text({}, 137.0, ': boom ', 5.0, 1) == 'fio exited 137: boom '
    assert error_text({}, 0.0, ': boom ', 5.0, 1) == 'fio job error 5'
    assert error_text({}, 0.0, '', 0.0, 0.0) == 'no I/O was done'
    assert error_text({}, 0.0, '', None, 1.0) == ''


def test_ok_result_figures():
    doc = result(run(), fio(job()), {'bytes': 4e9, 'submit_calls': 400.0, 'elapsed_s': 1.0,
                                     'worker_cpu_usr_s': 0.5, 'worker_cpu_sys_s': 0.25,
                                     'tswap_version': '0.1'}, '', None)
    assert doc['status'] == 'ok' and doc['error'] == ''
    assert doc['gbs'] == 1.0 and doc['ops_per_s'] == 60.0
    assert (doc['clat_p50_us'], doc['clat_p99_us'], doc['clat_p999_us']) == (1000.0, 2000.0, 3000.0)
    # fio's job thread plus the engine's workers, % of the job's time
    assert doc['usr_cpu'] == 51.0 and doc['sys_cpu'] == 27.0
    assert doc['submit_per_gb'] == 100.0 and doc['tswap_version'] == '0.1'
    assert doc['steady'] is None and doc['bw_log'] is None


def test_error_results():
    assert result(run(rc=1.0), fio(job()), None, ': x ', None)['error'] == 'fio exited 1: x '
    assert result(run(), fio(job(io=0.0)), None, '', None)['error'] == 'no I/O was done'
    assert result(run(), fio(job(err=5.0)), None, '', None)['error'] == 'fio job error 5'
    doc = result(run(), None, None, '', None)
    assert doc['status'] == 'error' and not fio_used(doc)


def test_unusable_stats_count_as_absent_and_a_broken_job_as_no_json():
    # result.jq under jq 1.6: its try/catch caught errors raised later
    doc = result(run(), fio(job()), {'bytes': 1.0}, '', None)
    assert doc['status'] == 'ok' and doc['stats_bytes'] is None
    broken = job()
    del broken['read']
    broken['read'] = None
    doc = result(run(), fio(broken, job()), None, '', None)
    assert doc['error'] == 'fio gave no JSON (exit 0)'


def test_an_impossible_bandwidth_is_an_error_not_a_figure():
    # fio never reports a negative or non-finite bw_bytes; a damaged or
    # foreign fio JSON that does is a failed run (a silent wrong number
    # otherwise, and a traceback in progress_line), named with its value
    for bw, shown in ((-5.0, '-5e-09'), (float('inf'), 'inf'), (float('nan'), 'nan')):
        d = result(run(), fio(job(bw=bw)), None, '', None)
        assert d['status'] == 'error' and 'gbs' not in d
        assert d['error'] == 'fio gave an impossible bandwidth: %s GB/s' % shown
        assert progress_line(d) == 'ERROR: ' + d['error']
    assert result(run(), fio(job(bw=0.0)), None, '', None)['status'] == 'ok'


def test_handles_ranks_and_targets():
    # rank R from KEY.rankR[.read|.write]; rank R uses target R mod their number
    js = [job('p.rank0', bw=1e9), job('p.rank1', bw=2e9), job('p.rank2', bw=0.5e9), job('x', bw=0.25e9)]
    h = handles(js, 'read', TARGETS)
    assert [(x['rank'], x['target']) for x in h] == [(0, '/t/a'), (1, '/t/b'), (2, '/t/a'), (0, '/t/a')]
    s = handle_sums(h)
    # ranks 0 (1 + 0.25), 1 (2), 2 (0.5): the slowest is rank 2
    assert s['slowest_rank_gbs'] == 0.5
    assert s['read_gbs'] == 3.75 and s['write_gbs'] == 0
    assert s['targets'] == [{'target': '/t/a', 'gbs': 1.75}, {'target': '/t/b', 'gbs': 2.0}]


def test_readwrite_jobs_keep_their_direction():
    js = [job('p.rank0.read', rw='read', bw=1e9), job('p.rank0.write', rw='write', bw=0.5e9)]
    doc = result(run(rw='readwrite'), fio(*js), None, '', None)
    assert doc['gbs'] == 1.5 and doc['read_gbs'] == 1.0 and doc['write_gbs'] == 0.5
    assert [x['rw'] for x in doc['handles']] == ['read', 'write']


def test_merge_stats_sums_counts_longest_elapsed():
    m = merge_stats([{'tswap_version': 'v', 'bytes': 2.0, 'submit_calls': 3.0, 'elapsed_s': 1.0},
                     {'bytes': 5.0, 'elapsed_s': 4.0, 'worker_cpu_usr_s': 0.5}])
    assert m == {'tswap_version': 'v', 'handles': 2, 'io_contexts': 0, 'bytes': 7.0, 'submit_calls': 3.0,
                 'worker_cpu_usr_s': 0.5, 'worker_cpu_sys_s': 0, 'elapsed_s': 4.0}
    with pytest.raises(ValueError):
        merge_stats([{'bytes': 1.0}, 3.0])


def test_progress_line():
    doc = {'status': 'ok', 'gbs': 0.7178311, 'ops_per_s': 42.78607, 'clat_p99_us': 45875.2}
    assert progress_line(doc) == '0.718 GB/s\t42.8 op/s  p99 45.88 ms'
    # jq's round: half away from zero
    assert progress_line(dict(doc, gbs=2.5e-3 + 1e-12, ops_per_s=0.25, clat_p99_us=5.0)) == \
        '0.003 GB/s\t0.3 op/s  p99 0.01 ms'
    assert progress_line({'status': 'error', 'error': 'a\tb\nc'}) == 'ERROR: a b c'


def test_done_entry_ok_runs_only():
    # pipeline.sh load_done: FINISHED[RUNKEY] (a fleet's RUNKEY/HOSTID) = GB/s
    assert done_entry({'status': 'ok', 'runkey': 'p.r1', 'gbs': 1.2345}) == ('p.r1', '1.235')
    assert done_entry({'status': 'ok', 'runkey': 'p.r1', 'gbs': 0.5, 'host_id': 'h2'}) == ('p.r1/h2', '0.5')
    # a damaged or hand-edited result is redone, never trusted on --resume:
    # a negative or zero, NaN (read as null), infinite or non-number GB/s
    for g in (None, -5.0, 0.0, float('inf'), '1.2', True):
        assert done_entry({'status': 'ok', 'runkey': 'p.r1', 'gbs': g}) is None
    assert done_entry({'status': 'error', 'runkey': 'p.r1'}) is None
    assert done_entry([1]) is None


def test_load_done_walks_two_levels_and_skips_bad_files(tmp_path):
    from tswap.cli import load_done
    ok = '{"status": "ok", "runkey": "%s", "gbs": 1}'
    for d, text in (('a.r1', ok % 'a.r1'), ('b.r1', 'not json'), ('c.r1', ok % 'c.r1'),
                    ('.tmp-d.r1.9', ok % 'd.r1'), ('e.r1/h1', '{"status": "ok", "runkey": "e.r1", '
                                                 '"gbs": 2, "host_id": "h1"}'),
                    ('f.r1/x/y', ok % 'f.r1')):
        (tmp_path / d).mkdir(parents=True)
        (tmp_path / d / 'result.json').write_text(text)
    assert sorted(load_done.entries(str(tmp_path))) == ['a.r1\t1', 'c.r1\t1', 'e.r1/h1\t2']
