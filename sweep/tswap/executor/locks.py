# SPDX-License-Identifier: GPL-2.0-only
"""One sweep per run directory, and one per target (the rules of
lock.sh).

RUN/.lock is held with flock(2) on fd 9 for the whole run: the fio
processes of a run on this host inherit it, so a killed sweep's fio still holds it until its point ends; it
names the holder's pid. It is taken before anything else is written in
the run directory, so two sweeps on one directory never interleave: the
second exits 2 with one line naming the holder (lock_busy).

Each target of this host is locked the same way, before the run
directory is made: lock_dir()/blk-MAJ-MIN.lock for a block device (MAJ,
MIN in hex, stat %t-%T), else file-HASH.lock, HASH the first 32 hex
digits of the sha256 of the path with every symlink resolved (readlink
-m: a link to the target, or ./name, is the same target), and an
existing file also ino-DEV-INODE.lock (a hard link is the same file);
the rank files of file targets too. lock_dir is the user's own
(/run/tswap-locks for root, else $XDG_RUNTIME_DIR or /tmp,
tswap-locks-UID, mode 0700); a symlink, or one another user owns, is
refused. A held lock file's lines are the holder's pid and its run
directory (empty until the run is locked). Every lock fd is inheritable
(the bash executor gets their numbers: fd 9, and TARGET_LOCK_FDS[FILE]=FD,
each 10 or above, as bash's `exec {fd}>>` gives them) and goes with the
process on every exit (error, signal, kill -9).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import stat
from typing import Optional

from ..plan.values import EXIT_ERROR, EXIT_USAGE, Refusal
from .target_rules import rank_file

# the run lock's fd, as lock.sh and status.sh lock_fds_close name it
RUN_FD = 9
# the lowest fd of a target lock (bash's `exec {fd}>>`: 10 and above)
TARGET_FD_MIN = 10
DIR_REFUSED = ("cannot make a private directory for the targets' locks (a symlink, or"
               " another user's, is in the way)")


def lock_dir_path(euid: int, runtime_dir: str) -> str:
    """The directory of user euid's target locks: /run/tswap-locks for
    root, else RUNTIME_DIR/tswap-locks-EUID (RUNTIME_DIR: $XDG_RUNTIME_DIR,
    or /tmp when unset or empty) (lock.sh lock_dir)."""
    if euid == 0:
        return '/run/tswap-locks'
    return '%s/tswap-locks-%d' % (runtime_dir or '/tmp', euid)


def lock_name(path: str) -> str:
    """The lock file's name (no directory) of target path: blk-MAJ-MIN.lock
    for a block device (MAJ, MIN in hex, as stat -L -c %t-%T says them),
    else file-HASH.lock, HASH the first 32 hex digits of the sha256 of the
    path with every symlink resolved (readlink -m) (lock.sh
    target_lock_file). OSError when a block device cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISBLK(st.st_mode):
        return 'blk-%x-%x.lock' % (os.major(st.st_rdev), os.minor(st.st_rdev))
    real = os.fsencode(os.path.realpath(path))
    return 'file-%s.lock' % hashlib.sha256(real).hexdigest()[:32]


def holder_pid(head: bytes) -> str:
    """The pid a run's .lock names (its first 32 bytes, digits only:
    lock.sh lock_busy), or "unknown"."""
    pid = ''.join(c for c in head[:32].decode('latin-1') if c.isdigit() and c.isascii())
    return pid or 'unknown'


def _read_line(data: str) -> tuple[str, str, bool]:
    """bash `read -r V`: (V, the rest, whether a newline ended it); V
    without its leading and trailing blanks (IFS)."""
    line, nl, rest = data.partition('\n')
    return line.strip(' \t'), rest, bool(nl)


def note_holder(data: bytes) -> tuple[str, str]:
    """A held target lock's pid and run as lock_take read them: `{ read -r
    pid && read -r run; }` (the run only when a newline ends the pid's
    line)."""
    text = data.replace(b'\0', b'').decode('utf-8', 'surrogateescape')
    pid, rest, ended = _read_line(text)
    run = _read_line(rest)[0] if ended else ''
    return pid, run


def run_dir_empty(names: list[str], lock: Optional[bytes], lock_is_file: bool) -> bool:
    """Whether a run directory whose entries are names (the first one
    found is enough) is empty for a new run (settings.sh out_empty): no
    entry but .lock, and a .lock that is absent, or a regular file (not a
    symlink: lock_is_file) of at most 16 bytes holding at most one line,
    empty or a pid's digits (lock: its bytes; None when it is absent)."""
    if any(n != '.lock' for n in names):
        return False
    if lock is None:
        return True
    if not lock_is_file or len(lock) > 16:
        return False
    text = lock.replace(b'\0', b'').decode('utf-8', 'surrogateescape')
    pid = _read_line(text)[0]
    lines = text.count('\n') + (0 if text.endswith('\n') or not text else 1)
    if lines > 1:
        return False
    return pid == '' or (pid.isdigit() and pid.isascii())


class Locks:
    """The locks this process holds: the run's (fd 9, once lock_run has
    taken it) and the targets' (fds: lock file -> fd). pid: the holder's
    pid written into them (the bash executor's, which is this process
    after its exec); euid and runtime_dir: lock_dir_path's; where: another
    lock directory, run_fd another fd for the run's lock (tests)."""

    def __init__(self, pid: int, euid: int, runtime_dir: str, where: str = '',
                 run_fd: int = RUN_FD) -> None:
        self.pid = pid
        self.euid = euid
        self.runtime_dir = runtime_dir
        self.where = where
        self.run_fd = run_fd
        self.dir = ''
        self.run = ''
        self.fds: dict[str, int] = {}

    def lock_dir(self) -> str:
        """The private directory of the target locks, made 0700 if missing,
        else chmod'ed 0700 once; Refusal (exit 3) when it is a symlink, not
        a directory, or another user's (lock.sh lock_dir)."""
        d = self.where or lock_dir_path(self.euid, self.runtime_dir)
        made = False
        if not os.path.lexists(d):
            try:
                os.mkdir(d, 0o700)
                os.chmod(d, 0o700)
                made = True
            except OSError:
                pass
        try:
            st = os.lstat(d)
        except OSError:
            st = None
        if st is None or not stat.S_ISDIR(st.st_mode) or st.st_uid != self.euid:
            raise Refusal(EXIT_ERROR, DIR_REFUSED)
        if not made and self.dir != d:
            try:
                os.chmod(d, 0o700)
            except OSError:
                raise Refusal(EXIT_ERROR, DIR_REFUSED) from None
        self.dir = d
        return d

    def _note(self, f: str, run: str) -> None:
        """The holder's pid and run into the held lock f, in place
        (lock.sh target_lock_note); best effort."""
        try:
            os.close(os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666))
            os.write(self.fds[f], b'%d\n%s\n' % (self.pid, os.fsencode(run)))
        except OSError:
            pass

    def take(self, f: str, target: str) -> None:
        """Hold lock file f of target on an inheritable fd of 10 or above
        (once held, nothing), or Refusal: exit 2 naming the sweep that
        holds it, 3 when it is a symlink or cannot be opened (lock.sh
        lock_take)."""
        if f in self.fds:
            return
        if os.path.islink(f):
            raise Refusal(EXIT_ERROR, 'refusing the lock file %s: a symbolic link' % f)
        try:
            fd = os.open(f, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        except OSError:
            raise Refusal(EXIT_ERROR, 'cannot open %s (the lock of target %s)' % (f, target)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
            try:
                with open(f, 'rb') as h:
                    pid, run = note_holder(h.read(4096))
            except OSError:
                pid, run = '', ''
            raise Refusal(EXIT_USAGE, 'refusing target %s: in use by another tswap-sweep (pid %s%s,'
                          ' or a fio it started, which finishes its point first); wait for it, or'
                          ' give another --target' % (target, pid or 'unknown',
                                                      ', run ' + run if run else '')) from None
        high = fcntl.fcntl(fd, fcntl.F_DUPFD, TARGET_FD_MIN)
        os.close(fd)
        os.set_inheritable(high, True)
        self.fds[f] = high
        self._note(f, self.run)

    def target(self, path: str) -> None:
        """path's lock, and its inode lock if it is a file (lock.sh
        lock_target)."""
        d = self.lock_dir()
        try:
            name = lock_name(path)
        except OSError:
            raise Refusal(EXIT_ERROR, 'cannot name the lock of target %s' % path) from None
        self.take(d + '/' + name, path)
        self.target_inode(path)

    def target_inode(self, path: str) -> None:
        """The lock of the file path names by its DEV-INODE
        (lock_dir/ino-DEV-INODE.lock: all its hard links); nothing for a
        block device or a path not (yet) a regular file (lock.sh
        lock_target_inode)."""
        try:
            st = os.stat(path)
        except OSError:
            return
        if not stat.S_ISREG(st.st_mode):
            return
        d = self.lock_dir()
        self.take('%s/ino-%d-%d.lock' % (d, st.st_dev, st.st_ino), path)

    def targets(self, targets: tuple[str, ...], kinds: tuple[str, ...],
                slots: list[tuple[int, str]]) -> None:
        """Every target, then every rank file of a file target (slots:
        (rank, handle) of the plan's multi-handle points; rank_file), or
        Refusal (lock.sh lock_targets)."""
        self.lock_dir()
        for t in targets:
            self.target(t)
        for r, h in slots:
            i = r % len(targets)
            kind = kinds[i] if i < len(kinds) else 'file'
            if kind == 'file':
                self.target(rank_file(targets[i], kind, r, h))

    def probe_run(self, run: str) -> None:
        """Refusal (exit 2, lock_busy) when run/.lock is held now; it is
        opened read-only and not created (lock.sh lock_probe)."""
        f = run + '/.lock'
        if os.path.islink(f) or not os.path.isfile(f):
            return
        try:
            fd = os.open(f, os.O_RDONLY)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            self._busy(run)
        os.close(fd)

    def _busy(self, run: str) -> None:
        try:
            with open(run + '/.lock', 'rb') as h:
                head = h.read(32)
        except OSError:
            head = b''
        raise Refusal(EXIT_USAGE, '%s is in use by another tswap-sweep (pid %s, or a fio it started,'
                      ' which finishes its point first)' % (run, holder_pid(head)))

    def lock_run(self, run: str) -> None:
        """Hold run/.lock on fd 9 (once), its line the holder's pid, and
        name run in the target locks; Refusal: exit 2 when it is a symlink
        or held (lock_busy), 3 when it cannot be opened (lock.sh
        lock_run)."""
        if self.run:
            return
        f = run + '/.lock'
        if os.path.islink(f):
            raise Refusal(EXIT_USAGE, 'refusing %s: a symbolic link (the run\'s lock file is never'
                          ' followed)' % f)
        try:
            fd = os.open(f, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        except OSError:
            raise Refusal(EXIT_ERROR, 'cannot open %s' % f) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            self._busy(run)
        if fd != self.run_fd:
            os.dup2(fd, self.run_fd, inheritable=True)
            os.close(fd)
        else:
            os.set_inheritable(fd, True)
        os.close(os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666))
        os.write(self.run_fd, b'%d\n' % self.pid)
        self.run = run
        for lf in self.fds:
            self._note(lf, run)
