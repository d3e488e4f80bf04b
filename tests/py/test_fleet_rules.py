# SPDX-License-Identifier: GPL-2.0-only
"""The fleet executor's pure rules (tswap.executor.fleet_rules,
fleet_jobs), each against what the bash it replaces did: exec-fleet.sh
fleet_split, first_match, fleet_classify, fleet_tag_result,
fleet_preflight; fleet-target.sh fleet_probe_targets,
fleet_create_targets, fleet_probe_job, fleet_create_job; fleet.sh
fleet_check_targets; target.sh file_rules; fleet-meta.sh
fleet_meta_name, fleet_meta_code, fleet_meta_read."""
import json

from tswap.executor import fleet_jobs as jobs
from tswap.executor import fleet_rules as r

ADDR = '127.0.0.2,8765'


def test_split_client_out_cuts_at_the_first_json_line():
    # sed -n '/^{/q; s/^<[^>]*> //; p' and sed -n '/^{/,$p'
    out = b'<host2> fio: some note\nplain line\n{\n  "client_stats": []\n}\n'
    text, js = r.split_client_out(out)
    assert text == b'fio: some note\nplain line\n'
    assert js == b'{\n  "client_stats": []\n}\n'
    # no JSON: all of it is text, the prefix only cut at a line's start
    text, js = r.split_client_out(b'a <b> c\n<h> last')
    assert (text, js) == (b'a <b> c\nlast', None)


def test_single_shape_drops_all_clients_and_needs_client_stats():
    doc = {'fio version': 'fio-3.33', 'timestamp': 1, 'time': 't',
           'client_stats': [{'jobname': 'p', 'read': {}}, {'jobname': 'All clients'}]}
    got = json.loads(r.single_shape(json.dumps(doc)))
    assert list(got) == ['fio version', 'timestamp', 'time', 'jobs']
    assert got['jobs'] == [{'jobname': 'p', 'read': {}}]
    # jq's error("no client_stats"), a parse error, a job that is no object
    assert r.single_shape('{"jobs": []}') is None
    assert r.single_shape('{') is None
    assert r.single_shape('{"client_stats": [1]}') is None


def test_first_match_ignores_case_and_takes_the_first_line():
    # grep -i -m 1 -- 'a\|b'
    assert r.first_match('x|timed out', 'one\nTIMED OUT here\ntimed out') == 'TIMED OUT here'
    assert r.first_match('nothing', 'one\ntwo') == ''


def test_classify_in_fleet_classify_order():
    # a timeout (status 124/137 or the words) first, whatever else is said
    why = r.classify('connection refused', 124, '12', ADDR, '/e.so')
    assert why.startswith('lost no answer within 12 s (timeout): ') and 'port 8765,' in why
    assert r.classify('fio: timeout on cmd SEND', 1, '12', ADDR, '/e').startswith(
        'lost no answer (fio: timeout on cmd SEND): ')
    assert r.classify('fio: connect: Connection refused', 1, '9', ADDR, '/e') == (
        'lost unreachable: fio: connect: Connection refused (is fio --server running on 127.0.0.2,8765, and'
        ' the port open?)')
    assert r.classify('client: version mismatch', 1, '9', ADDR, '/e').startswith(
        "lost fio version differs from this machine's: ")
    assert r.classify('fio: failed to load engine', 1, '9', ADDR, '/e.so') == (
        'lost engine missing or not loadable on the host: /e.so (fio: failed to load engine); install it there'
        ' (make install) or give engine= in the hosts file')
    # the engine's "tswap: JOB: message": the prefix and the job cut
    assert r.classify('tswap: j: engine was built for fio-3.33 but is loaded by fio-3.35', 1, '9', ADDR, '/e') == (
        "lost fio version differs from the engine's: engine was built for fio-3.33 but is loaded by fio-3.35")
    # after the engine checks: a closed connection
    assert r.classify('Broken pipe', 1, '9', ADDR, '/e') == (
        'lost connection lost mid-run (fio --server or the host died): Broken pipe')
    assert r.classify('x\nfio: pid=1, err=5/file:io_u.c', 1, '9', ADDR, '/e') == 'job fio: pid=1, err=5/file:io_u.c'
    assert r.classify('nothing to add', 1, '9', ADDR, '/e') == 'job '
    assert r.reason_of('job ') == '' and r.reason_of('lost a b') == 'a b'


def test_messages_drop_carriage_returns_and_blank_lines():
    assert r.messages('a\r\n\n  \t\nb\n') == 'a\nb'


def test_tag_result_adds_the_host_and_its_reason():
    t = r.Tag(1, 'slow', 'h02-slow', ADDR, '/t')
    doc = r.tag_result({'status': 'ok', 'error': None, 'x': 1}, t)
    assert list(doc) == ['status', 'error', 'x', 'host_index', 'host', 'host_id', 'address', 'target']
    assert doc['status'] == 'ok'
    doc = r.tag_result({'status': 'ok', 'error': None}, t, 'y' * 700)
    # the error in place (jq's .error = ...), cut at 600 characters
    assert list(doc)[:2] == ['status', 'error'] and doc['status'] == 'error' and len(doc['error']) == 600


def test_preflight_reason_and_its_document():
    line = 'hostname=node1, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1'
    assert r.probe_answer(line) == ('node1', 'fio-3.33')
    assert r.probe_answer('') == ('', '')
    assert r.preflight_reason('', '', 'fio-3.33', 'job ', '', 7, '', ADDR, 'h01') == (
        'no probe answer from fio --client=127.0.0.2,8765 (exit 7)')
    assert r.preflight_reason(line, 'fio-3.35', '', 'job ', '', 0, 'node1', ADDR, 'h01').startswith(
        'fio version differs: the host runs fio-3.35, this run wants unknown ')
    assert r.preflight_reason(line, 'fio-3.33', 'fio-3.33', 'job ', 'Bad option foo', 1, 'node1', ADDR, 'h01') == (
        "the host's fio rejects the job: Bad option foo (preflight/h01/job.fio)")
    assert r.preflight_reason(line, 'fio-3.33', 'fio-3.33', 'job ', '', 1, 'node1', ADDR, 'h01') == (
        'the host answered (hostname node1, fio-3.33) but fio --client exited 1 parsing the job')
    assert r.preflight_reason(line, 'fio-3.33', 'fio-3.33', 'job ', '', 0, 'node1', ADDR, 'h01') == ''
    doc = json.loads(r.preflight_doc(0, 'a', ADDR, '', '', 'why', 124))
    assert doc == {'host_index': 0, 'host': 'a', 'address': ADDR, 'ok': False, 'reason': 'why', 'fio_rc': 124,
                   'hostname': None, 'fio_version': None}


def stats(**answers):
    return json.dumps({'client_stats': [{'jobname': 'tswap-probe-' + k, 'read': {'io_bytes': 4096 * v}}
                                        for k, v in answers.items()] + [{'jobname': 'All clients'}]})


def test_probe_answers_and_the_judgement():
    yes = r.probe_yes(stats(ctl=1, exists=1, block=0, file=1, big=0, ours=0, pseudo=0))
    assert yes == {'ctl': '1', 'exists': '1', 'block': '0', 'file': '1', 'big': '0', 'ours': '0', 'pseudo': '0'}
    assert r.probe_yes('') == {} and r.probe_yes('{"x": 1}') == {}
    w = 'target /t on h'
    # an existing file that is not the sweep's: written only with --destructive
    v = r.judge(yes, w, 'h01', True, False, False, '1g')
    assert v.refuse.startswith('refusing target /t on h: an existing file the sweep did not create, and the')
    assert r.judge(yes, w, 'h01', True, True, False, '1g').warn_once.startswith('overwriting target /t on h,')
    assert r.judge(yes, w, 'h01', False, False, False, '1g').refuse.endswith(
        'shorter than --size 1g: fio would write it out to full size; pass --destructive, a new path, or a'
        ' smaller --size')
    assert r.judge(dict(yes, ctl='0'), w, 'h01', False, False, False, '1g').refuse.endswith(
        "(fio's exec_prerun fails on the host; preflight/h01/target/)")
    assert 'pseudo-filesystem' in r.judge(dict(yes, pseudo='1'), w, 'h01', False, False, False, '1g').refuse
    blk = dict(yes, block='1')
    assert r.judge(blk, w, 'h01', False, False, False, '1g') == r.Verdict()
    assert 'pass --destructive --force' in r.judge(blk, w, 'h01', True, True, False, '1g').refuse
    assert r.judge(blk, w, 'h01', True, True, True, '1g').warn.startswith('writing to target /t on h (a block')
    assert r.judge(dict(yes, exists='0'), w, 'h01', True, False, False, '1g').new
    assert 'not a regular file' in r.judge(dict(yes, file='0'), w, 'h01', True, False, False, '1g').refuse
    assert r.judge(dict(yes, ours='1'), w, 'h01', True, False, False, '1g') == r.Verdict()


def test_device_check_of_dev_targets():
    # fleet.sh fleet_check_targets: /dev/* written only with --destructive --force
    assert r.device_check('/dev/x', 'h', False, False, False) == r.Verdict()
    assert r.device_check('/srv/x', 'h', True, False, False) == r.Verdict()
    assert r.device_check('/dev/x', 'h', True, True, False).refuse.startswith(
        'refusing target /dev/x on h: a device on a host, and the sweep writes to it')
    assert r.device_check('/dev/x', 'h', True, True, True).warn == (
        'writing to /dev/x on h because of --destructive --force')


def test_created_and_its_warnings():
    js = json.dumps({'client_stats': [{'jobname': 'tswap-probe-new', 'read': {'io_bytes': 4096}},
                                      {'jobname': 'tswap-probe-fill', 'write': {'io_bytes': 1 << 20}}]})
    assert r.created(js, 1 << 20) == '1 1'
    assert r.created(js, 2 << 20) == '1 0'
    assert r.created('', 1) == ''
    assert r.create_warning('1 1', '/t', 'h', 'h01') == ''
    assert 'not written in full' in r.create_warning('1 0', '/t', 'h', 'h01')
    assert 'not created and marked' in r.create_warning('', '/t', 'h', 'h01')


def test_meta_desc_joins_the_jobs_in_name_order():
    doc = {'client_stats': [{'jobname': 'm-h01-002', 'desc': 'B'}, {'jobname': 'm-h01-001', 'desc': 'A'},
                            {'jobname': 'other'}, {'jobname': 'm-h01-003'}]}
    assert r.meta_desc(json.dumps(doc), 'm-h01') == 'AB'
    assert r.meta_desc('{"client_stats": []}', 'm-h01') is None
    assert r.meta_why(['/d/meta.stderr:all fine', '/d/meta.stderr:Connection REFUSED']) == (
        '/d/meta.stderr:Connection REFUSED')


def test_job_texts():
    # fleet-target.sh: the path in single quotes for the host's sh
    assert jobs.sh_q("/a b/it's") == "'/a b/it'\\''s'"
    probe = jobs.probe_job('/t', 1 << 20)
    assert probe.startswith('; tswap-sweep: what the target is on this host (exec_prerun tests; no I/O)\n'
                            '[global]\nioengine=null\n')
    assert '[tswap-probe-big]\nexec_prerun=(test "$(stat -L -c %s -- \'/t\')" -ge 1048576) 2>/dev/null && rm -f' \
        ' tswap-probe-big.prerun.txt || ! rm -f tswap-probe-big.prerun.txt\n' in probe
    assert [ln for ln in probe.split('\n') if ln.startswith('[')] == ['[global]'] + [
        '[tswap-probe-%s]' % n for n in jobs.PROBES]
    create = jobs.create_job('/a:b', 4096)
    assert 'filename=/a\\:b\nsize=4096\n' in create and "truncate -s 4096 -- '/a:b'" in create
    assert ';' not in create.split('\n', 1)[1].replace('; tswap', '')
    assert jobs.meta_name(42, 0) == 'tswap-meta-42-h01'
    assert jobs.meta_code(b'#!/bin/sh\n  # c\nx=1\r\ny\0z') == b'x=1\r\nyz\n'
    # exec-fleet.sh fleet_run_sh: the address as printf %q writes it
    assert jobs.run_sh('h', 'g', '[::1],8765') == (
        "#!/usr/bin/env bash\n# Rerun this point on h through fio's client mode (tswap-sweep g).\n"
        'set -euo pipefail\ncd "$(dirname "$0")"\nexec fio --client=\\[::1\\]\\,8765 --output-format=json job.fio\n')
