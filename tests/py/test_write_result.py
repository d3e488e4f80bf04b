# SPDX-License-Identifier: GPL-2.0-only
"""One run's result.json as the executors write it in-process
(tswap.cli.result write_result, once results.sh result_json), and the
plan's "a point writes" fact (tswap.plan.points facts, once ranks.sh
plan_writes): the cases tests/sweep-lib.bats checked on the sourced
modules."""
import json

from tswap.cli.result import write_result
from tswap.plan import expand, grid, points

LINE = '\t'.join(['read-x', 'tswap', 'read', 'libaio', '4194304', '1048576', '8', 'block', 'overlap', '1', '1'])


def plan(*lines):
    g, _ = grid.load('/g/t.grid', ''.join(x + '\n' for x in lines), '/w', lambda: 1024)
    return '\n'.join(expand.add_ceilings(expand.expand(grid.with_defaults(g)).lines, 64, 1))


def test_facts_say_whether_a_point_writes():
    text = plan('rw read write', 'qd 8 16')
    assert points.facts(text)[0] == '1'
    assert points.facts('\n'.join(x for x in text.split('\n') if 'write' not in x))[0] == '0'


def result(d, rc):
    write_result(str(d), LINE, 'read-x.r1', '1', str(rc), '1.5', [str(d / 't.swap')], 250.0, 8.0, 20.0)
    return json.loads((d / 'result.json').read_text())


def test_fio_json_after_its_notes_becomes_fio_json(tmp_path):
    (tmp_path / 'fio.stdout').write_text(
        'note: a line fio prints before its JSON\n'
        '{"fio version": "fio-3.33", "jobs": [{"jobname": "read-x", "error": 0, "job_runtime": 4,'
        ' "usr_cpu": 1, "sys_cpu": 2, "job options": {"rw": "read"}, "read": {"io_bytes": 4194304,'
        ' "bw_bytes": 1000000000, "iops": 238.4, "clat_ns": {"percentile": {"99.000000": 2000}}}}]}\n')
    doc = result(tmp_path, 0)
    assert (doc['status'], doc['gbs'], doc['fio_version'], doc['bw_log']) == ('ok', 1, 'fio-3.33', None)
    assert json.loads((tmp_path / 'fio.json').read_text())['jobs'][0]['jobname'] == 'read-x'
    assert (tmp_path / 'fio.stdout').read_text().split('\n')[0] == 'note: a line fio prints before its JSON'


def test_no_json_is_an_error_with_fios_last_stderr_lines(tmp_path):
    # half a JSON (a killed fio): no fio.json; stderr's last two lines
    # that are not blank, or its only one
    (tmp_path / 'fio.stdout').write_text('{"jobs": [\n')
    (tmp_path / 'fio.stderr').write_text('first\n\n  \nsecond\nthird\n')
    doc = result(tmp_path, 1)
    assert (doc['status'], doc['error']) == ('error', 'fio gave no JSON (exit 1): second third ')
    assert not (tmp_path / 'fio.json').exists()
    (tmp_path / 'fio.stderr').write_text('fio: the only line\n')
    assert result(tmp_path, 2)['error'] == 'fio gave no JSON (exit 2): fio: the only line '
    # nothing on stderr: fio's notes before its JSON say why
    (tmp_path / 'fio.stdout').write_text('fio: pid=1, err=30/file:filesetup.c:805, func=open, error=Read-only file'
                                         ' system\n{"jobs": [\n')
    (tmp_path / 'fio.stderr').write_text('')
    assert 'error=Read-only file system' in result(tmp_path, 1)['error']
