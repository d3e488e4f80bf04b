# SPDX-License-Identifier: GPL-2.0-only
"""How the reports write numbers and values, and the jq semantics they
rely on (truthiness, `//`, sort order), as jq 1.6 has them."""

from __future__ import annotations

from typing import Any

from ..jqjson import jround, text, truthy




def alt(x: Any, y: Any) -> Any:
    """jq's `x // y`: y when x is null or false."""
    return x if truthy(x) else y


def num(x: Any) -> bool:
    """x is a JSON number."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def g(x: Any) -> str:
    """GB/s and the like to three decimals, "-" for null."""
    return '-' if x is None else text(jround(x * 1000) / 1000)


def p1(x: Any) -> str:
    """One decimal, "-" for null."""
    return '-' if x is None else text(jround(x * 10) / 10)


def r1(x: float) -> float:
    """x rounded to one decimal (jq: . * 10 | round / 10)."""
    return jround(x * 10) / 10


def ms(x: Any) -> str:
    """Microseconds as milliseconds to two decimals, "-" for null."""
    return '-' if x is None else text(jround(x / 1000 * 100) / 100)


def v(x: Any) -> str:
    """A value as text, "-" for null."""
    return '-' if x is None else text(x)


def gib(x: Any) -> str:
    """Bytes in GiB to one decimal, "-" for null."""
    return '-' if x is None else '%s GiB' % text(jround(x / 1073741824 * 10) / 10)


def _mod(a: float, b: int) -> int:
    # jq 1.6's %: both sides cast to intmax_t, C's remainder
    x = int(a)
    r = abs(x) % b
    return -r if x < 0 else r


def sz(x: Any) -> str:
    """Bytes in K, M or G when a whole multiple (fio's notation), else as
    is."""
    if num(x):
        for unit, suf in ((1073741824, 'G'), (1048576, 'M'), (1024, 'K')):
            if x >= unit and _mod(x, unit) == 0:
                return text(x / unit) + suf
    return text(x)








def md(x: Any) -> str:
    """x as a Markdown table cell (jq: tostring | gsub("\\\\|"; "\\\\|") |
    gsub("\\n"; " ")): | escaped, newlines as blanks."""
    return text(x).replace('|', '\\|').replace('\n', ' ')


def p0(x: Any) -> str:
    """A percentage: one decimal below 10, else whole; "-" for null."""
    if x is None:
        return '-'
    return text(jround(x * 10) / 10 if x < 10 else jround(x))
