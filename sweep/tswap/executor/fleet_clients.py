# SPDX-License-Identifier: GPL-2.0-only
"""The fleet's fio clients: one `fio --client=HOST,PORT ...` per host at
once, each a tswap.executor.fioproc.Fio (its own session and process
group, dying with the sweep, SIGKILL included), each with its own time
limit as `timeout -k GRACE LIMIT` gave it: SIGTERM to its group at LIMIT
seconds, SIGKILL GRACE seconds later; its status then 124 (137 when it
had to be killed). A stop signal (INT, TERM, HUP) while they run sends
SIGTERM to every client (fio's client then asks its server to stop the
job), waits up to fioproc.FIO_GRACE seconds, SIGKILLs what is left and
raises fioproc.Stopped. The bash it replaces: exec-fleet.sh
fleet_launch, exec_stop, and the waits of exec_run, fleet_preflight,
fleet_probe_targets, fleet_create_targets."""

from __future__ import annotations

import os
import signal
import time
from typing import Callable, Optional, Sequence

from . import fioproc


class Client:
    """One fio client: its Fio, its time limit and grace (s), its status
    once it ended (as bash's wait on timeout gave it)."""

    def __init__(self, fio: fioproc.Fio, limit: float, grace: float) -> None:
        self.fio, self.limit, self.grace = fio, limit, grace
        self.t0 = time.monotonic()
        self.termed = self.killed = False
        self.rc: Optional[int] = None

    def poll(self) -> bool:
        """True once it ended (rc set)."""
        if self.rc is not None:
            return True
        r = self.fio.proc.poll()
        if r is None:
            return False
        rc = 128 - r if r < 0 else r
        if self.termed:
            rc = 137 if r == -signal.SIGKILL else 124
        self.rc = rc
        return True

    def due(self, now: float) -> Optional[float]:
        """Send what its limit asks for now; the time of its next step."""
        if not self.termed:
            if now >= self.t0 + self.limit:
                self.termed = True
                _killpg(self.fio.pid, signal.SIGTERM)
            else:
                return self.t0 + self.limit
        if not self.killed:
            if now >= self.t0 + self.limit + self.grace:
                self.killed = True
                _killpg(self.fio.pid, signal.SIGKILL)
                return None
            return self.t0 + self.limit + self.grace
        return None


def _killpg(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except OSError:
        pass


class Clients:
    """The fio clients running now (a point's, or a preflight step's)."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self.warn = warn
        self.running: list[Client] = []

    def start(self, d: str, addr: str, args: Sequence[str], limit: float, grace: float,
              out: str = 'fio.client.out', err: str = 'fio.stderr') -> Client:
        """`fio --client=addr ARGS` in d, its output in d/out and d/err;
        the caller has blocked fioproc.TAKEN (fioproc.block_signals)."""
        with open(os.path.join(d, out), 'wb') as o, open(os.path.join(d, err), 'wb') as e:
            fio = fioproc.Fio(['fio', '--client=' + addr, *args], d, dict(os.environ), o.fileno(), e.fileno(),
                              (), self.warn)
        c = Client(fio, limit, grace)
        self.running.append(c)
        return c

    def wait(self) -> None:
        """Until every client ended (each within its limit and grace); a
        stop signal, or USR1, stops them all (stop) and raises
        fioproc.Stopped."""
        while True:
            now = time.monotonic()
            nxt = [t for c in self.running if not c.poll() for t in (c.due(now),) if t is not None]
            if all(c.poll() for c in self.running):
                self.running = []
                return
            timeout = max(min(nxt) - time.monotonic(), 0) if nxt else 1.0
            info = signal.sigtimedwait(fioproc.TAKEN, min(timeout, 1.0))
            if info is not None and info.si_signo != signal.SIGCHLD:
                self.stop(info.si_signo)
                raise fioproc.Stopped(info.si_signo)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """SIGTERM to every client still running (whatever sig: fio's client
        then stops its server's job), up to fioproc.FIO_GRACE seconds, then
        SIGKILL to what is left; returns once all are reaped. USR1 (the
        sweep's parent died) kills at once."""
        left = [c for c in self.running if not c.poll()]
        if sig != signal.SIGUSR1:
            for c in left:
                _killpg(c.fio.pid, signal.SIGTERM)
            end = time.monotonic() + fioproc.FIO_GRACE
            while any(fioproc.alive(c.fio.pid) for c in left) and time.monotonic() < end:
                info = signal.sigtimedwait(fioproc.TAKEN, 0.1)
                if info is not None and info.si_signo == signal.SIGUSR1:
                    break
            for c in left:
                if fioproc.alive(c.fio.pid):
                    self.warn('fio (process group %d) did not stop on SIGTERM within %g s: killing it'
                              % (c.fio.pid, fioproc.FIO_GRACE))
        for c in self.running:
            c.fio.stop(signal.SIGUSR1)
        self.running = []
