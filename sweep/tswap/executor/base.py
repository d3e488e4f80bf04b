# SPDX-License-Identifier: GPL-2.0-only
"""What both executors share (tswap.executor.local, tswap.executor.fleet):
the sweep's constants (state.sh's), the signals that stop a run
(Interrupted, once handle_signals is in; a second signal does not cut
the clean-up short), a point's progress label, the sizes and times as
the progress lines say them (M:SS: tswap.plan.values fmt_secs), the run
directory's free space, the writes of the progress stream, a file's
bytes (read_bytes) and the executors' messages (Messages). The bash it
replaces: state.sh, util.sh say, warn, warn_once, pipeline.sh
point_label, space.sh run_dir_free."""

from __future__ import annotations

import os
import shutil
import signal
from types import MappingProxyType
from typing import Optional

from ..plan.values import bytes_to_size

PROG = 'tswap-sweep'
# state.sh's constants
SS_CRIT, SS_DUR = 'bw_slope:2%', 5
BWLOG_MSEC, DROP_PCT, BWLOG_MIN_SAMPLES = '250', '20', '8'
STATUS_EVERY = 10
RUN_SPACE_MIN = 1 << 20
SIGNALS = MappingProxyType({signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129})


class Interrupted(BaseException):
    """A stop signal: its number; the run cleans up and exits 128 + it."""

    def __init__(self, sig: int) -> None:
        super().__init__(sig)
        self.sig = sig


class Exit(BaseException):
    """The run stops with this status; its message (if any) was said."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _on_signal(sig: int, _frame: object) -> None:
    ignore_signals()
    raise Interrupted(sig)


def ignore_signals() -> None:
    """trap '' INT TERM HUP."""
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)


def handle_signals() -> None:
    """INT, TERM and HUP raise Interrupted from here on (run_all's traps)."""
    for s in SIGNALS:
        signal.signal(s, _on_signal)


def q(s: str) -> str:
    """bash's printf %q."""
    from .point import bash_q
    return bash_q(s)


def point_label(line: str) -> str:
    """pipeline.sh point_label: a point's progress label."""
    f = line.split('\t')
    f += [''] * (12 - len(f))
    _, kind, rw, be, t, b, qd, s, w, p, d, n = f[:12]
    tn = bytes_to_size(int(t))
    if kind == 'ceiling':
        label = '%-5s ceiling (fio libaio bs=%s iodepth=%s%s)' % (
            rw, tn, qd, ' over %s jobs' % p if int(p or 0) > 1 else '')
    elif kind == 'checkpoint':
        label = 'checkpoint io_buffer=%s %s b=%s q=%s %s/%s p=%s' % (
            tn, 'double' if int(d or 0) == 2 else 'single', bytes_to_size(int(b)), qd, s, w, p)
    else:
        label = '%-5s %-8s t=%s b=%s q=%s %s/%s p=%s d=%s' % (rw, be, tn, bytes_to_size(int(b)), qd, s, w, p, d)
    return label if (n or '1') == '1' else '%s n=%s' % (label, n)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.unlink(path)


def run_dir_free(run: str) -> Optional[int]:
    """space.sh run_dir_free: bytes available on run's filesystem."""
    try:
        st = os.statvfs(run)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def wall_text(ns: int) -> str:
    ms = (ns // 1000 + 500) // 1000
    return '%d.%03d' % (ms // 1000, ms % 1000)


def status_text(label: str, el: int, total: Optional[int]) -> str:
    """status.sh: the status line of a running point."""
    if total is None:
        return '    %s: %d s, --io-size: no estimate\n' % (label, el)
    if el <= total:
        return '    %s: %d s of %d s, %d s left\n' % (label, el, total, total - el)
    return '    %s: %d s of %d s, winding down\n' % (label, el, total)


def read_bytes(path: str, empty_on: type[OSError] = FileNotFoundError) -> bytes:
    """path's bytes; b'' when opening or reading it raises empty_on: by
    default when it does not exist, with OSError when it cannot be read
    at all (a directory, EACCES, EIO)."""
    try:
        with open(path, 'rb') as f:
            return f.read()
    except empty_on:
        return b''


def _lines(path: str) -> list[str]:
    try:
        with open(path, encoding='utf-8', errors='surrogateescape') as f:
            return f.read().splitlines()
    except OSError:
        return []


def _write(fd: int, text: str) -> None:
    data = text.encode('utf-8', 'surrogateescape')
    try:
        while data:
            n = os.write(fd, data)
            data = data[n:]
    except OSError:
        pass


class Messages:
    """An executor's messages (util.sh say, warn, warn_once): say on its
    progress stream (the fd progress), warn on stderr as "tswap-sweep:
    MSG", warn_once each message once (warned: those said so far)."""
    progress: int
    warned: set[str]

    def say(self, msg: str) -> None:
        _write(self.progress, msg + '\n')

    def warn(self, msg: str) -> None:
        _write(2, '%s: %s\n' % (PROG, msg))

    def warn_once(self, msg: str) -> None:
        if msg not in self.warned:
            self.warned.add(msg)
            self.warn(msg)
