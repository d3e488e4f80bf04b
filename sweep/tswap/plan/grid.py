# SPDX-License-Identifier: GPL-2.0-only
"""Grid files (docs/sweep.md "Grid files"): one "key value..." line per
parameter, '#' comments. List keys (their cartesian product is the plan:
tswap.plan.expand): rw backend tensor iodepth block qd window submit
threads ranks; a checkpoint grid's (tswap.plan.checkpoint): io_buffer_size
io_buffer_double block qd window submit threads. Scalar keys (defaults for options): size runtime ramp
repeat ceiling targets description.

A UTF-8 byte order mark and CRLF line endings are read without them (a
note says so); a repeated key is refused, but description lines are
joined. Keys left out get DeepSpeed's ds_config aio defaults."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable

from .values import (EXIT_USAGE, RANKS_MAX, REPEAT_MAX, SECS_MAX, Refusal, abspath,
                     comma_fields, is_uint, size_to_bytes, split_list)

LIST_KEYS = ('rw', 'backend', 'tensor', 'iodepth', 'block', 'qd', 'window', 'submit',
             'threads', 'ranks', 'io_buffer_size', 'io_buffer_double')
# DeepSpeed's ds_config aio defaults for the list keys a grid leaves out
DEFAULTS = (('rw', ('read', 'write')), ('backend', ('libaio',)), ('tensor', ('64m',)),
            ('iodepth', ('1',)), ('block', ('1m',)), ('qd', ('8',)),
            ('window', ('overlap',)), ('submit', ('block',)), ('threads', ('1',)),
            ('ranks', ('1',)))
_ALL_KEYS = ('rw backend tensor iodepth block qd window submit threads ranks io_buffer_size '
             'io_buffer_double size runtime ramp repeat ceiling targets description')
_ENUMS = (('rw', ('read', 'write', 'readwrite'), 'read, write or readwrite'),
          ('backend', ('libaio', 'io_uring'), 'libaio or io_uring'),
          ('window', ('sequential', 'overlap'), 'sequential or overlap'),
          ('submit', ('single', 'block'), 'single or block'),
          ('io_buffer_double', ('on', 'off'), 'on or off'))
_BOM = '\ufeff'


@dataclass(frozen=True)
class Grid:
    """A grid: its name (the file's, without .grid), the list keys' values
    as written (strings: "16m", "08"), and the scalar keys' ("" when the
    file leaves them out; targets joined by commas)."""
    name: str
    rw: tuple[str, ...] = ()
    backend: tuple[str, ...] = ()
    tensor: tuple[str, ...] = ()
    iodepth: tuple[str, ...] = ()
    block: tuple[str, ...] = ()
    qd: tuple[str, ...] = ()
    window: tuple[str, ...] = ()
    submit: tuple[str, ...] = ()
    threads: tuple[str, ...] = ()
    ranks: tuple[str, ...] = ()
    io_buffer_size: tuple[str, ...] = ()
    io_buffer_double: tuple[str, ...] = ()
    size: str = ''
    runtime: str = ''
    ramp: str = ''
    repeat: str = ''
    desc: str = ''
    ceiling: str = ''
    targets: str = ''


def _bad(where: str, msg: str) -> Refusal:
    return Refusal(EXIT_USAGE, '%s: %s' % (where, msg))


def check_values(key: str, where: str, vals: tuple[str, ...],
                 threads_max: Callable[[], int]) -> None:
    """Refuse (exit 2, naming WHERE: FILE:LINE or the option) a list key
    without values or with a value outside its rule: rw, backend, window
    and submit from their sets (io_buffer_double on or off); tensor, block
    and io_buffer_size sizes above 0; iodepth,
    qd and threads positive integers of at most 9 digits, threads at most
    the engine's tswap_threads limit (threads_max(), asked first: it may
    refuse with exit 3); ranks 1 to RANKS_MAX (grid.sh check_values)."""
    if not vals:
        raise _bad(where, "'%s' needs at least one value" % key)
    tmax = threads_max() if key == 'threads' else 0
    for v in vals:
        for k, ok, words in _ENUMS:
            if key == k and v not in ok:
                raise _bad(where, "%s must be %s, not '%s'" % (key, words, v))
        if key in ('tensor', 'block', 'io_buffer_size'):
            b = size_to_bytes(v)
            if b is None:
                raise _bad(where, "%s: not a size: '%s'" % (key, v))
            if b == 0:
                raise _bad(where, '%s: must not be 0' % key)
        elif key in ('iodepth', 'qd', 'threads'):
            if not is_uint(v) or int(v) < 1:
                raise _bad(where, "%s: not a positive integer: '%s' (1 to 9 digits)" % (key, v))
            if key == 'threads' and int(v) > tmax:
                raise _bad(where, "threads: %s is above %d, the engine's tswap_threads limit"
                           ' (docs/engine.md)' % (v, tmax))
        elif key == 'ranks' and not (is_uint(v) and 1 <= int(v) <= RANKS_MAX):
            raise _bad(where, "ranks: not an integer from 1 to %d: '%s'" % (RANKS_MAX, v))


def targets_check(where: str, targets: str, pwd: str) -> None:
    """A targets line's paths (joined by commas) under --target's rules:
    no empty path, none named twice (grid.sh grid_targets_check)."""
    named = set()
    for t in comma_fields(targets):
        if not t:
            raise _bad(where, "targets: an empty path in the list '%s' (paths are separated"
                       ' by commas or blanks)' % targets)
        t = abspath(t, pwd)
        if t in named:
            raise _bad(where, 'targets: %s is named twice' % t)
        named.add(t)


def _words(line: str) -> list[str]:
    # bash's read -a with the default IFS: blanks, tabs and newlines
    return [w for w in re.split('[ \t\n]+', line) if w]


def _scalar(key: str, vals: list[str], where: str) -> str:
    if key == 'size':
        if len(vals) != 1 or size_to_bytes(vals[0]) is None:
            raise _bad(where, 'size needs one size')
        return vals[0]
    if key == 'ceiling':
        if len(vals) != 1 or vals[0] not in ('on', 'off'):
            raise _bad(where, 'ceiling needs on or off')
        return vals[0]
    if len(vals) != 1 or not is_uint(vals[0]):
        raise _bad(where, '%s needs one integer' % key)
    if key != 'ramp' and int(vals[0]) < 1:
        raise _bad(where, '%s must be at least 1' % key)
    most = REPEAT_MAX if key == 'repeat' else SECS_MAX
    if not re.fullmatch('0*[0-9]{1,6}', vals[0]) or int(vals[0]) > most:
        raise _bad(where, '%s at most %d: %s' % (key, most, vals[0]))
    return vals[0]


def load(path: str, text: str, pwd: str,
         threads_max: Callable[[], int]) -> tuple[Grid, tuple[str, ...]]:
    """The grid of file path (its text, decoded with surrogateescape; NUL
    bytes dropped as bash's read drops them) and the notes it gives (a
    byte order mark, CRLF lines), defaults not yet filled in (with_defaults).
    Refusal (exit 2) naming FILE:LINE for a bad line (grid.sh load_grid)."""
    name = path.rsplit('/', 1)[-1]
    if name.endswith('.grid'):
        name = name[:-len('.grid')]
    g = Grid(name=name)
    notes = []
    first: dict[str, int] = {}
    crlf = False
    lines = text.replace('\0', '').split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    for n, line in enumerate(lines, 1):
        if n == 1 and line.startswith(_BOM):
            line = line[1:]
            notes.append('grid %s starts with a UTF-8 byte order mark: read without it' % path)
        if line.endswith('\r'):
            line = line[:-1]
            crlf = True
        vals = _words(line.split('#', 1)[0])
        if not vals:
            continue
        key, vals = vals[0], vals[1:]
        where = '%s:%d' % (path, n)
        if key in first and key != 'description':
            raise _bad(where, "'%s' repeated (first on line %d): give all its values on one line"
                       % (key, first[key]))
        first[key] = n
        if key in LIST_KEYS:
            check_values(key, where, tuple(vals), threads_max)
            g = replace(g, **{key: tuple(vals)})
        elif key in ('size', 'runtime', 'ramp', 'repeat', 'ceiling'):
            g = replace(g, **{key: _scalar(key, vals, where)})
        elif key == 'targets':
            if not vals:
                raise _bad(where, 'targets needs at least one path')
            g = replace(g, targets=','.join(vals))
            targets_check(where, g.targets, pwd)
        elif key == 'description':
            g = replace(g, desc=(g.desc + ' ' if g.desc else '') + ' '.join(vals))
        else:
            raise _bad(where, "unknown grid key '%s' (%s)" % (key, _ALL_KEYS))
    if crlf:
        notes.append('grid %s has CRLF line endings: read without the carriage returns' % path)
    return g, tuple(notes)


def with_defaults(g: Grid) -> Grid:
    """g with DeepSpeed's ds_config aio defaults for the list keys it
    leaves out (docs/sweep.md "Grid files")."""
    return replace(g, **{k: v for k, v in DEFAULTS if not getattr(g, k)})


def with_options(g: Grid, opts: tuple[tuple[str, str, str], ...],
                 threads_max: Callable[[], int]) -> Grid:
    """g with the list options over its lists: opts holds (key, option,
    text) for --rw, --ranks, --backend, --tensor-size; each text given is
    split (values.split_list) and checked under the key's rule, the
    option named (settings.sh grid_options)."""
    for key, flag, text in opts:
        if text:
            check_values(key, flag, split_list(text), threads_max)
            g = replace(g, **{key: split_list(text)})
    return g
