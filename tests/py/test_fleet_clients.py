# SPDX-License-Identifier: GPL-2.0-only
"""tswap.executor.fleet_clients: each fio client with its own time limit
as exec-fleet.sh fleet_launch's `timeout -k GRACE LIMIT fio --client`
gave it: its own status when it ends in time, 124 when SIGTERM at the
limit ended it, 137 when it had to be SIGKILLed GRACE seconds later;
a stop kills what SIGTERM does not end. A fake fio on PATH (no fio, no
server)."""
import os
import signal
import time

import pytest

from tswap.executor import fioproc
from tswap.executor.fleet_clients import Clients

FAKE = '''#!/bin/sh
case "$1" in
--client=*,exit) exit 3 ;;
--client=*,deaf) trap '' TERM; while :; do sleep 0.05; done ;;
*) exec sleep 30 ;;
esac
'''


@pytest.fixture
def fake(tmp_path, monkeypatch):
    b = tmp_path / 'bin'
    b.mkdir()
    (b / 'fio').write_text(FAKE)
    (b / 'fio').chmod(0o755)
    monkeypatch.setenv('PATH', '%s:%s' % (b, os.environ['PATH']))
    fioproc.block_signals()
    yield tmp_path
    signal.pthread_sigmask(signal.SIG_UNBLOCK, fioproc.TAKEN)


def test_each_client_its_own_limit_and_status(fake):
    c = Clients(lambda msg: None)
    a = c.start(str(fake), 'h,exit', ('job.fio',), 30, 2)
    b = c.start(str(fake), 'h,slow', ('job.fio',), 1, 2)
    d = c.start(str(fake), 'h,deaf', ('job.fio',), 1, 1)
    c.wait()
    assert (a.rc, b.rc, d.rc) == (3, 124, 137)
    assert c.running == []
    assert (fake / 'fio.client.out').exists() and (fake / 'fio.stderr').exists()


def test_stop_kills_what_sigterm_does_not_end(fake, monkeypatch):
    said = []
    monkeypatch.setattr(fioproc, 'FIO_GRACE', 0.5)
    c = Clients(said.append)
    a = c.start(str(fake), 'h,slow', ('job.fio',), 30, 2)
    d = c.start(str(fake), 'h,deaf', ('job.fio',), 30, 2)
    time.sleep(0.2)
    c.stop(signal.SIGINT)
    assert not fioproc.alive(a.fio.pid) and not fioproc.alive(d.fio.pid)
    assert said == ['fio (process group %d) did not stop on SIGTERM within 0.5 s: killing it' % d.fio.pid]
