# SPDX-License-Identifier: GPL-2.0-only
"""A point's pieces (tswap/executor/point.py) and fio's process control
(tswap/executor/fioproc.py; issue 36 item 3, docs/sweep.md "Stopping"),
with fake fios (fakefio.py): one that ignores SIGTERM, one that forks a
setsid child carrying the tag (as fio's job processes do: fio backend.c
thread_main), one that writes fio's JSON. Processes are checked by pid
and start time; every wait is a bounded poll, never an assertion on the
clock. And the
pure parts: bash's printf %q, fio_path, the rank files, run.sh,
before_read (exec-local.sh, jobs.sh, ranks.sh before), and report.md's
page-cache line."""
import os
import signal
import subprocess

import pytest

from fakefio import SETSID_CHILD, fake, gone, recorded
from tswap.executor import fioproc
from tswap.executor.local import status_text, wall_text
from tswap.executor.point import Targets, bash_q, before_read, fio_env, fio_path, rank_var, run_sh
from tswap.report.head import PAGE_CACHE, report_head

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


def test_before_a_read_point_a_sync_and_the_page_cache_left_alone(monkeypatch, tmp_path):
    # issue 36: every read is O_DIRECT and fio invalidates the target's
    # pages (invalidate=1), so nothing is written to drop_caches, as
    # root or not, and nothing is left in the run directory
    calls = []
    real_open = open
    monkeypatch.setattr(os, 'sync', lambda: calls.append('sync'))
    monkeypatch.setattr('builtins.open', lambda f, *a, **k: calls.append(str(f)) or real_open(f, *a, **k))
    monkeypatch.setattr(os, 'geteuid', lambda: 0)
    monkeypatch.chdir(tmp_path)
    before_read()
    assert calls == ['sync']
    assert os.listdir(tmp_path) == []


def _head(points, dropped):
    return report_head({'ceiling': False}, {'points': points}, '', dropped)


def test_the_page_cache_line_of_a_run():
    old = '- page cache: dropped (sync; echo 3 > /proc/sys/vm/drop_caches) before every read point'
    read, write = {'point': 'r', 'rw': 'read'}, {'point': 'w', 'rw': 'write'}
    # a run recorded before issue 36 as root (RUN/cache-dropped) keeps its line
    assert old in _head([read, write], True)
    assert PAGE_CACHE not in _head([read, write], True)
    # a run with read points and no drop says what kept them off the cache
    assert PAGE_CACHE in _head([read, write], False)
    assert old not in _head([read, write], False)
    # no read point (write, readwrite, checkpoint): no line, as before
    for pts in ([write], [{'point': 'rw', 'rw': 'readwrite'}], []):
        assert not [x for x in _head(pts, False) if 'page cache' in x]


def test_status_lines_and_wall():
    # status.sh's lines; pipeline.sh since_into's 3 decimals
    assert status_text('[1/1] x', 10, 12) == '    [1/1] x: 10 s of 12 s, 2 s left\n'
    assert status_text('[1/1] x', 13, 12) == '    [1/1] x: 13 s of 12 s, winding down\n'
    assert status_text('[1/1] x', 10, None) == '    [1/1] x: 10 s, --io-size: no estimate\n'
    assert wall_text(1_234_499_999) == '1.234'
    assert wall_text(1_234_500_000) == '1.235'
    assert wall_text(0) == '0.000'


# --- process control ---------------------------------------------------------

IGNORES_TERM = '''trap 'echo TERM >>"$d/signals"' TERM
record $$
while :; do sleep 1000 & wait $! || true; done
'''

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
