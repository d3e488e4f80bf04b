# SPDX-License-Identifier: GPL-2.0-only
"""JSON text exactly as jq 1.6 prints it.

The sweep's documents (aggregate.json, results.json, best-aio.json, ...)
were written by jq 1.6 (Debian 12's) and are kept byte for byte: numbers
are doubles printed with the shortest digits that round-trip, in fixed
notation unless the decimal exponent is below -4 or past the digits by
more than 15 (jq's jv_dtoa.c jvp_dtoa_fmt: 1e+17, 1e-05, 2500000000000000);
integral values print without a fraction; infinities print as +-DBL_MAX,
NaN as null; strings escape ", \\, control characters and DEL, and keep
all other characters as UTF-8 (jv_print.c jvp_dump_string).
"""

from __future__ import annotations

import json
import math
from types import MappingProxyType
from typing import Any

_ESC = MappingProxyType({'"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f',
                        '\n': '\\n', '\r': '\\r', '\t': '\\t'})
_DBL_MAX = 1.7976931348623157e308


def number(x: float | int) -> str:
    """A number as jq 1.6 prints it (also in "\\(x)" string interpolation)."""
    d = float(x)
    if d != d:
        return 'null'
    d = max(-_DBL_MAX, min(_DBL_MAX, d))
    r = repr(d)
    sign = ''
    if r[0] == '-':
        sign, r = '-', r[1:]
    if r == '0.0':
        return sign + '0'
    mant, _, exp = r.partition('e')
    whole, _, frac = mant.partition('.')
    if frac == '0':
        frac = ''
    digits = (whole + frac).lstrip('0')
    # decpt: the decimal point's place after the first significant digit
    decpt = len(whole) + (int(exp) if exp else 0)
    if whole == '0':
        lead = len(frac) - len(frac.lstrip('0'))
        decpt = -lead + (int(exp) if exp else 0)
    digits = digits.rstrip('0') or '0'
    nd = len(digits)
    if decpt <= -4 or decpt > nd + 15:
        e = decpt - 1
        out = digits[0] + ('.' + digits[1:] if nd > 1 else '')
        return '%s%se%s%02d' % (sign, out, '-' if e < 0 else '+', abs(e))
    if decpt <= 0:
        return sign + '0.' + '0' * -decpt + digits
    if decpt >= nd:
        return sign + digits + '0' * (decpt - nd)
    return sign + digits[:decpt] + '.' + digits[decpt:]


def string(s: str) -> str:
    """A JSON string literal as jq prints it."""
    out = []
    for ch in s:
        e = _ESC.get(ch)
        if e is not None:
            out.append(e)
        elif ch < ' ' or ch == '\x7f':
            out.append('\\u%04x' % ord(ch))
        else:
            out.append(ch)
    return '"' + ''.join(out) + '"'


def _dump(v: Any, indent: int | None, level: int, out: list[str]) -> None:
    if v is None:
        out.append('null')
    elif v is True:
        out.append('true')
    elif v is False:
        out.append('false')
    elif isinstance(v, (int, float)):
        out.append(number(v))
    elif isinstance(v, str):
        out.append(string(v))
    elif isinstance(v, dict):
        if not v:
            out.append('{}')
            return
        sep = ':' if indent is None else ': '
        out.append('{')
        first = True
        for k, x in v.items():
            if not first:
                out.append(',')
            first = False
            if indent is not None:
                out.append('\n' + ' ' * (indent * (level + 1)))
            out.append(string(str(k)) + sep)
            _dump(x, indent, level + 1, out)
        if indent is not None:
            out.append('\n' + ' ' * (indent * level))
        out.append('}')
    elif isinstance(v, (list, tuple)):
        if not v:
            out.append('[]')
            return
        out.append('[')
        for i, x in enumerate(v):
            if i:
                out.append(',')
            if indent is not None:
                out.append('\n' + ' ' * (indent * (level + 1)))
            _dump(x, indent, level + 1, out)
        if indent is not None:
            out.append('\n' + ' ' * (indent * level))
        out.append(']')
    else:
        raise TypeError('not JSON: %r' % (v,))


def dumps(v: Any, compact: bool = False) -> str:
    """v as jq prints it: indented by 2 (jq's default) or compact (jq -c);
    no trailing newline."""
    out: list[str] = []
    _dump(v, None if compact else 2, 0, out)
    return ''.join(out)


def text(v: Any) -> str:
    """v as jq's string interpolation "\\(v)" writes it: a string as is,
    anything else as compact JSON."""
    return v if isinstance(v, str) else dumps(v, compact=True)


def loads(s: str) -> Any:
    """JSON text as jq reads it: numbers are doubles (1.0 and 1 alike)."""
    return json.loads(s, parse_int=float, parse_constant=lambda c: None)


def jround(x: float) -> float:
    """jq's round: C round(), half away from zero (Python's round() rounds
    half to even)."""
    a = abs(x)
    f = math.floor(a)
    r = f + 1 if a - f >= 0.5 else f
    return math.copysign(r, x)


def fixed(x: float, p: int) -> str:
    """x as text with p (0 to 6) decimals, as the sweep's jq fixed(p)
    wrote it (C's printf("%.pf"): the binary value rounded, exact ties to
    even), step for step in doubles (Dekker's split makes x * 10^p exact
    enough to see a tie)."""
    m = (1, 10, 100, 1000, 10000, 100000, 1000000)[p]
    s = '-' if x < 0 else ''
    x = -x if x < 0 else x
    t = 134217729 * x
    hi = t - (t - x)
    lo = x - hi
    lo_m = float(math.floor(x * m))
    r = (hi * m - (lo_m + 0.5)) + lo * m
    c = lo_m + 1 if r > 0 or (r == 0 and int(lo_m) % 2 == 1) else lo_m
    out = s + number(float(math.floor(c / m)))
    if p > 0:
        f = number(float(int(c) % m))
        out += '.' + '0' * (p - len(f)) + f
    return out


def sort_key(v: Any) -> tuple:
    """A key that orders values as jq's sort does: null, false, true,
    numbers (nan first), strings (by code point), arrays (element-wise), objects (by
    their sorted keys, then the values in that key order)."""
    if v is None:
        return (0,)
    if v is False:
        return (1,)
    if v is True:
        return (2,)
    if isinstance(v, (int, float)):
        return (3, 0, v) if v == v else (3, -1)  # nan below every number
    if isinstance(v, str):
        return (4, v)
    if isinstance(v, (list, tuple)):
        return (5, tuple(sort_key(x) for x in v))
    ks = sorted(v)
    return (6, tuple(ks), tuple(sort_key(v[k]) for k in ks))


def jmax(xs: list) -> Any:
    """jq's max: the largest by jq's order, a later one on a tie; None
    for []."""
    best = None
    for i, x in enumerate(xs):
        if i == 0 or sort_key(x) >= sort_key(best):
            best = x
    return best


def jmin(xs: list) -> Any:
    """jq's min: the smallest by jq's order, the first on a tie; None for []."""
    best = None
    for i, x in enumerate(xs):
        if i == 0 or sort_key(x) < sort_key(best):
            best = x
    return best


def add(xs: list) -> Any:
    """jq's add: left to right from the first value (null adds nothing);
    None for []."""
    acc = None
    for x in xs:
        if acc is None:
            acc = x
        elif x is not None:
            acc = acc + x
    return acc


def group_by(xs: list, key: Any) -> list[list]:
    """jq's group_by(f): the values sorted by jq's order of key(x)
    (stable), runs of equal keys as groups."""
    out: list[list] = []
    last = None
    for x in sorted(xs, key=lambda y: sort_key(key(y))):
        k = sort_key(key(x))
        if out and k == last:
            out[-1].append(x)
        else:
            out.append([x])
            last = k
    return out


def unique(xs: list) -> list:
    """jq's unique: sorted by jq's order, without repeats."""
    return [g[0] for g in group_by(xs, lambda y: y)]


def jmax_by(xs: list, key: Any) -> Any:
    """jq's max_by(f): a later one wins a tie; None for []."""
    best = None
    for i, x in enumerate(xs):
        if i == 0 or sort_key(key(x)) >= sort_key(key(best)):
            best = x
    return best


def truthy(v: Any) -> bool:
    """jq's truth: everything but null and false (0 and "" are true)."""
    return v is not None and v is not False


def equal(a: Any, b: Any) -> bool:
    """jq's a == b (true is not 1; 1 and 1.0 alike; objects equal whatever
    their key order)."""
    return sort_key(a) == sort_key(b)


def join(xs: list[Any], sep: str) -> str:
    """jq 1.6's join: null as "", numbers and booleans as JSON."""
    return sep.join('' if x is None else text(x) for x in xs)


def get(v: Any, *path: Any) -> Any:
    """jq's .a.b[0] on v: null through null (a missing key or index)."""
    for k in path:
        if v is None:
            return None
        if isinstance(k, str) and isinstance(v, dict):
            v = v.get(k)
        elif not isinstance(k, str) and isinstance(v, list):
            i = int(k)
            v = v[i] if -len(v) <= i < len(v) else None
        else:
            raise TypeError('cannot index %s with %s' % (type(v).__name__, dumps(k, compact=True)))
    return v
