# SPDX-License-Identifier: GPL-2.0-only
"""What tswap-sweep reads of this host before anything runs: where its
files are (a checkout or PREFIX/share/tswap), the built-in grids, the
engine's limits (fio --enghelp), fs.aio-max-nr, what a target path names,
and whether the directories the options name can be used (docs/sweep.md
"Options", "Run directory"). Reading only: nothing here writes."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import time
from dataclasses import dataclass
from typing import Optional

from .. import jqjson
from ..early import checkout_root
from ..executor.target_facts import writable
from ..plan.values import EXIT_ERROR, EXIT_USAGE, Refusal, abspath, usage


@dataclass(frozen=True)
class Home:
    """Where the sweep runs from: script_dir, the entry's directory
    (symlinks resolved); sweep_home, its modules (sweep/ or
    PREFIX/share/tswap); root, the checkout ("" when installed); pwd, the
    working directory as the shell names it (its $PWD)."""
    script_dir: str
    sweep_home: str
    root: str
    pwd: str


def home(script_dir: str, sweep_home: str) -> Home:
    """The Home of an entry in script_dir: root when script_dir/../Makefile
    and ../engine exist; pwd from $PWD when it names the working directory
    (bash's rule), else the physical one."""
    root = checkout_root(script_dir)
    pwd = os.environ.get('PWD', '')
    try:
        if not (pwd.startswith('/') and os.path.samefile(pwd, '.')):
            pwd = os.getcwd()
    except OSError:
        # a working directory removed: bash keeps its $PWD
        pwd = pwd or '.'
    return Home(script_dir, sweep_home, root, pwd)


def grids_dir(h: Home) -> Optional[str]:
    """The built-in grids' directory: sweep/grids, or PREFIX/share/tswap/grids."""
    for d in (h.script_dir + '/grids', h.script_dir + '/../share/tswap/grids'):
        if os.path.isdir(d):
            return d
    return None


def grid_names(h: Home) -> tuple[str, ...]:
    """The built-in grids' names, in the shell's glob order (C collation)."""
    d = grids_dir(h)
    if d is None:
        return ()
    names = sorted(os.fsencode(f) for f in os.listdir(d)
                   if f.endswith(".grid") and not f.startswith("."))
    return tuple(os.fsdecode(f)[:-5] for f in names if os.path.isfile(d + '/' + os.fsdecode(f)))


# a grid file's most bytes: the largest built-in grid is under 1 KiB
GRID_BYTES_MAX = 1 << 20


def _grid_file_ok(path: str) -> None:
    """Refuse (exit 2) a grid path that is not a readable regular file of
    at most GRID_BYTES_MAX bytes, saying what it is: a FIFO or a device
    is never opened (a FIFO would block, /dev/zero never ends)."""
    if os.path.isdir(path):
        raise usage('--grid %s: a directory, not a grid file' % path)
    try:
        st = os.stat(path)
    except OSError as e:
        if os.path.islink(path):
            raise usage('--grid %s: a symbolic link that does not resolve (%s)'
                        % (path, e.strerror)) from None
        raise usage('grid file not found: %s' % path) from None
    if not stat.S_ISREG(st.st_mode):
        raise usage('--grid %s: not a regular file (a %s), not a grid file' % (path, _kind(path)))
    if st.st_size > GRID_BYTES_MAX:
        raise usage('--grid %s: %d bytes, more than a grid file can have (%d)'
                    % (path, st.st_size, GRID_BYTES_MAX))
    if not os.access(path, os.R_OK):
        raise usage('--grid %s: not readable (no permission)' % path)


def grid_file(h: Home, g: str) -> str:
    """The grid file of --grid G: a path (it has a '/', ends in .grid, or
    is a file here), else a built-in grid's name (grid.sh grid_file_for)."""
    if '/' in g or g.endswith('.grid') or os.path.isfile(g):
        _grid_file_ok(g)
        return abspath(g, h.pwd)
    d = grids_dir(h)
    if d is None:
        raise Refusal(EXIT_ERROR, 'cannot find the built-in grids (sweep/grids/ or'
                      ' PREFIX/share/tswap/grids/)')
    if not os.path.isfile('%s/%s.grid' % (d, g)):
        if os.path.isdir(g):
            _grid_file_ok(g)
        names = ''.join(n + ' ' for n in grid_names(h))
        raise usage("unknown grid '%s' (built in: %s)" % (g, names))
    return '%s/%s.grid' % (d, g)


def read_text(path: str, most: int = -1) -> str:
    """A file's text as the shell reads it (bytes kept: surrogateescape);
    its first most bytes when most >= 0."""
    with open(path, 'rb') as f:
        return f.read(most).decode('utf-8', 'surrogateescape')


def default_engine(h: Home) -> str:
    """$TSWAP_ENGINE, build/tswap.so in a checkout, or PREFIX/lib/fio/tswap.so."""
    if os.environ.get('TSWAP_ENGINE'):
        return os.environ['TSWAP_ENGINE']
    if h.root:
        return h.root + '/build/tswap.so'
    return installed_engine(h)


def installed_engine(h: Home) -> str:
    """PREFIX/lib/fio/tswap.so of this installation."""
    return os.path.normpath(h.script_dir + '/..') + '/lib/fio/tswap.so'


def fleet_default_engine(h: Home) -> str:
    """The engine's path on fleet hosts: make install's, or this installation's."""
    return '/usr/local/lib/fio/tswap.so' if h.root else installed_engine(h)


def default_target(h: Home) -> str:
    """build/scratch/tswap.swap in a checkout, else ./tswap-scratch.swap."""
    return h.root + '/build/scratch/tswap.swap' if h.root else h.pwd + '/tswap-scratch.swap'


def engine_problem(engine: str) -> str:
    """Why fio could not load engine as an external ioengine ("" when it
    may: absent, left to the run's own check, or an ELF shared object:
    e_ident "\\x7fELF", e_type ET_DYN, which dlopen takes; fio ioengines.c
    dlopen_ioengine). Reads 18 bytes; starts nothing."""
    if not os.path.exists(engine):
        return ''
    if not os.path.isfile(engine):
        return 'not a file'
    try:
        with open(engine, 'rb') as f:
            head = f.read(18)
    except OSError as e:
        return 'cannot be read (%s)' % (e.strerror or e)
    if len(head) < 18 or head[:4] != b'\x7fELF':
        return 'not an ELF shared object (build the engine with make)'
    order = 'little' if head[5] == 1 else 'big'
    if int.from_bytes(head[16:18], order) != 3:
        return 'an ELF file but not a shared object (build the engine with make)'
    return ''


def engine_max(h: Home, engine: str, opt: str, backend: str = '') -> int:
    """The largest value the engine takes for opt (on backend only), from
    the range its fio --enghelp text gives: "(MIN..MAX" for the option,
    "BACKEND MIN..MAX" for a backend's own (engine/options.c). Refusal
    (exit 3) when fio cannot tell (grid.sh engine_max), or is not
    installed (need_tools' line, not a hint at the engine)."""
    need_tools('fio')
    so = engine if os.path.isfile(engine) else default_engine(h)
    try:
        help_text = subprocess.run(['fio', '--enghelp=' + so], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        help_text = b''
    be = backend + ' ' if backend else ''
    rx = re.compile(r'[ \t\n\r\f\v]*%s[ \t\n\r\f\v]*:.*[(;] ?%s[0-9]+\.\.([0-9]+)[;)]'
                    % (re.escape(opt), re.escape(be)))
    for line in help_text.decode('utf-8', 'surrogateescape').split('\n'):
        m = rx.match(line)
        if m:
            return int(m.group(1))
    raise Refusal(EXIT_ERROR, 'cannot read the %srange of %s from fio --enghelp=%s (build the'
                  ' engine with make, or pass --engine)' % (be, opt, so))


def aio_max_nr() -> str:
    """fs.aio-max-nr's text ("" when unreadable)."""
    try:
        with open('/proc/sys/fs/aio-max-nr') as f:
            return f.readline().rstrip('\n')
    except OSError:
        return ''


def target_key(path: str) -> str:
    """What path names, to find a target named twice: "block MAJ:MIN",
    "file DEV:INODE" (an existing file), else "path P" (symlinks
    resolved: a new file) (ranks.sh target_key)."""
    try:
        st = os.stat(path)
        if stat.S_ISBLK(st.st_mode):
            return 'block %d:%d' % (os.major(st.st_rdev), os.minor(st.st_rdev))
        if stat.S_ISREG(st.st_mode):
            return 'file %d:%d' % (st.st_dev, st.st_ino)
    except OSError:
        pass
    return 'path ' + os.path.realpath(path)


def unwritable_why(path: str) -> str:
    """Why the existing path cannot be written, as the kernel would say:
    "a read-only file system" (EROFS) or "no permission" (EACCES)."""
    try:
        ro = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        ro = False
    return 'a read-only file system' if ro else 'no permission'


_KINDS = ((stat.S_ISCHR, 'character special file'), (stat.S_ISBLK, 'block special file'),
          (stat.S_ISFIFO, 'fifo'), (stat.S_ISSOCK, 'socket'))


def _kind(path: str) -> str:
    st = os.stat(path)
    if stat.S_ISREG(st.st_mode):
        return 'regular empty file' if st.st_size == 0 else 'regular file'
    return next((name for test, name in _KINDS if test(st.st_mode)), 'weird file')


def dir_unmakeable(h: Home, d: str) -> Optional[str]:
    """Why d can neither be used as a directory nor made by mkdir -p (one
    phrase), or None when it can (paths.sh dir_makeable)."""
    if os.path.lexists(d):
        if not os.path.isdir(d):
            if os.path.islink(d) and not os.path.exists(d):
                return 'not a directory (a symbolic link that does not resolve)'
            return 'not a directory (a %s)' % _kind(d)
        return None if writable(d) else 'not writable (%s)' % unwritable_why(d)
    up = abspath(d, h.pwd)
    while not os.path.lexists(up):
        up = os.path.dirname(up) or '/'
    if not os.path.isdir(up):
        return 'cannot be made: %s is not a directory' % up
    if not writable(up):
        return 'cannot be made: %s is not writable (%s)' % (up, unwritable_why(up))
    return None


def _aggregate_ok(path: str) -> bool:
    try:
        doc = jqjson.loads(read_text(path))
    except (OSError, ValueError):
        return False
    if not isinstance(doc, dict):
        return False
    ceiling = doc.get('ceiling')
    # jq's (.ceiling // {}): null and false fall through
    return (isinstance(doc.get('points'), list) and all(isinstance(p, dict) for p in doc['points'])
            and (ceiling is None or ceiling is False or isinstance(ceiling, dict)))


def paths_check(h: Home, compare: str, emit_dir: str, resume: str, dry_run: bool) -> None:
    """The directories the options name, before anything runs: --compare a
    finished run, --emit-jobs one it can write or make, --resume one it can
    write (not for a dry run) (args.sh paths_check)."""
    if compare:
        d = abspath(compare, h.pwd)
        what = '(not a finished tswap-sweep run)'
        if not os.path.exists(d):
            raise Refusal(EXIT_USAGE, '--compare: %s does not exist %s' % (d, what))
        if not os.path.isdir(d):
            raise Refusal(EXIT_USAGE, '--compare: %s is not a directory %s' % (d, what))
        if not os.path.isfile(d + '/aggregate.json'):
            raise Refusal(EXIT_USAGE, '--compare: %s has no aggregate.json %s' % (d, what))
        if not _aggregate_ok(d + '/aggregate.json'):
            raise Refusal(EXIT_USAGE, '--compare: %s/aggregate.json is not a tswap-sweep'
                          ' aggregate.json (not JSON, or no points array): damaged?' % d)
    if emit_dir:
        why = dir_unmakeable(h, emit_dir)
        if why:
            raise Refusal(EXIT_USAGE, '--emit-jobs %s: %s; it names the directory the job files'
                          ' GRID-read.fio and GRID-write.fio go into' % (emit_dir, why))
    if resume and not dry_run and os.path.isdir(resume) and not writable(resume):
        d = abspath(resume, h.pwd)
        raise Refusal(EXIT_USAGE, '--resume %s: the run directory is not writable (%s); the sweep'
                      ' writes its lock, points and outputs there' % (d, unwritable_why(d)))


def need_tools(*tools: str) -> None:
    """Refuse (exit 3) when a tool the run needs is not on PATH."""
    for t in tools:
        if shutil.which(t) is None:
            raise Refusal(EXIT_ERROR, '%s is not installed (make deps)' % t)


def version_text(h: Home, prog: str, engine: str) -> str:
    """--version's text: the release (the Makefile's TSWAP_VERSION and git
    describe in a checkout, PREFIX/share/tswap/VERSION installed), the
    engine's path and fio's version (meta.sh print_version)."""
    v, c = 'unknown', ''
    if h.root:
        m = re.search(r'^TSWAP_VERSION[ \t]*:=[ \t]*(.*)$', read_text(h.root + '/Makefile'), re.M)
        v = m.group(1) if m else ''
        try:
            c = subprocess.run(['git', '-C', h.root, 'describe', '--always', '--dirty', '--tags'],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               check=True).stdout.decode().strip()
        except (OSError, subprocess.CalledProcessError):
            c = ''
    elif os.path.isfile(h.sweep_home + '/VERSION'):
        v = read_text(h.sweep_home + '/VERSION').rstrip('\n')
    try:
        fio = subprocess.run(['fio', '--version'], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, check=True).stdout.decode().rstrip('\n')
    except (OSError, subprocess.CalledProcessError):
        fio = 'not installed'
    engine = engine or default_engine(h)
    if not engine:
        eng = 'engine: none found'
    elif os.path.isfile(engine):
        eng = ('engine: %s (built with this tswap version; its stats JSON says tswap_version)'
               % engine)
    else:
        eng = 'engine: %s (not built)' % engine
    return '%s (tswap) %s%s\n%s\nfio: %s\n' % (prog, v or 'unknown',
                                              ' (commit %s)' % c if c else '', eng, fio)


def now() -> str:
    """The wall clock as bash's $EPOCHREALTIME (the budget's clock)."""
    return '%.6f' % time.time()
