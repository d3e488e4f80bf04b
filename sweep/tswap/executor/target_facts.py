# SPDX-License-Identifier: GPL-2.0-only
"""What the target rules (target_rules) are decided on, read from the
kernel: os.stat and statx (the birth time), statfs (the filesystem type),
xattrs and the sidecar mark (scratch.sh), /proc/swaps,
/proc/self/mountinfo, /sys/class/block/*/holders, /sys/block/loop*/loop/
backing_file; and from the tools where the kernel gives no file to read:
lsblk (a device's tree of partitions and holders, their mountpoints, as
it names them), losetup -j (a loop device's backing DEV:INODE: a name
deleted since, or seen through another mount), blkid -p (signatures),
and an O_EXCL open by PATH's python3 (as the shell sweep made it: a
python3 that cannot run refuses, tests/sweep-safety.bats)."""

from __future__ import annotations

import ctypes
import errno
import glob
import os
import re
import shutil
import stat
import subprocess
import sys
from typing import Optional

from .target_rules import SCRATCH_SIDECAR, BlockFacts, NewPath, Options, Probe, TargetFacts

SCRATCH_XATTR = 'user.tswap.scratch'

# kernel pseudo-filesystems, by statfs f_type, named as GNU stat -f -c %T
# names them (scratch.sh PSEUDO_FS_TYPES)
PSEUDO_FS = {0x9fa0: 'proc', 0x62656572: 'sysfs', 0x64626720: 'debugfs', 0x74726163: 'tracefs',
             0x73636673: 'securityfs', 0x62656570: 'configfs', 0x27e0eb: 'cgroupfs',
             0x63677270: 'cgroup2fs', 0x1cd1: 'devpts', 0xcafe4a11: 'bpf_fs', 0x6165676c: 'pstorefs',
             0xde5e81e4: 'efivarfs', 0x65735543: 'fusectl', 0x19800202: 'mqueue'}.get

_EXCL = '''import errno, os, sys
try:
    os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL))
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)) + ": " + e.strerror)
    sys.exit(10 if e.errno == errno.EBUSY else 11)'''


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def birth(path: str) -> Optional[str]:
    """The birth time of the file path names (statx btime, "S.NNNNNNNNN"
    as stat -c %.9W prints it), None where the filesystem reports none."""
    buf = ctypes.create_string_buffer(256)
    try:
        fn = _libc().statx
    except AttributeError:
        return None
    # AT_FDCWD, flags 0 (follow symlinks), STATX_BTIME
    if fn(-100, os.fsencode(path), 0, 0x800, buf) != 0:
        return None
    mask = int.from_bytes(buf.raw[0:4], sys.byteorder)
    if not mask & 0x800:
        return None
    sec = int.from_bytes(buf.raw[80:88], sys.byteorder, signed=True)
    nsec = int.from_bytes(buf.raw[88:92], sys.byteorder)
    return '%d.%09d' % (sec, nsec) if sec > 0 else None


def fs_type(path: str) -> Optional[int]:
    """statfs f_type of the filesystem path is on; None when it fails."""
    buf = ctypes.create_string_buffer(256)
    if _libc().statfs(os.fsencode(path), buf) != 0:
        return None
    return ctypes.c_long.from_buffer(buf).value & 0xffffffff


def pseudo_fs(path: str) -> str:
    """The kernel pseudo-filesystem (procfs, sysfs, ...) path, or the
    directory it would be created in, is on; "" if none."""
    p = path if os.path.exists(path) else _dirname(path)
    t = fs_type(p)
    return (PSEUDO_FS(t) or '') if t is not None else ''


def _dirname(p: str) -> str:
    """dirname(1)."""
    s = p.rstrip('/')
    if not s:
        return '/' if p else '.'
    d = s.rsplit('/', 1)[0] if '/' in s else '.'
    return d.rstrip('/') or ('/' if s.startswith('/') else d)


def scratch_mark(path: str) -> Optional[str]:
    """The mark path would carry: DEV:INODE:BIRTH, or DEV:INODE without a
    birth time (scratch.sh scratch_mark)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    b = birth(path)
    return '%d:%d:%s' % (st.st_dev, st.st_ino, b) if b else '%d:%d' % (st.st_dev, st.st_ino)


def scratch_owned(path: str, want: Optional[str] = None) -> bool:
    """path is a file the sweep created: its xattr, or its sidecar (a
    regular file, a mark with a birth time), holds its mark (scratch.sh
    scratch_owned)."""
    want = want or scratch_mark(path)
    if not want:
        return False
    try:
        if os.getxattr(path, SCRATCH_XATTR).decode('utf-8', 'surrogateescape') == want:
            return True
    except OSError:
        pass
    side = path + SCRATCH_SIDECAR
    if want.count(':') < 2 or os.path.islink(side) or not os.path.isfile(side):
        return False
    return _first_line(side) == want


def _first_line(path: str) -> str:
    try:
        with open(path, 'rb') as f:
            return f.readline().decode('utf-8', 'surrogateescape').rstrip('\n')
    except OSError:
        return ''


_SIDE_MARK = re.compile(r'[0-9]+:[0-9]+:[1-9][0-9]*(\.[0-9]+)?')


def sidecar_free(path: str) -> bool:
    """path's sidecar name is free, or holds an earlier sidecar mark (one
    DEV:INODE:BIRTH line: a deleted target's) (scratch.sh
    scratch_sidecar_free)."""
    side = path + SCRATCH_SIDECAR
    if not os.path.lexists(side):
        return True
    if os.path.islink(side) or not os.path.isfile(side):
        return False
    try:
        with open(side, 'rb') as f:
            data = f.read(65)
    except OSError:
        return False
    if len(data) > 64:
        return False
    old = data.decode('utf-8', 'surrogateescape').split('\n')
    return bool(_SIDE_MARK.fullmatch(old[0])) and data.count(b'\n') == 1


def identity(path: str) -> str:
    """What path names now, as target.sh target_identity says it:
    "block device MAJ:MIN", "file DEV:INODE[, born BIRTH][, the sweep's
    mark]", "no file", else its type."""
    try:
        st = os.stat(path)
    except OSError:
        return 'no file'
    if stat.S_ISBLK(st.st_mode):
        return 'block device %d:%d' % (os.major(st.st_rdev), os.minor(st.st_rdev))
    if not stat.S_ISREG(st.st_mode):
        return 'other'
    b = birth(path)
    mark = '%d:%d:%s' % (st.st_dev, st.st_ino, b) if b else '%d:%d' % (st.st_dev, st.st_ino)
    s = 'file %d:%d' % (st.st_dev, st.st_ino)
    if b:
        s += ', born ' + b
    if scratch_owned(path, mark):
        s += ", the sweep's mark"
    return s


def _run(argv: list[str]) -> tuple[int, str]:
    """argv's exit status and its output (stdout and stderr, as 2>&1)."""
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    except OSError:
        return 127, '%s: command not found' % argv[0]
    return r.returncode, r.stdout.decode('utf-8', 'surrogateescape')


def _first(out: str) -> str:
    return out.split('\n', 1)[0]


def _vkey(s: str) -> list:
    return [(0, int(t), '') if t.isdigit() else (1, 0, t) for t in re.split(r'([0-9]+)', s)]


def loops_on(path: str) -> Probe:
    """The loop devices stacked on path (their backing file is it: for a
    block device the same device number, for a file the same DEV:INODE):
    each loop device's sysfs backing_file, its name resolved now, and
    losetup -j (issue 36 item 1); losetup failing is an error."""
    try:
        want = os.stat(path)
    except OSError:
        return Probe()
    hit = set()
    for f in glob.glob('/sys/block/loop*/loop/backing_file'):
        back = _first_line(f)
        if not back:
            continue
        if back.endswith(' (deleted)'):
            back = back[:-len(' (deleted)')]
        try:
            got = os.stat(back)
        except OSError:
            continue
        if stat.S_IFMT(got.st_mode) != stat.S_IFMT(want.st_mode):
            continue
        if stat.S_ISBLK(want.st_mode):
            if got.st_rdev != want.st_rdev:
                continue
        elif (got.st_dev, got.st_ino, got.st_rdev) != (want.st_dev, want.st_ino, want.st_rdev):
            continue
        hit.add('/dev/' + f.split('/')[3])
    rc, out = _run(['losetup', '-n', '-l', '-O', 'NAME', '-j', path])
    if rc != 0:
        return Probe(error='losetup -j failed (exit %d: %s): cannot tell whether a loop device is stacked on it'
                     % (rc, _first(out)))
    hit.update(w for w in out.split() if w.startswith('/dev/'))
    if not hit:
        return Probe()
    names = sorted(hit, key=_vkey)
    if len(names) == 1:
        return Probe('backs loop device ' + names[0])
    return Probe('backs loop devices ' + ' '.join(names))


def _unescape(s: str) -> str:
    return re.sub(r'\\([0-7]{3})', lambda m: chr(int(m.group(1), 8)), s)


def _mounted(real: str) -> tuple[bool, str]:
    """A mount (of its filesystem's root, as findmnt lists a SOURCE
    without [/subdir]) whose source is real; the error if the mount table
    cannot be read."""
    try:
        with open('/proc/self/mountinfo', encoding='utf-8', errors='surrogateescape') as f:
            lines = f.read().split('\n')
    except OSError as e:
        return False, 'cannot read /proc/self/mountinfo (%s): cannot tell whether the device is mounted' % e.strerror
    for line in lines:
        left, _, right = line.partition(' - ')
        a, b = left.split(' '), right.split(' ')
        if len(a) > 3 and len(b) > 1 and a[3] == '/' and _unescape(b[1]) == real:
            return True, ''
    return False, ''


def _swap(real: str) -> bool:
    try:
        with open('/proc/swaps', encoding='utf-8', errors='surrogateescape') as f:
            lines = f.read().split('\n')[1:]
    except OSError:
        return False
    return any(line.split()[:1] == [real] for line in lines)


def _holder(real: str) -> str:
    name = os.path.basename(real)
    for pat in ('/sys/class/block/%s/holders/*', '/sys/class/block/%s/%s*/holders/*'):
        for h in sorted(glob.glob(pat.replace('%s', glob.escape(name)))):
            return os.path.basename(h)
    return ''


def _claimed(real: str) -> Probe:
    """An O_EXCL open of the device fails with EBUSY (a mounted
    filesystem, device-mapper, MD, or a program holds it)."""
    py = shutil.which('python3')
    if not py:
        return Probe(error='python3 is not installed: cannot tell whether the device is claimed (an O_EXCL open)')
    rc, out = _run([py, '-c', _EXCL, real])
    if rc == 0:
        return Probe()
    if rc == 10:
        return Probe('claimed: an O_EXCL open fails with EBUSY (a mounted filesystem, device-mapper, MD, or a'
                     ' program holds it)')
    return Probe(error='an O_EXCL open with python3 failed (exit %d: %s): cannot tell whether the device is claimed'
                 % (rc, _first(out)))


def _signature(dev: str) -> Probe:
    """A filesystem or partition-table signature (blkid -p; exit 2: none);
    any other failure is an error, never "no signature"."""
    rc, out = _run(['blkid', '-p', '-o', 'export', dev])
    if rc == 2:
        return Probe()
    if rc != 0:
        return Probe(error='blkid -p failed (exit %d: %s): cannot tell whether the device holds a filesystem or'
                     ' partition table' % (rc, _first(out)))
    sig = [ln for ln in out.split('\n') if ln.startswith(('TYPE=', 'PTTYPE='))]
    return Probe(' '.join(sig) + ' ') if sig else Probe()


def block_facts(dev: str, o: Options) -> BlockFacts:
    """A block device the sweep writes: the tools it needs, then (with
    --destructive) what uses it. A later check is still read after an
    earlier one found something: the rules take the first."""
    missing = next((t for t in ('blkid', 'lsblk') if not shutil.which(t)), '')
    if missing or not o.destructive:
        return BlockFacts(missing, '', (), False, '', '', False, (), Probe(), Probe())
    real = os.path.realpath(dev)
    rc, out = _run(['lsblk', '-nrpo', 'NAME,MOUNTPOINT', real])
    rows: list[tuple[str, str]] = []
    err = ''
    if rc != 0:
        err = 'lsblk failed (exit %d: %s): cannot tell whether the device is mounted' % (rc, _first(out))
    else:
        for line in out.split('\n'):
            f = line.strip().split(None, 1)
            if f:
                rows.append((f[0], f[1].strip() if len(f) > 1 else ''))
    mounted, merr = _mounted(real)
    names = [n for n, _ in rows] or [real]
    return BlockFacts('', err, tuple(rows), _swap(real), _holder(real), merr, mounted,
                      tuple(loops_on(n) for n in names), _claimed(real), _signature(dev))


def new_path(path: str) -> NewPath:
    """A path that does not exist (symlinks followed)."""
    link_to = None
    loops = False
    if os.path.islink(path):
        try:
            link_to = os.readlink(path)
        except OSError:
            link_to = '?'
        try:
            os.stat(path)
        except OSError as e:
            loops = e.errno == errno.ELOOP
    d = _dirname(path)
    return NewPath(link_to, loops, d, os.path.isdir(d), writable(d))


def writable(path: str) -> bool:
    """path may be written by this process (its effective ids)."""
    return os.access(path, os.W_OK, effective_ids=os.access in os.supports_effective_ids)


def target_facts(path: str, o: Options) -> TargetFacts:
    """What the rules need of path: a block device (BlockFacts only when
    written), anything else that exists, a pseudo-filesystem under it, a
    regular file (its mark; the loop devices on it when it would be
    written or filled), or a new path (its sidecar name)."""
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISBLK(st.st_mode):
        return TargetFacts(path, 'block', block=block_facts(path, o) if o.writes else None)
    if st is not None and not stat.S_ISREG(st.st_mode):
        return TargetFacts(path, 'other')
    pseudo = pseudo_fs(path)
    if st is None:
        return TargetFacts(path, 'none', pseudo, sidecar_free=sidecar_free(path))
    loops = loops_on(path) if (o.writes or st.st_size < o.size_bytes) and not pseudo else Probe()
    return TargetFacts(path, 'file', pseudo, writable(path), st.st_size, scratch_owned(path), loops=loops)


def is_block(path: str) -> bool:
    """path names a block device (symlinks followed; [ -b ])."""
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


def dev_size(path: str) -> Optional[int]:
    """A block device's size in bytes (blockdev --getsize64), None when
    it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    except OSError:
        return None
    finally:
        os.close(fd)
