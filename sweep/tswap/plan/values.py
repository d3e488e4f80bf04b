# SPDX-License-Identifier: GPL-2.0-only
"""The command line's and grid files' small values: fio size notation,
whole numbers, lists, times as M:SS, and the refusal that ends the sweep before anything
runs (docs/sweep.md "Options", "Grid files", "Exit codes").

Every rule here is the one the shell sweep had (util.sh), to
the byte: the messages and what is accepted are the sweep's interface."""

from __future__ import annotations

import re
from typing import Optional

# docs/sweep.md "Exit codes"
EXIT_OK, EXIT_THRESHOLD, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3
# --repeat and a grid's repeat: at most REPEAT_MAX passes; --runtime,
# --ramp, --budget and a grid's runtime and ramp: at most SECS_MAX s (a week)
REPEAT_MAX, SECS_MAX = 100, 604800
# the most ranks a point may have (one fio job per handle)
RANKS_MAX = 256

_SIZE = re.compile(r'0*([0-9]{1,16})([kmgt]?)(i?b?)')
_MULT = {'': 1, 'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30, 't': 1 << 40}.get
_LOWER = str.maketrans('ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')


class Refusal(Exception):
    """The sweep stops before anything runs: exit status code, and the
    one line said on stderr after "PROG: " (prog: "" for tswap-sweep;
    usage errors end in " (see --help)": usage())."""

    def __init__(self, code: int, message: str, prog: str = '') -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.prog = prog


def usage(message: str) -> Refusal:
    """A usage error (exit 2), pointing at --help (util.sh usage_error)."""
    return Refusal(EXIT_USAGE, message + ' (see --help)')


def undecodable(s: str) -> bool:
    """True when s holds bytes that are not UTF-8: os.fsdecode's
    surrogateescape code points U+DC80..U+DCFF. tswap's JSON documents
    (sweep.json, meta.json, results.json) keep paths and names as UTF-8
    text (RFC 8259 section 8.1), so such a path cannot be recorded."""
    return any('\udc80' <= c <= '\udcff' for c in s)


def shown(s: str) -> str:
    """s for a message: bytes that are not UTF-8 as \\xNN escapes."""
    return s.encode('utf-8', 'surrogateescape').decode('utf-8', 'backslashreplace')


def size_to_bytes(s: str) -> Optional[int]:
    """fio size notation (binary units: 1m = 1 MiB; case ignored, an
    optional i/b/ib suffix) to bytes; None when it is not a size: more
    than 16 significant digits, or 2^62 bytes or more (util.sh)."""
    m = _SIZE.fullmatch(s.translate(_LOWER))
    if not m:
        return None
    mult = _MULT(m.group(2), 1)
    num = int(m.group(1))
    return num * mult if num <= (1 << 62) // mult else None


def bytes_to_size(n: int) -> str:
    """The shortest exact fio notation of n bytes: 1048576 -> "1m",
    4097 -> "4097" (util.sh bytes_to_size, szname)."""
    for shift, unit in ((30, 'g'), (20, 'm'), (10, 'k')):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return '%d%s' % (n >> shift, unit)
    return str(n)


def fmt_secs(s: int) -> str:
    """Whole seconds as M:SS, or H:MM:SS from an hour (util.sh fmt_secs)."""
    if s >= 3600:
        return '%d:%02d:%02d' % (s // 3600, s % 3600 // 60, s % 60)
    return '%d:%02d' % (s // 60, s % 60)


def is_uint(s: str) -> bool:
    """Decimal digits, at most 9 significant ones (no wrap in bash)."""
    return re.fullmatch(r'0*[0-9]{1,9}', s) is not None


def is_number(s: str) -> bool:
    """Digits with an optional fraction: 2, 2.5 (no sign, no exponent)."""
    return re.fullmatch(r'[0-9]+([.][0-9]+)?', s) is not None


def split_list(s: str) -> tuple[str, ...]:
    """A list option's items: separated by commas and/or blanks, empty
    items dropped; the first line only (util.sh split_into)."""
    return tuple(i for i in re.split('[, ]', s.split('\n')[0]) if i)


def comma_fields(s: str) -> tuple[str, ...]:
    """Paths separated by commas, as bash's `IFS=, read -a` splits them
    (ranks.sh target_list): the first line, empty fields kept but for one
    trailing empty field ("a," is one path, "a,,b" has an empty one)."""
    f = s.split('\n')[0].split(',')
    if f[-1] == '':
        f.pop()
    return tuple(f)


def abspath(path: str, pwd: str) -> str:
    """path made absolute against pwd, symlinks not resolved (util.sh)."""
    return path if path.startswith('/') else pwd + '/' + path
