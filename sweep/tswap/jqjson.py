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
