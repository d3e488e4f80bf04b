# SPDX-License-Identifier: GPL-2.0-only
"""The run's verdict (docs/sweep.md, exit codes): the --min-*-gbs
thresholds' PASS/FAIL lines and whether the run failed or has no
trustworthy pick (exit 3, 4; the entry point's exec_status)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..jqjson import number
from .fmt import alt


@dataclass(frozen=True)
class Thresholds:
    """--min-read-gbs and --min-write-gbs as given (decimal strings, GB/s
    = 1e9 B/s; None when not given)."""
    read: Optional[str] = None
    write: Optional[str] = None


def fixed3(s: str) -> str:
    """s (a decimal number) as bash's printf '%.3f' writes it: read into a
    long double (x86's 64-bit significand, strtold), rounded to three
    decimals half to even (glibc printf)."""
    # here: only a run with --min-*-gbs needs it (fractions imports decimal)
    from fractions import Fraction
    x = Fraction(s)
    sign = '-' if s.lstrip().startswith('-') else ''
    a = abs(x)
    if a:
        e = a.numerator.bit_length() - a.denominator.bit_length()
        while a >= Fraction(2) ** (e + 1):
            e += 1
        while a < Fraction(2) ** e:
            e -= 1
        scale = Fraction(2) ** (e - 63)
        a = round(a / scale) * scale          # round() on Fraction: half to even
    m = round(a * 1000)
    return '%s%d.%03d' % (sign, m // 1000, m % 1000)


def thresholds(agg: dict[str, Any], t: Thresholds) -> list[str]:
    """A line per threshold given: "PASS: best DIR X GB/s >= MIN GB/s" or
    "FAIL: best DIR X GB/s < MIN GB/s" (X: "(no successful point)" without
    a best point), from aggregate.json's best points (the pick's)."""
    out = []
    best = agg.get('best') or {}
    for d, lim in (('read', t.read), ('write', t.write)):
        if not lim:
            continue
        b = alt((best.get(d) or {}).get('gbs'), None)
        if b is not None and b >= float(lim):
            out.append('PASS: best %s %s GB/s >= %s GB/s' % (d, fixed3(number(b)), lim))
        else:
            out.append('FAIL: best %s %s GB/s < %s GB/s' % (
                d, '(no successful point)' if b is None else number(b), lim))
    return out


def run_verdict(results: list[dict[str, Any]], agg: dict[str, Any],
                best: Any) -> tuple[int, bool]:
    """(the runs that failed: results.json's with a status other than ok,
    untrusted): untrusted when every point with a result is flagged
    (aggregate.json's trust: trusted 0, flagged > 0) or every libaio one
    (best-aio.json's trusted false); the entry point exits 3 on failed runs,
    else 4 when untrusted."""
    failed = sum(1 for r in results if r.get('status') != 'ok')
    t = agg.get('trust') or {}
    untrusted = (t.get('trusted') == 0 and _gt0(t.get('flagged'))) or \
        (isinstance(best, dict) and best.get('trusted') is False)
    return failed, untrusted


def _gt0(x: Any) -> bool:
    # jq: null and false are below every number, strings above
    return isinstance(x, str) or (isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0)
