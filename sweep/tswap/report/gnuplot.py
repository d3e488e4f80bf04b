# SPDX-License-Identifier: GPL-2.0-only
"""gnuplot script text: strings quoted so that gnuplot runs nothing of
them, titles that fit their PNG, tic lists, the heat maps' palette, and
gnuplot's messages split per plot (tswap.cli.plots draws every plot
of a run in one gnuplot)."""

from __future__ import annotations

import re
from typing import Optional

from ..plan.values import bytes_to_size

# The heat maps' palette: matplotlib's viridis (perceptually uniform,
# readable in grey and by the colour-blind) at 0, 1/8, ... 1; gnuplot 5.4
# has no viridis of its own.
VIRIDIS = ("set palette defined (0 '#440154', 1 '#472c7a', 2 '#3b518b', 3 '#2c718e', "
           "4 '#21908d', 5 '#27ad81', 6 '#5cc863', 7 '#aadc32', 8 '#fde725')")

# The marker gnuplot prints (to stderr) before each plot's script when
# several are drawn by one gnuplot: "@@ NAME".
MARK = b'@@ '

_DIGITS = re.compile('[0-9]+')


def quote(s: str) -> str:
    """s as a gnuplot single-quoted string ('' is a quote): in a
    double-quoted one gnuplot would run `...` as a shell command."""
    return "'" + s.replace("'", "''") + "'"


def title(size: str, text: str) -> str:
    """A plot title that fits its PNG of size "W,H" pixels: the words of
    text's first line (split at spaces) in lines of at most
    (W - 40) / 9.5 characters (the png terminal's default font, arial 12,
    found as DejaVu Sans, takes about 8.7 pixels a character of these
    titles; a longer word has a line of its own), as a gnuplot string
    expression: each line quoted, joined by "\\n"; '' for no words."""
    n = (int(size.split(',', 1)[0]) - 40) * 2 // 19
    lines: list[str] = []
    line = ''
    for word in (w for w in text.split('\n', 1)[0].split(' ') if w):
        if line and len(line) + 1 + len(word) <= n:
            line += ' ' + word
        else:
            if line:
                lines.append(line)
            line = word
    if line:
        lines.append(line)
    return '."\\n".'.join(quote(x) for x in lines) or "''"


def script(png: str, size: str, text: str, lines: list[str]) -> str:
    """A plot's gnuplot script: draws png (a path), size "W,H" pixels,
    titled text (title()), then lines, each newline-terminated."""
    head = ('set terminal png size %s noenhanced' % size, 'set output ' + quote(png),
            'set title ' + title(size, text))
    return ''.join(x + '\n' for x in head + tuple(lines))


def tics(values: list[str], size: bool) -> str:
    """A gnuplot tic list of values (text) at 0, 1, ...: '"1m" 0, "4m" 1';
    size: the values are bytes, labelled in fio's notation (1048576: 1m;
    a value that is not a whole number as it is, "null")."""
    return ', '.join('"%s" %d' % (bytes_to_size(int(v)) if size and _DIGITS.fullmatch(v) else v, i)
                     for i, v in enumerate(values))


def render_args(scripts: list[tuple[str, str]]) -> list[str]:
    """gnuplot's arguments that draw each (NAME, SCRIPT_PATH) in one run,
    each after a reset and a marker line on stderr (split_log)."""
    out: list[str] = []
    for name, path in scripts:
        out += ['-e', "reset; print '@@ %s'" % name, path]
    return out


def split_log(data: bytes) -> tuple[Optional[bytes], dict[str, bytes]]:
    """gnuplot's stderr of a render_args run split per plot, as awk split
    it: (what came before the first marker, None when nothing did; NAME ->
    its messages, b'' for none, for each plot whose marker came, in
    order; a name marked twice has both parts); every line
    newline-terminated."""
    lines = data.split(b'\n')
    if lines[-1] == b'':
        lines.pop()
    start: Optional[list[bytes]] = None
    logs: dict[str, list[bytes]] = {}
    cur = None
    for line in lines:
        if line.startswith(MARK):
            f = line.split()
            cur = logs.setdefault(f[1].decode('utf-8', 'surrogateescape') if len(f) > 1 else '', [])
            continue
        if cur is None:
            start = cur = []
        cur.append(line + b'\n')
    return (None if start is None else b''.join(start)), {n: b''.join(x) for n, x in logs.items()}
