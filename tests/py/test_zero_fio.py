# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero's fio (tswap/cli/zero_fio.py run_fio) under
tswap.executor.fioproc, with fake fios: the exit status as bash's wait
gives it, job processes left behind killed and noted in fio's stderr (the
assertion of the bash guard lib/fioproc.sh fio_guard, now on the Python
side), a stop signal forwarded to fio and turned into Interrupted, the
signal mask given back. Every wait is fio's own end, never the clock."""
import signal

import pytest

from tswap.cli import zero_fio
from tswap.executor import fioproc

# records "PID STARTTIME" of itself and its setsid child (as fio's job
# processes call setsid: fio backend.c thread_main), exits FAKE_RC
SETSID_CHILD = '''d=$(dirname "$0")
(trap '' INT TERM HUP; exec setsid sleep 1000) &
job=$!
# until the child runs sleep: mid-exec its environment reads empty, and
# fio's job processes (forked, never exec'd) have no such window
until IFS= read -r -d '' c </proc/$job/cmdline && [ "$c" = sleep ]; do :; done
for p in $$ $job; do read -r s </proc/$p/stat; s=${s##*) }; set -- $s; echo "$p ${20}" >>"$d/procs"; done
exit ${FAKE_RC:-0}
'''

# stops its parent (tswap-zero) with SIGTERM, then waits for the SIGTERM
# passed on to it and says so
TERMS_PARENT = '''d=$(dirname "$0")
trap 'echo TERM >>"$d/signals"; exit 0' TERM
kill -TERM $PPID
while :; do sleep 1000 & wait $! || true; done
'''


def fake(where, body):
    p = where / 'fio'
    p.write_text('#!/bin/bash\n' + body)
    p.chmod(0o755)
    return str(p)


def start_time(pid):
    """pid's start time (stat field 22), None when gone or a zombie."""
    try:
        with open('/proc/%d/stat' % pid, 'rb') as f:
            st = f.read().rsplit(b')', 1)[1].split()
    except OSError:
        return None
    return None if st[0] == b'Z' else st[19]


@pytest.fixture
def handlers():
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    old = {s: signal.getsignal(s) for s in fioproc.STOPS}
    yield mask
    for s, h in old.items():
        signal.signal(s, h)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def test_status_and_leftover_job_process_killed_and_noted(tmp_path, monkeypatch, handlers):
    monkeypatch.setenv('FAKE_RC', '7')
    with open(tmp_path / 'err', 'wb') as err:
        rc = zero_fio.run_fio([fake(tmp_path, SETSID_CHILD)], err.fileno())
    assert rc == 7
    procs = [(int(p), s.encode()) for p, s in (x.split() for x in (tmp_path / 'procs').read_text().splitlines())]
    assert len(procs) == 2
    # the setsid child outlived the fake: killed, and said once in fio's stderr
    assert all(start_time(p) != s for p, s in procs)
    assert (tmp_path / 'err').read_text() == \
        'tswap fio guard: fio exited 7 and left job processes running: killed\n'
    assert signal.pthread_sigmask(signal.SIG_BLOCK, ()) == handlers


def test_a_stop_signal_is_passed_on_and_ends_the_run_as_interrupted(tmp_path, handlers):
    with open(tmp_path / 'err', 'wb') as err:
        with pytest.raises(zero_fio.Interrupted) as e:
            zero_fio.run_fio([fake(tmp_path, TERMS_PARENT)], err.fileno())
    assert (e.value.name, e.value.code) == ('TERM', 143)
    # fio got it (from its process group) and ended within the grace: no warning
    assert (tmp_path / 'signals').read_text() == 'TERM\n'
    assert (tmp_path / 'err').read_text() == ''
    # the clean-up that follows is not cut short by another stop signal
    assert all(signal.getsignal(s) == signal.SIG_IGN for s in fioproc.STOPS)
    assert signal.pthread_sigmask(signal.SIG_BLOCK, ()) == handlers


def test_a_fio_that_cannot_start_is_127_with_a_note(tmp_path, handlers):
    with open(tmp_path / 'err', 'wb') as err:
        rc = zero_fio.run_fio([str(tmp_path / 'no-fio')], err.fileno())
    assert rc == 127
    assert (tmp_path / 'err').read_text() == \
        'tswap fio guard: cannot run %s: No such file or directory\n' % (tmp_path / 'no-fio')
