# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero's fio (tswap/cli/zero_fio.py run_fio) under
tswap.executor.fioproc, with fake fios (fakefio.py): the exit status as
bash's wait gives it, job processes left behind killed and noted in fio's
stderr (the assertion of the bash guard lib/fioproc.sh fio_guard, now on
the Python side), a stop signal forwarded to fio and turned into
Interrupted, the signal mask given back. Every wait is fio's own end,
never the clock."""
import signal

import pytest

from fakefio import SETSID_CHILD, fake, recorded, start_time
from tswap.cli import zero_fio
from tswap.executor import fioproc

# stops its parent (tswap-zero) with SIGTERM, then waits for the SIGTERM
# passed on to it and says so
TERMS_PARENT = '''trap 'echo TERM >>"$d/signals"; exit 0' TERM
kill -TERM $PPID
while :; do sleep 1000 & wait $! || true; done
'''


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
    procs = recorded(tmp_path)
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
