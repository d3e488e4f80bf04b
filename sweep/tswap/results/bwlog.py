# SPDX-License-Identifier: GPL-2.0-only
"""fio's bandwidth logs: GB/s over time and the "drops during the run" check
(docs/sweep.md "Bandwidth over time"; bwlog.sh).

A log line is "msec, KiB/s, direction, bs, offset" (fio HOWTO "Log File
Formats"), one per log_avg_msec (ms) of the measured run; a point of
several handles has one log per handle, summed per interval.
"""

from __future__ import annotations

import math
import re
from typing import Optional

from .. import jqjson

_SPLIT = re.compile(', *')
_DIGITS = re.compile('[0-9]+')


def read_lines(files: list[str]) -> list[tuple[str, str]]:
    """The lines of files as (line, file) in order: the files' bytes as one
    stream, as jq -R reads them (a last line without its newline runs on
    into the next file's first; file: where the line ends)."""
    out: list[tuple[str, str]] = []
    part = b''
    name = ''
    for name in files:
        with open(name, 'rb') as f:
            data = part + f.read()
        *whole, part = data.split(b'\n')
        out += [(x.decode('utf-8', 'replace'), name) for x in whole]
    if part:
        out.append((part.decode('utf-8', 'replace'), name))
    return out


def intervals(lines: list[str], ms: float) -> list[tuple[str, str]]:
    """[(SECONDS, GB/s)] as text (3 and 6 decimals): the lines' KiB/s
    summed per ms interval (an interval: the line's msec + ms/2, over ms,
    floored), in time order; lines whose first two fields are not whole
    numbers are skipped."""
    rows = []
    for line in lines:
        f = _SPLIT.split(line)
        if len(f) >= 2 and _DIGITS.fullmatch(f[0]) and _DIGITS.fullmatch(f[1]):
            rows.append((float(math.floor((float(f[0]) + ms / 2) / ms)), float(f[1])))
    out = []
    for g in jqjson.group_by(rows, lambda r: r[0]):
        k = g[0][0]
        out.append((jqjson.fixed(k * ms / 1000, 3),
                    jqjson.fixed(jqjson.add([r[1] for r in g]) * 1024 / 1e9, 6)))
    return out


def summary_text(lines: list[str], ms: float, least: float, lim: float) -> str:
    """The run's thirds as JSON text: {"samples", "first_third_gbs",
    "last_third_gbs" (GB/s, 6 decimals), "drop_pct" (% of the first
    third's mean the last third lost, 2 decimals), "drops" (drop_pct above
    lim)}; "null" below least intervals, or without a first or a last
    third (by the last interval's time), or when the first is all 0."""
    iv = [(float(t), float(g)) for t, g in intervals(lines, ms)]
    n = len(iv)
    if n < least:
        return 'null'
    last = iv[-1][0]
    a = [v for t, v in iv if t <= last / 3]
    b = [v for t, v in iv if t > 2 * last / 3]
    if not a or not b or jqjson.add(a) == 0:
        return 'null'
    fa = jqjson.add(a) / len(a)
    lb = jqjson.add(b) / len(b)
    d = 100 * (fa - lb) / fa
    return '{"samples": %s, "first_third_gbs": %s, "last_third_gbs": %s, "drop_pct": %s, "drops": %s}' % (
        jqjson.number(n), jqjson.fixed(fa, 6), jqjson.fixed(lb, 6), jqjson.fixed(d, 2),
        'true' if d > lim else 'false')


def summary(lines: list[str], ms: float, least: float, lim: float) -> Optional[dict]:
    """summary_text as the object it reads as (result.json's bw_log)."""
    return jqjson.loads(summary_text(lines, ms, least, lim))


def series(lines: list[str], ms: float) -> str:
    """"SECONDS GB/s" lines (each newline-terminated) of intervals."""
    return ''.join('%s %s\n' % r for r in intervals(lines, ms))


def by_dir(lines: list[tuple[str, str]], ms: float) -> list[tuple[str, str]]:
    """[(DIR, series)] for the directories of the lines' files, in the
    order they first come."""
    dirs: dict[str, list[str]] = {}
    for line, name in lines:
        dirs.setdefault(re.sub('/[^/]*$', '', name, count=1), []).append(line)
    return [(d, series(ls, ms)) for d, ls in dirs.items()]
