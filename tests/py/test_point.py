# SPDX-License-Identifier: GPL-2.0-only
"""The point stage (tswap/cli/point.py) and fio's process control
(tswap/executor/fioproc.py; issue 36 item 3, docs/sweep.md "Stopping"),
with fake fios: one that ignores SIGTERM, one that forks a setsid child
carrying the tag (as fio's job processes do: fio backend.c thread_main),
one that writes fio's JSON. Processes are checked by pid and start time;
every wait is a bounded poll, never an assertion on the clock. And the
pure parts: bash's printf %q, fio_path, the rank files, run.sh,
drop_caches (exec-local.sh, jobs.sh, ranks.sh before)."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tswap.cli.point import status_text, wall_text
from tswap.executor import fioproc
from tswap.executor.point import (DROP_ROOT, DROP_WRITE, Targets, bash_q, drop_caches, fio_env, fio_path,
                                  rank_var, run_sh)

SWEEP = Path(__file__).resolve().parents[2] / 'sweep'


def bash_printf_q(s):
    return subprocess.run(['bash', '-c', 'printf %q "$1"', 'q', s], capture_output=True,
                          text=True, check=True).stdout


@pytest.mark.parametrize('s', ['', 'plain/path.swap', 'a b', '~x', 'a:~b', 'a=~b', 'x~', '#c', 'a#b',
                               "it's", 'a"b$c&d(e)f*g,h;i<j>k?l[m\\n]o^p`q{r|s}t!u', 'tab\there',
                               'new\nline', 'é x', '-dash', '%q', '/t/a;b#c'])
def test_bash_q_is_bash_printf_q(s):
    # jobs.sh write_run_sh's printf %q
    assert bash_q(s) == bash_printf_q(s)


def test_bash_q_every_printable_ascii_char_at_start_middle_end():
    for c in map(chr, range(32, 127)):
        for s in (c + 'b', 'a' + c + 'b', 'a' + c):
            assert bash_q(s) == bash_printf_q(s), s


def test_fio_path_links_what_fio_cannot_take(tmp_path):
    # jobs.sh fio_path: ';' '#', blanks at the ends, $ncpus...: a relative
    # symlink RUN/LINK, replacing an earlier one
    run = str(tmp_path)
    assert fio_path('/t/a;b', 'target', 2, run) == '../../target'
    assert os.readlink(tmp_path / 'target') == '/t/a;b'
    assert fio_path('/t/c#d', 'target', 1, run) == '../target'
    assert os.readlink(tmp_path / 'target') == '/t/c#d'
    assert fio_path(' /lead', 'target', 0, run) == 'target'
    assert fio_path('/t/$ncpus', 'engine.so', 2, run) == '../../engine.so'
    # ':' is fio's file separator: escaped in a target, linked for the engine
    assert fio_path('/dev/disk/by-path/pci-0:1', 'target', 2, run) == '/dev/disk/by-path/pci-0\\:1'
    assert fio_path('/e:/tswap.so', 'engine.so', 2, run) == '../../engine.so'
    assert os.readlink(tmp_path / 'engine.so') == '/e:/tswap.so'
    assert fio_path('/plain', 'engine.so', 2, run) == '/plain'


def test_rank_files_and_variables():
    # ranks.sh rank_file, rank_var: target R mod N; a block device itself
    t = Targets(('/a/t', '/dev/loop7'), ('file', 'block'), '/a/t', ((0, 'io'), (1, 'io'), (2, 'write')))
    assert [t.rank_file(r, h) for r, h in t.slots] == ['/a/t.rank0', '/dev/loop7', '/a/t.rank2.write']
    assert [rank_var(r, h) for r, h in t.slots] == ['TSWAP_RANK0', 'TSWAP_RANK1', 'TSWAP_RANK2_WRITE']
    assert Targets((), (), '/x', ()).json_list() == ['/x']


def test_fio_env_uses_the_checked_descriptors_run_sh_the_paths(tmp_path):
    t = Targets(('/a/t x',), ('file',), '/a/t x', ((0, 'io'),))
    env = fio_env('/e/tswap.so', '16m', t, 2, str(tmp_path), {'/a/t x': 11, '/a/t x.rank0': 12})
    assert env.run_env['TSWAP_TARGET'] == '/proc/self/fd/11'
    assert env.run_env['TSWAP_RANK0'] == '/proc/self/fd/12'
    assert env.fds == (11, 12)
    assert run_sh('g', '/a/t x', env) == (
        '#!/usr/bin/env bash\n# Rerun this point exactly (tswap-sweep g).\nset -euo pipefail\n'
        'cd "$(dirname "$0")"\n# target: /a/t\\ x\nexport TSWAP_ENGINE=/e/tswap.so\n'
        'export TSWAP_TARGET=/a/t\\ x\nexport TSWAP_SIZE=16m\nexport TSWAP_RANK0=/a/t\\ x.rank0\n'
        'exec fio --output-format=json --eta=never job.fio\n')


def test_drop_caches_reasons(tmp_path):
    # exec-local.sh drop_caches: not root; root but the write fails; done
    assert drop_caches(str(tmp_path), root=False) == DROP_ROOT
    assert drop_caches(str(tmp_path), root=True, proc=str(tmp_path / 'no' / 'drop')) == DROP_WRITE
    assert not (tmp_path / 'cache-dropped').exists()
    assert drop_caches(str(tmp_path), root=True, proc=str(tmp_path / 'drop')) is None
    assert (tmp_path / 'drop').read_text() == '3\n'
    assert (tmp_path / 'cache-dropped').is_file()


def test_status_lines_and_wall():
    # status.sh's lines; pipeline.sh since_into's 3 decimals
    assert status_text('[1/1] x', 10, 12) == '    [1/1] x: 10 s of 12 s, 2 s left\n'
    assert status_text('[1/1] x', 13, 12) == '    [1/1] x: 13 s of 12 s, winding down\n'
    assert status_text('[1/1] x', 10, None) == '    [1/1] x: 10 s, --io-size: no estimate\n'
    assert wall_text(1_234_499_999) == '1.234'
    assert wall_text(1_234_500_000) == '1.235'
    assert wall_text(0) == '0.000'


# --- process control ---------------------------------------------------------

def start_time(pid):
    """pid's start time (stat field 22), None when gone or a zombie."""
    try:
        with open('/proc/%d/stat' % pid, 'rb') as f:
            st = f.read().rsplit(b')', 1)[1].split()
    except OSError:
        return None
    return None if st[0] == b'Z' else st[19]


def wait_for(pred, what, rounds=600):
    for _ in range(rounds):
        if pred():
            return
        time.sleep(0.05)
    pytest.fail('not within %d polls: %s' % (rounds, what))


def fake(where, body):
    """A fake fio: bash running body, in where; it records "PID START"
    lines of its processes into where/procs."""
    p = where / 'fio'
    p.write_text('#!/bin/bash\n' + body)
    p.chmod(0o755)
    return str(p)


IGNORES_TERM = '''d=$(dirname "$0")
trap 'echo TERM >>"$d/signals"' TERM
read -r s </proc/$$/stat; s=${s##*) }; set -- $s; echo "$$ ${20}" >"$d/procs.tmp"
mv "$d/procs.tmp" "$d/procs"
while :; do sleep 1000 & wait $! || true; done
'''

SETSID_CHILD = '''d=$(dirname "$0")
(trap '' INT TERM HUP; exec setsid sleep 1000) &
job=$!
for p in $$ $job; do read -r s </proc/$p/stat; s=${s##*) }; set -- $s; echo "$p ${20}" >>"$d/procs.tmp"; done
mv "$d/procs.tmp" "$d/procs"
exit ${FAKE_RC:-0}
'''


def recorded(tmp_path):
    f = tmp_path / 'procs'
    wait_for(f.exists, 'the fake fio recorded its processes')
    return [(int(p), s.encode()) for p, s in (x.split() for x in f.read_text().split('\n') if x)]


def gone(procs):
    return all(start_time(p) != s for p, s in procs)


@pytest.fixture
def blocked():
    old = signal.pthread_sigmask(signal.SIG_BLOCK, fioproc.TAKEN)
    yield
    # what the tests left pending is taken before the mask is restored
    while fioproc.pending_stop() is not None:
        pass
    signal.sigtimedwait({signal.SIGCHLD}, 0)
    signal.pthread_sigmask(signal.SIG_SETMASK, old)


def test_fio_that_leaves_a_tagged_setsid_child_has_it_killed(tmp_path, blocked):
    f = fake(tmp_path, SETSID_CHILD)
    with open(tmp_path / 'o', 'wb') as o:
        fio = fioproc.Fio([f], str(tmp_path), dict(os.environ, FAKE_RC='7'), o.fileno(), o.fileno())
    assert fio.wait() == 7
    procs = recorded(tmp_path)
    # the child is in its own session: the tag finds it
    assert fioproc.tagged(fio.tag) == [procs[1][0]]
    assert fio.leftovers() is True
    assert gone(procs)
    assert fioproc.tagged(fio.tag) == []
    assert fio.leftovers() is False


def test_stop_forwards_then_kills_a_fio_that_ignores_sigterm(tmp_path, blocked):
    f = fake(tmp_path, IGNORES_TERM)
    warned = []
    with open(tmp_path / 'o', 'wb') as o:
        fio = fioproc.Fio([f], str(tmp_path), dict(os.environ), o.fileno(), o.fileno(), warn=warned.append,
                          grace=0.5)
    procs = recorded(tmp_path)
    # fio runs in its own session and process group
    assert os.getpgid(fio.pid) == fio.pid != os.getpgid(0)
    os.kill(os.getpid(), signal.SIGTERM)
    with pytest.raises(fioproc.Stopped) as e:
        fio.wait()
    assert e.value.sig == signal.SIGTERM
    assert (tmp_path / 'signals').read_text() == 'TERM\n'
    assert warned == ['fio (process group %d) did not stop on SIGTERM within 0.5 s: killing it' % fio.pid]
    assert gone(procs)
    assert fio.proc.returncode == -signal.SIGKILL


def test_a_signal_number_is_128_plus_as_bash_wait_says(tmp_path, blocked):
    f = fake(tmp_path, 'kill -KILL $$\n')
    with open(tmp_path / 'o', 'wb') as o:
        fio = fioproc.Fio([f], str(tmp_path), dict(os.environ), o.fileno(), o.fileno())
    assert fio.wait() == 128 + signal.SIGKILL


def test_ticks_while_fio_runs(tmp_path, blocked):
    # the fake ends once the first tick has been given
    mark = tmp_path / 'ticked'
    f = fake(tmp_path, 'while [ ! -e "%s" ]; do sleep 0.01; done\n' % mark)
    ticks = []

    def tick(t):
        ticks.append(t.elapsed)
        mark.touch()
    with open(tmp_path / 'o', 'wb') as o:
        fio = fioproc.Fio([f], str(tmp_path), dict(os.environ), o.fileno(), o.fileno())
    assert fio.wait(0.05, tick) == 0
    assert len(ticks) >= 1 and all(isinstance(x, int) for x in ticks)


# --- the stage, as the sweep runs it ------------------------------------------

STAGE = ('import sys; sys.path.insert(0, sys.argv.pop(1)); '
         'from tswap.__main__ import main; sys.exit(main())')


def stage_argv(tmp_path, d, *more):
    return [sys.executable, '-I', '-B', '-c', STAGE, str(SWEEP), 'point', str(d), '--run-dir', str(tmp_path),
            '--depth', '2', '--engine', '/e/tswap.so', '--target-now', str(tmp_path / 't'), '--size', '16m',
            '--target', str(tmp_path / 't'), '--kind', 'file', *more]


def test_stage_runs_fio_in_dir_with_its_environment_and_status(tmp_path):
    (tmp_path / 'bin').mkdir()
    fake_fio = tmp_path / 'bin' / 'fio'
    fake_fio.write_text('#!/bin/bash\necho "$PWD $* $TSWAP_TARGET $TSWAP_SIZE ${TSWAP_FIO_GUARD:+tagged}"\n'
                        'echo err >&2\nread -r x || echo stdin-empty\nexit 5\n')
    fake_fio.chmod(0o755)
    d = tmp_path / 'prepare'
    d.mkdir()
    env = dict(os.environ, PATH='%s:%s' % (tmp_path / 'bin', os.environ['PATH']))
    p = subprocess.Popen(stage_argv(tmp_path, d, '--parent', str(os.getpid())), env=env)
    assert p.wait() == 5
    assert (d / 'fio.stdout').read_text() == '%s --output-format=json --eta=never job.fio %s 16m tagged\n' \
        'stdin-empty\n' % (d, tmp_path / 't')
    assert (d / 'fio.stderr').read_text() == 'err\n'


def test_stage_whose_parent_is_gone_starts_nothing(tmp_path):
    d = tmp_path / 'p'
    d.mkdir()
    # --parent is not this stage's parent (the sweep that forked it died)
    r = subprocess.run(stage_argv(tmp_path, d, '--parent', '1'))
    assert r.returncode == 125
    assert not (d / 'fio.stdout').exists()


def test_stage_point_sigterm_kills_fio_removes_the_point_and_dies_of_sigterm(tmp_path):
    (tmp_path / 'bin').mkdir()
    fake(tmp_path / 'bin', IGNORES_TERM)
    env = dict(os.environ, PATH='%s:%s' % (tmp_path / 'bin', os.environ['PATH']))
    pts = tmp_path / 'points'
    pts.mkdir()
    d = pts / '.tmp-k.r1.1'
    line = 'k\ttswap\twrite\tlibaio\t4194304\t1048576\t8\tblock\toverlap\t1\t1'
    p = subprocess.Popen(stage_argv(tmp_path, d, '--parent', str(os.getpid()), '--line', line, '--runkey', 'k.r1',
                                    '--repeat', '1', '--final', str(pts / 'k.r1'), '--grid', 'g',
                                    '--size-bytes', str(16 << 20), '--io-size', '8m', '--ss-crit', 'iops_slope:2%',
                                    '--ss-dur', '10', '--bwlog-msec', '250', '--bwlog-min', '8',
                                    '--drop-pct', '20'), env=env, stderr=subprocess.PIPE, text=True)
    procs = recorded(tmp_path / 'bin')
    assert (d / 'job.fio').is_file() and os.access(d / 'run.sh', os.X_OK)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == -signal.SIGTERM
    assert (tmp_path / 'bin' / 'signals').read_text() == 'TERM\n'
    assert 'tswap-sweep: fio (process group %d) did not stop on SIGTERM within 5 s: killing it' % procs[0][0] \
        in err
    assert gone(procs)
    assert not d.exists() and not (pts / 'k.r1').exists()


PARENT = '''import os, subprocess, sys
argv = sys.argv[1:]
i = argv.index('--parent')
argv[i + 1] = str(os.getpid())
subprocess.Popen(argv).wait()
'''


def test_stage_ends_fio_and_its_tagged_child_when_its_parent_is_sigkilled(tmp_path):
    # timeout -k: the sweep SIGKILLed; its point stage (PR_SET_PDEATHSIG
    # SIGUSR1) kills fio and the job process that left fio's session
    (tmp_path / 'bin').mkdir()
    fake(tmp_path / 'bin', SETSID_CHILD.replace('exit ${FAKE_RC:-0}', 'sleep 1000'))
    env = dict(os.environ, PATH='%s:%s' % (tmp_path / 'bin', os.environ['PATH']))
    d = tmp_path / 'p'
    d.mkdir()
    par = subprocess.Popen([sys.executable, '-c', PARENT, *stage_argv(tmp_path, d, '--parent', '0')], env=env)
    procs = recorded(tmp_path / 'bin')
    assert not gone(procs)
    par.kill()
    par.wait()
    wait_for(lambda: gone(procs), 'fio and its tagged child gone after the parent was SIGKILLed')


def test_stage_point_writes_the_point_and_renames_it_over_an_earlier_one(tmp_path):
    # exec-local.sh run_point: job.fio as point-jobs makes it, run.sh
    # executable, result.json and progress.txt, the rename over a failed
    # earlier run of RUNKEY; "WALL NOTED" on the reply fd
    from tswap.plan.jobs import JobSettings, point_job
    (tmp_path / 'bin').mkdir()
    (tmp_path / 'bin' / 'fio').write_text('#!/bin/bash\necho \'{"jobs": []}\'\n')
    (tmp_path / 'bin' / 'fio').chmod(0o755)
    env = dict(os.environ, PATH='%s:%s' % (tmp_path / 'bin', os.environ['PATH']))
    pts = tmp_path / 'points'
    (pts / 'k.r1').mkdir(parents=True)
    (pts / 'k.r1' / 'old').write_text('x')
    d = pts / '.tmp-k.r1.1'
    line = 'k\ttswap\twrite\tlibaio\t4194304\t1048576\t8\tblock\toverlap\t1\t1'
    r, w = os.pipe()
    p = subprocess.Popen(stage_argv(tmp_path, d, '--parent', str(os.getpid()), '--line', line, '--runkey', 'k.r1',
                                    '--repeat', '1', '--final', str(pts / 'k.r1'), '--grid', 'g',
                                    '--size-bytes', str(16 << 20), '--io-size', '8m', '--ss-crit', 'iops_slope:2%',
                                    '--ss-dur', '10', '--bwlog-msec', '250', '--bwlog-min', '8',
                                    '--drop-pct', '20', '--reply-fd', str(w)), env=env, pass_fds=(w,))
    os.close(w)
    assert p.wait() == 0
    reply = os.read(r, 100).decode()
    os.close(r)
    wall, noted = reply.split()
    assert reply.endswith('\n') and noted == '0' and float(wall) >= 0 and len(wall.split('.')[1]) == 3
    out = pts / 'k.r1'
    assert not d.exists() and not (out / 'old').exists()
    s = JobSettings(16 << 20, '', '', '8m', False, 'iops_slope:2%', 10, '250', (str(tmp_path / 't'),), ('file',))
    assert (out / 'job.fio').read_text() == point_job(line, s)
    assert os.access(out / 'run.sh', os.X_OK)
    assert (out / 'result.json').is_file() and (out / 'progress.txt').is_file()


def test_stage_point_in_a_full_run_directory_makes_nothing_and_says_full(tmp_path):
    # space.sh check_run_space's rule, before the point: "full FREE" for
    # the sweep to say (run_dir_full_exit), exit 3, no directory made
    d = tmp_path / 'points' / '.tmp-k.r1.1'
    line = 'k\ttswap\twrite\tlibaio\t4194304\t1048576\t8\tblock\toverlap\t1\t1'
    r, w = os.pipe()
    p = subprocess.Popen(stage_argv(tmp_path, d, '--parent', str(os.getpid()), '--line', line, '--runkey', 'k.r1',
                                    '--repeat', '1', '--final', str(tmp_path / 'points' / 'k.r1'),
                                    '--size-bytes', str(16 << 20), '--reply-fd', str(w),
                                    '--space-min', str(1 << 62)), pass_fds=(w,))
    os.close(w)
    assert p.wait() == 3
    what, free = os.read(r, 100).decode().split()
    os.close(r)
    st = os.statvfs(tmp_path)
    assert what == 'full' and 0 <= int(free) < 1 << 62 and int(free) % st.f_frsize == 0
    assert not (tmp_path / 'points').exists()
