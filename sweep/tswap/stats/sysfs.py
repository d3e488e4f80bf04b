# SPDX-License-Identifier: GPL-2.0-only
"""The values tswap-check reads (sweep/lib/meta-collect.sh's "key<TAB>value"
lines), parsed with a range check: a value is either absent (""), a
number in its range, or garbage (reported n/a with a note, never guessed
at). CPU lists stay ranges: "0-100000" is one pair, never 100001 numbers.
docs/sweep.md "Checking a host: tswap-check".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..jqjson import text

# a decimal integer as sysfs and procfs print one
_UINT = re.compile(r'-?[0-9]+')
_GTS = re.compile(r'([0-9.]+) *GT/s')
_DEC = re.compile(r'[0-9]+(\.[0-9]+)?')


def kv(lines: str) -> dict[str, str]:
    """The "key<TAB>value" lines as a dict (a later key wins; lines with
    no tab are skipped)."""
    out: dict[str, str] = {}
    for line in lines.split('\n'):
        i = line.find('\t')
        if i >= 0:
            out[line[:i]] = line[i + 1:]
    return out


def str_(v: Optional[str]) -> Optional[str]:
    """None for an absent or empty value, else the value."""
    return None if v is None or v == '' else v


@dataclass(frozen=True)
class Num:
    """A parsed value: value (a double, as jq's) when good; note (why it
    is garbage) when present but not a number in range; both None when
    absent."""
    value: Optional[float] = None
    note: Optional[str] = None


def _digits(s: str) -> str:
    """The significant digits of a decimal integer (no sign, no leading
    zeros): their count bounds its size before int() is asked (Python
    refuses to convert more than 4300 digits)."""
    return s.lstrip('-').lstrip('0')


def uint(v: Optional[str], what: str, lo: int, hi: int) -> Num:
    """An integer lo..hi spelled in decimal digits (a leading '-' only
    when lo < 0; leading zeros allowed); anything else present is
    garbage, with a note naming what (e.g. "current_link_width") and the
    rule."""
    s = str_(v)
    if s is None:
        return Num()
    d = _digits(s)
    if _UINT.fullmatch(s) and (lo < 0 or s[0] != '-') and len(d) <= len(str(max(-lo, hi))):
        n = -int(d or '0') if s[0] == '-' else int(d or '0')
        if lo <= n <= hi:
            return Num(float(n))
    return Num(note='%s %s is not an integer %d to %d' % (what, quote(s), lo, hi))


def gts(v: Optional[str], what: str) -> Num:
    """A PCIe link speed ("16.0 GT/s PCIe") in GT/s, above 0 and at most
    256 (PCIe Base Spec 7.0: 128 GT/s); garbage otherwise."""
    s = str_(v)
    if s is None:
        return Num()
    m = _GTS.match(s)
    if m and _DEC.fullmatch(m.group(1)):
        x = float(m.group(1))
        if 0 < x <= 256:
            return Num(x)
    return Num(note='%s %s is not a speed in GT/s (above 0, at most 256)' % (what, quote(s)))


def quote(s: str) -> str:
    """s quoted for a note, cut at 40 characters."""
    return "'%s'" % (s if len(s) <= 40 else s[:39] + '~')


# the largest CPU number a list may name (the kernel's NR_CPUS is at most
# 8192; more is kept as ranges, never expanded)
CPU_MAX = 1048575

Ranges = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Cpus:
    """A CPU list as its ranges in the order written ((lo, hi) pairs, lo
    <= hi), or the note saying why it is garbage."""
    ranges: Ranges = ()
    note: Optional[str] = None


def cpus(v: Optional[str], what: str) -> Cpus:
    """A cpulist ("0-3,8", Documentation/admin-guide/cgroup-v2.rst cpuset
    format) as ranges; empty items are skipped; a number above CPU_MAX, a
    range whose end is below its start, or any other text is garbage."""
    s = str_(v)
    if s is None:
        return Cpus()
    out = []
    for item in s.split(','):
        if not item:
            continue
        p = item.split('-')
        if len(p) > 2 or not all(x.isascii() and x.isdigit() for x in p):
            return Cpus(note='%s %s is not a CPU list' % (what, quote(s)))
        if any(len(_digits(x)) > len(str(CPU_MAX)) for x in p):
            return Cpus(note='%s %s is not a CPU list (CPUs 0 to %d, ranges low-high)' % (what, quote(s), CPU_MAX))
        lo, hi = int(_digits(p[0]) or '0'), int(_digits(p[-1]) or '0')
        if hi > CPU_MAX or lo > hi:
            return Cpus(note='%s %s is not a CPU list (CPUs 0 to %d, ranges low-high)' % (what, quote(s), CPU_MAX))
        out.append((lo, hi))
    return Cpus(tuple(out))


def count(r: Ranges) -> int:
    """How many CPUs r names (a CPU listed twice counts twice)."""
    return sum(hi - lo + 1 for lo, hi in r)


def minus(a: Ranges, b: Ranges) -> Ranges:
    """a without every CPU b names, in a's order (jq's array subtraction
    on the expanded lists)."""
    merged: list[list[int]] = []
    for lo, hi in sorted(b):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    out = []
    for lo, hi in a:
        for blo, bhi in merged:
            if bhi < lo:
                continue
            if blo > hi:
                break
            if blo > lo:
                out.append((lo, blo - 1))
            lo = bhi + 1
            if lo > hi:
                break
        if lo <= hi:
            out.append((lo, hi))
    return tuple(out)


def ranges(r: Ranges) -> str:
    """r as a cpulist: runs of consecutive CPUs in the order listed joined
    ("0-3,8"; a CPU listed again after its run starts a new item)."""
    acc: list[list[int]] = []
    for lo, hi in r:
        if acc and acc[-1][1] == lo - 1:
            acc[-1][1] = hi
        else:
            acc.append([lo, hi])
    return ','.join(str(lo) if lo == hi else '%d-%d' % (lo, hi) for lo, hi in acc)


def sz(n: Optional[float]) -> Optional[str]:
    """Bytes in fio notation: g, m, k when a whole multiple, else bytes."""
    if n is None:
        return None
    for unit, s in ((1073741824, 'g'), (1048576, 'm'), (1024, 'k')):
        if n >= unit and n % unit == 0:
            return text(n / unit) + s
    return text(n)
