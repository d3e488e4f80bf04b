# SPDX-License-Identifier: GPL-2.0-only
"""The targets of a run on this host once they passed the check: their
identity (what each path names), the files the sweep creates and marks
(the scratch mark, an xattr or a sidecar), and the descriptors held and
checked again before every fio (issue 36, item 4). The bash it replaces:
target.sh target_identity, target_ids_keep, target_same,
target_fds_open; scratch.sh scratch_create, scratch_sidecar. The
messages and files are the same.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import stat
import subprocess
from typing import Callable, Optional

from ..plan.values import EXIT_ERROR, EXIT_USAGE, Refusal
from . import target_facts as facts
from .target_rules import SCRATCH_SIDECAR

# the end of an identity that carries the sweep's scratch mark
MARKED = ", the sweep's mark"
_TYPES = ((stat.S_ISDIR, 'directory'), (stat.S_ISFIFO, 'fifo'), (stat.S_ISCHR, 'character special file'),
          (stat.S_ISSOCK, 'socket'), (stat.S_ISLNK, 'symbolic link'))


def identity_of(st: os.stat_result, path: str, mark: bool = True) -> str:
    """target.sh target_identity_of: "block device MAJ:MIN", "file
    DEV:INODE[, born BIRTH][, the sweep's mark]" (the mark only with
    mark), else stat's %F of the type."""
    if stat.S_ISBLK(st.st_mode):
        return 'block device %d:%d' % (os.major(st.st_rdev), os.minor(st.st_rdev))
    if stat.S_ISREG(st.st_mode):
        b = facts.birth(path)
        ident = '%d:%d' % (st.st_dev, st.st_ino)
        s = 'file ' + ident
        if b:
            s += ', born ' + b
            ident += ':' + b
        if mark and facts.scratch_owned(path, ident):
            s += MARKED
        return s
    for test, name in _TYPES:
        if test(st.st_mode):
            return name
    return 'unknown'


def identity(path: str, mark: bool = True) -> str:
    """What path names now (target.sh target_identity); "no file"."""
    try:
        st = os.stat(path)
    except OSError:
        return 'no file'
    return identity_of(st, path, mark)


def _open(path: str) -> Optional[int]:
    try:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


def _fd_path(fd: int) -> str:
    return '/proc/self/fd/%d' % fd


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


class Held:
    """What each path the points use named once the targets were
    prepared (ids), the files and devices held open since (refs), and
    the descriptors opened and checked before one fio (fds)."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        self.warn = warn
        self.ids: dict[str, str] = {}
        self.refs: dict[str, int] = {}
        self.fds: dict[str, int] = {}

    def keep(self, paths: list[str]) -> None:
        """target.sh target_ids_keep: each path's identity, and the file
        or device held open when its descriptor is what the path names
        (a FIFO is never opened)."""
        self.close_refs()
        self.ids = {}
        for p in paths:
            fd = _open(p) if (os.path.isfile(p) or facts.is_block(p)) else None
            held = ''
            ident = None
            if fd is not None:
                try:
                    ident = identity_of(os.stat(p), p)
                    held = identity_of(os.fstat(fd), _fd_path(fd), False)
                except OSError:
                    ident = None
            if ident is None:
                ident, held = identity(p), ''
            self.ids[p] = ident
            if held and held == _unmarked(ident):
                self.refs[p] = fd  # type: ignore[assignment]
            elif fd is not None:
                os.close(fd)

    def _same(self, p: str, fd: int) -> bool:
        """target.sh target_same."""
        ref = self.refs.get(p)
        if ref is None or not _same(p, _fd_path(ref)) or not _same(_fd_path(fd), _fd_path(ref)):
            return False
        was = self.ids[p]
        if not was.startswith('file '):
            return True
        ident = _unmarked(was[5:])
        if ', born ' in ident:
            a, _, b = ident.partition(', born ')
            ident = a + ':' + b
        return facts.scratch_owned(p, ident) == was.endswith(MARKED)

    def open(self) -> bool:
        """target.sh target_fds_open: every kept path opened and checked;
        one that changed is said (warn) and nothing is held: False."""
        self.close()
        for p, was in self.ids.items():
            ref = self.refs.get(p)
            if ref is not None and _same(p, _fd_path(ref)):
                fd = _open(p)
                if fd is not None:
                    if self._same(p, fd):
                        self.fds[p] = fd
                        continue
                    os.close(fd)
            now = identity(p)
            if now == was:
                fd = _open(p)
                if fd is None:
                    now += ', which cannot be opened'
                else:
                    self.fds[p] = fd
                    held = identity(_fd_path(fd), False)
                    if held != _unmarked(was):
                        now = held
            if now != was:
                self.close()
                self.warn('refusing target %s: it changed since the sweep checked it (was %s; now %s):'
                          ' stopped, nothing more is written to it; finished points are kept'
                          % (p, was, now))
                return False
        return True

    def close(self) -> None:
        """target.sh target_fds_close."""
        for fd in self.fds.values():
            os.close(fd)
        self.fds = {}

    def close_refs(self) -> None:
        """target.sh target_refs_close."""
        for fd in self.refs.values():
            os.close(fd)
        self.refs = {}


def _unmarked(s: str) -> str:
    return s[:-len(MARKED)] if s.endswith(MARKED) else s


def scratch_create(path: str, run: str, warn: Callable[[str], None]) -> str:
    """scratch.sh scratch_create: path created (O_EXCL) and marked the
    sweep's (the xattr, else a sidecar); RUN/scratch-target records it.
    Returns its DEV:INODE; Refusal when it cannot be created or a
    sidecar is in the way."""
    parent = facts._dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent, exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError:
        raise Refusal(EXIT_USAGE, 'refusing target %s: it could not be created as a new file (it appeared'
                      ' since the check, or the directory is not writable)' % path) from None
    mark = facts.scratch_mark(path)
    if mark is None:
        raise Refusal(EXIT_ERROR, 'cannot stat %s' % path)
    ident = mark.rsplit(':', 1)[0] if mark.count(':') >= 2 else mark
    if not _setfattr(path, mark):
        if mark.count(':') >= 2:
            if not _sidecar(path, mark):
                os.unlink(path)
                raise Refusal(EXIT_USAGE, 'refusing target %s: %s%s, where the sweep would mark it (the'
                              ' filesystem keeps no %s xattr), exists and is not a tswap mark; move it'
                              ' away, or give another --target' % (path, path, SCRATCH_SIDECAR,
                                                                    facts.SCRATCH_XATTR)) from None
        else:
            warn("%s is not marked as the sweep's scratch file (the filesystem keeps neither the %s xattr"
                 ' nor a birth time): a later run on it needs --destructive' % (path, facts.SCRATCH_XATTR))
    if run:
        with open(run + '/scratch-target', 'w', encoding='utf-8', errors='surrogateescape') as f:
            f.write('%s %s\n' % (ident, path))
    return ident


def _setfattr(path: str, mark: str) -> bool:
    """The mark as the xattr, by setfattr where it is installed (once a
    run, for a file the sweep creates: tests/sweep-safety.bats stands in
    a setfattr that fails for a filesystem without user xattrs)."""
    exe = shutil.which('setfattr')
    if exe is None:
        return False
    try:
        return subprocess.run([exe, '-n', facts.SCRATCH_XATTR, '-v', mark, '--', path],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0
    except OSError:
        return False


def _sidecar(path: str, mark: str) -> bool:
    """scratch.sh scratch_sidecar: mark into path's sidecar (new, or in
    place of an earlier mark); False when something else is there."""
    side = path + SCRATCH_SIDECAR
    if not facts.sidecar_free(path):
        return False
    tmp = '%s.tmp.%d' % (side, os.getpid())
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError:
        return False
    with os.fdopen(fd, 'w') as f:
        f.write(mark + '\n')
    try:
        os.replace(tmp, side)
    except OSError:
        os.unlink(tmp)
        return False
    return True


def allocate(path: str, size: int) -> bool:
    """fallocate -l size, else truncate -s size (target.sh
    prepare_target); False when neither works."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError:
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.fallocate
        fn.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long)
        if fn(fd, 0, 0, size) == 0:
            return True
        try:
            os.ftruncate(fd, size)
        except OSError:
            return False
        return True
    finally:
        os.close(fd)
