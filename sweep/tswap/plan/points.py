# SPDX-License-Identifier: GPL-2.0-only
"""A run's points: the plan text (tswap.plan.expand: one tab-separated
line per point) as plan.json's points, and what the sweep asks of them.

A plan line's fields: point, kind (tswap, checkpoint or ceiling), rw (read, write,
readwrite), backend, tensor (bytes, fio bs), block (bytes), qd, submit,
window, threads, iodepth, and ranks (absent: 1). A point's ckey keys its
ceiling in aggregate.json: rw, or rw-nN for N ranks."""

from __future__ import annotations

from typing import Any, Optional

from ..jqjson import dumps, text

Point = dict[str, Any]

# the kinds of point that are measured and picked (a ceiling is neither):
# tswap's tensor operations and checkpoint files (tswap.plan.checkpoint)
MEASURED = frozenset(('tswap', 'checkpoint'))
_NUMERIC = frozenset((4, 5, 6, 9, 10))
_NAMES = ('point', 'kind', 'rw', 'backend', 'tensor', 'block', 'qd', 'submit', 'window',
          'threads', 'iodepth')


def parse(plan_text: str) -> list[Point]:
    """plan.json's points from the plan text; ValueError on a line with a
    number field that is not a number or too few fields."""
    out = []
    for line in plan_text.split('\n'):
        if not line:
            continue
        f = line.split('\t')
        if len(f) < len(_NAMES):
            raise ValueError('plan line with %d fields, not %d or more: %r'
                             % (len(f), len(_NAMES), line[:120]))
        p: Point = {k: float(f[i]) if i in _NUMERIC else f[i] for i, k in enumerate(_NAMES)}
        p['ranks'] = float(f[11]) if len(f) > 11 else 1.0
        p['ckey'] = p['rw'] if p['ranks'] == 1 else '%s-n%s' % (p['rw'], text(p['ranks']))
        out.append(p)
    return out


def _ranks(f: list[str]) -> float:
    return float(f[11]) if len(f) > 11 and f[11] != '' else 1.0


def facts(plan_text: str) -> list[str]:
    """What the sweep asks of its plan at every point, a line each: "1"
    when a point writes (write, readwrite), else "0"; "true" when a point
    of 1 rank reads or writes (not readwrite), else "false"; then the
    handles the multi-handle points use, "RANK<TAB>io", and for
    readwrite's write handles "RANK<TAB>write" (ranks.sh plan_facts,
    ranks.sh rank_slots)."""
    pts = [(f[2], _ranks(f)) for f in (line.split('\t') for line in plan_text.split('\n') if line)]
    out = ['1' if any(rw in ('write', 'readwrite') for rw, _ in pts) else '0',
           'true' if any(rw != 'readwrite' and n == 1 for rw, n in pts) else 'false']
    multi = [(rw, n) for rw, n in pts if rw == 'readwrite' or n > 1]
    w = max((n for rw, n in multi if rw == 'readwrite'), default=0)
    top = max((n for _, n in multi), default=0)
    i = 0
    while i < top:
        out.append('%s\tio' % text(float(i)))
        if i < w:
            out.append('%s\twrite' % text(float(i)))
        i += 1
    return out


_ENUMS = (('kind', ('tswap', 'checkpoint', 'ceiling')), ('rw', ('read', 'write', 'readwrite')))
_COUNTS = ('tensor', 'block', 'qd', 'threads', 'iodepth', 'ranks')


def damage(doc: Any) -> Optional[str]:
    """What makes a plan.json document unusable (hand-edited or damaged),
    in words, or None when every point is whole: a {"points": [...]}
    object, at least one point, each with a name (no tab or newline, used
    as a directory and a job section), kind and rw from their sets, text
    settings without tabs or newlines, and whole numbers of 0 to 2^62 for
    its sizes and counts (a ceiling's block and threads are 0)."""
    if not isinstance(doc, dict) or not isinstance(doc.get('points'), list):
        return 'not {"points": [...]}'
    if not doc['points']:
        return 'no points'
    for i, p in enumerate(doc['points']):
        where = 'point %d' % (i + 1)
        if not isinstance(p, dict):
            return '%s: not an object' % where
        name = p.get('point')
        if not isinstance(name, str) or not name or '\t' in name or '\n' in name or '/' in name:
            return '%s: point: not a name: %s' % (where, dumps(name, compact=True))
        where = '%s (%s)' % (where, name)
        for k, allowed in _ENUMS:
            if p.get(k) not in allowed:
                return '%s: %s: not one of %s: %s' % (where, k, ', '.join(allowed), dumps(p.get(k), compact=True))
        for k in ('backend', 'submit', 'window'):
            v = p.get(k)
            if not isinstance(v, str) or not v or '\t' in v or '\n' in v:
                return '%s: %s: not a setting: %s' % (where, k, dumps(v, compact=True))
        for k in _COUNTS:
            v = p.get(k, 1 if k == 'ranks' else None)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or \
                    not 0 <= v < 2 ** 62 or v != int(v):
                return '%s: %s: not a whole number of 0 or more: %s' % (where, k, dumps(v, compact=True))
    return None
