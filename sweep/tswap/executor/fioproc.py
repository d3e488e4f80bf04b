# SPDX-License-Identifier: GPL-2.0-only
"""The fio a point runs, and its process control (issue 36, item 3;
docs/sweep.md "Stopping"), in the point's own process:

- fio runs in its own session and process group (start_new_session),
  cwd the point's directory, stdin /dev/null, with TSWAP_FIO_GUARD=TAG in
  its environment only, and PR_SET_PDEATHSIG SIGKILL: it dies with the
  process that started it, SIGKILL included.
- fio's job processes call setsid() (fio backend.c, thread_main): they
  leave fio's group and, once fio is killed, are re-parented away from it;
  PR_SET_PDEATHSIG is cleared across fork and never reaches them. The tag
  in /proc/PID/environ (which they inherit from fio) finds them.
- The process that runs fio keeps INT, TERM, HUP, USR1 and CHLD blocked
  and takes them with sigtimedwait (no handler, no race with a signal
  that comes as fio starts): CHLD is fio's exit, INT/TERM/HUP a stop (the
  signal forwarded to fio's group, FIO_GRACE seconds, then SIGKILL to the
  group and every tagged process), USR1 its own parent's death (its
  PR_SET_PDEATHSIG: fio, the group and the tagged processes are SIGKILLed
  at once).

The messages are fioproc.sh's, as the sweep gave them before.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

# seconds from the forwarded signal to SIGKILL (issue 36: at most 5, well
# inside the 10 s of a caller's `timeout -k 10`)
FIO_GRACE = 5
# linux/prctl.h
PR_SET_PDEATHSIG = 1
# the signals the process that runs fio takes with sigtimedwait
STOPS = frozenset((signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
TAKEN = STOPS | {signal.SIGUSR1, signal.SIGCHLD}


def _prctl() -> Callable[..., int]:
    return ctypes.CDLL(None, use_errno=True).prctl


def set_pdeathsig(sig: int, prctl: Optional[Callable[..., int]] = None) -> None:
    """prctl(PR_SET_PDEATHSIG, sig) for the calling thread (the signal it
    gets when its parent thread ends); OSError when the kernel refuses
    it. prctl: libc's, looked up beforehand (a child between fork and
    exec)."""
    if (prctl or _prctl())(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def new_tag() -> str:
    """A tag no other fio of this host carries: PID.MICROSECONDS.RANDOM
    (fioproc.sh fio_new_tag's shape)."""
    return '%d.%d.%d' % (os.getpid(), time.time_ns() // 1000, int.from_bytes(os.urandom(4), 'little'))


def tagged(tag: str) -> list[int]:
    """The pids whose environment holds TSWAP_FIO_GUARD=tag, read from
    /proc directly (a zombie's environment reads empty; a process that
    ends while this reads is skipped)."""
    want = ('TSWAP_FIO_GUARD=' + tag).encode()
    return _tagged_by(lambda v: v == want)


def _tagged_by(match: Callable[[bytes], bool]) -> list[int]:
    """The pids with an environment variable ("NAME=value") that match
    accepts."""
    out = []
    for p in os.listdir('/proc'):
        if not p.isdigit():
            continue
        try:
            with open('/proc/%s/environ' % p, 'rb') as f:
                if any(match(v) for v in f.read().split(b'\0')):
                    out.append(int(p))
        except OSError:
            pass
    return out


def _start_time(pid: int) -> Optional[bytes]:
    """pid's start time (/proc/PID/stat field 22, after the command name,
    which ends at the last ')'), None when it is gone or a zombie: with it
    a pid that ends and is reused is not the same process."""
    try:
        with open('/proc/%d/stat' % pid, 'rb') as f:
            st = f.read().rsplit(b')', 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if len(st) < 20 or st[0] == b'Z' else st[19]


def alive(pid: int) -> bool:
    """pid exists and is not a zombie."""
    return _start_time(pid) is not None


def _kill(pid: int, sig: int, group: bool = False) -> None:
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except OSError:
        pass


def reap_tagged(tag: str, warn: Callable[[str], None], pause: float = 0.05) -> None:
    """SIGKILL the tagged processes until none is left (one look when
    there is none, the usual case); the warning of fioproc.sh
    fio_reap_tagged after 200 rounds (10 s). A killed process counts as
    left until it is a zombie or gone (its start time, so a reused pid is
    not waited for): its environment reads empty as soon as it releases
    its memory, before it has closed its files."""
    i = 0
    killed: dict[int, Optional[bytes]] = {}
    while True:
        for p in tagged(tag):
            killed.setdefault(p, _start_time(p))
            _kill(p, signal.SIGKILL)
        killed = {p: t for p, t in killed.items() if t is not None and _start_time(p) == t}
        if not killed and not tagged(tag):
            return
        if i == 200:
            warn('processes of fio (TSWAP_FIO_GUARD=%s) still not gone 10 s after SIGKILL: waiting for them' % tag)
        i += 1
        time.sleep(pause)


def block_signals() -> None:
    """Block TAKEN in the calling (main) thread: they wait for
    sigtimedwait (Fio.wait)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, TAKEN)


def pending_stop() -> Optional[int]:
    """A stop signal (INT, TERM, HUP) or USR1 already pending, taken; None
    when there is none."""
    for s in sorted(signal.sigpending() & (STOPS | {signal.SIGUSR1})):
        if signal.sigtimedwait({s}, 0) is not None:
            return s
    return None


def die_of(sig: int) -> None:
    """End this process by sig, as its default action does (the caller's
    wait sees 128 + sig)."""
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
    # not reached for INT, TERM, HUP, USR1
    os._exit(128 + sig)


@dataclass(frozen=True)
class Tick:
    """A status tick while fio runs: seconds since fio started (int)."""
    elapsed: int


class Stopped(Exception):
    """fio was stopped by sig (a stop signal, or USR1: the parent died)."""

    def __init__(self, sig: int) -> None:
        super().__init__(sig)
        self.sig = sig


class Fio:
    """One fio process (argv) in its own session, tagged, dying with this
    process; the caller has blocked TAKEN (block_signals)."""

    def __init__(self, argv: Sequence[str], cwd: str, env: dict, stdout: int, stderr: int,
                 pass_fds: Sequence[int] = (), warn: Callable[[str], None] = print,
                 grace: float = FIO_GRACE) -> None:
        self.tag = new_tag()
        self.warn = warn
        self.grace = grace
        parent = os.getpid()
        env = dict(env, TSWAP_FIO_GUARD=self.tag)
        prctl = _prctl()

        def child() -> None:
            # fio starts with no signal blocked, and dies with us; a
            # parent already gone (the race) starts nothing
            signal.pthread_sigmask(signal.SIG_SETMASK, ())
            set_pdeathsig(signal.SIGKILL, prctl)
            if os.getppid() != parent:
                os._exit(125)

        self.proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=stdout,
                                     stderr=stderr, pass_fds=tuple(pass_fds), start_new_session=True,
                                     preexec_fn=child)
        self.pid = self.proc.pid
        self.t0 = time.monotonic()

    def wait(self, every: float = 0, tick: Optional[Callable[[Tick], None]] = None) -> int:
        """fio's exit status as bash's wait gives it (128 + N when a
        signal N ended it); tick(Tick) every `every` seconds while it runs
        (every 0: none). A stop signal or USR1 stops fio (stop) and raises
        Stopped."""
        n = 1
        while True:
            rc = self.proc.poll()
            if rc is not None:
                return 128 - rc if rc < 0 else rc
            timeout = None
            if every > 0:
                timeout = max(self.t0 + n * every - time.monotonic(), 0)
            info = signal.sigtimedwait(TAKEN, timeout) if timeout is not None else signal.sigwaitinfo(TAKEN)
            if info is None:
                if self.proc.poll() is None and tick is not None:
                    tick(Tick(round(time.monotonic() - self.t0)))
                n += 1
            elif info.si_signo in STOPS or info.si_signo == signal.SIGUSR1:
                self.stop(info.si_signo)
                raise Stopped(info.si_signo)

    def stop(self, sig: int) -> None:
        """fioproc.sh fio_stop: sig to fio's group, up to the grace for fio
        and the tagged processes to end, then SIGKILL to the group and
        every tagged process; returns once fio is reaped and no tagged
        process is left. USR1 (this process's parent died: nothing waits
        for a grace) kills at once. Further stop signals are taken and
        ignored meanwhile; a USR1 cuts the grace short."""
        pid = self.pid
        if sig != signal.SIGUSR1:
            _kill(pid, sig, group=True)
            end = time.monotonic() + self.grace
            while alive(pid) or tagged(self.tag):
                left = end - time.monotonic()
                if left <= 0:
                    break
                info = signal.sigtimedwait(TAKEN, min(left, 0.1))
                if info is not None and info.si_signo == signal.SIGUSR1:
                    break
            if alive(pid) or tagged(self.tag):
                self.warn('fio (process group %d) did not stop on SIG%s within %g s: killing it'
                          % (pid, signal.Signals(sig).name[3:], self.grace))
        # fio gone or not: nothing of the group or the tag is left running
        # (fio, the group's leader, is reaped last: until then no new
        # process can get its pid)
        _kill(pid, signal.SIGKILL, group=True)
        reap_tagged(self.tag, self.warn)
        self.proc.wait()

    def leftovers(self) -> bool:
        """After fio exited by itself: its job processes still running are
        killed; True when there were any (fioproc.sh fio_guard)."""
        if not tagged(self.tag):
            return False
        reap_tagged(self.tag, self.warn)
        return True


def guard(prefix: str) -> int:
    """A guard for the fios of this process (issue 36, item 3): a fork of
    it (no new program) in its own session, with nothing of this
    process's open but /dev/null, that waits for this process to end
    (PR_SET_PDEATHSIG SIGUSR1, however it ends: SIGKILL too) and then
    SIGKILLs every process tagged TSWAP_FIO_GUARD=PREFIX...: the job
    processes of a fio that outlived it (fio itself dies with it). Its
    pid; the caller never waits for it."""
    parent = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, TAKEN)
        os.setsid()
        os.chdir('/')
        set_pdeathsig(signal.SIGUSR1)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, os.sysconf('SC_OPEN_MAX') if os.sysconf('SC_OPEN_MAX') < 65536 else 65536)
        if os.getppid() == parent:
            while signal.sigwaitinfo({signal.SIGUSR1}).si_signo != signal.SIGUSR1:
                pass
        want = ('TSWAP_FIO_GUARD=' + prefix).encode()
        for _ in range(200):
            ps = [p for p in _tagged_by(lambda v: v.startswith(want)) if p != os.getpid()]
            if not ps:
                break
            for p in ps:
                _kill(p, signal.SIGKILL)
            time.sleep(0.05)
    finally:
        os._exit(0)
