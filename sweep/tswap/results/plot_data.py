# SPDX-License-Identifier: GPL-2.0-only
"""The data of every plot of a run (tswap.report.plots makes the plots
of them, tswap.cli.plots draws them with gnuplot), from its
aggregate.json, as records (records()): a header of fields, then the
lines of the plot's data file.

- "heat\\tRW\\tWINDOW\\tSUBMIT\\tBLOCKS\\tQDS" per direction (read, write)
  and window/submit pair of its points; BLOCKS and QDS the direction's
  block sizes and queue depths (bytes, ascending, space-separated); a line
  per block x queue depth: block index, qd index, best GB/s over threads,
  backends and tensor sizes, label colour (16777215, white, below 0.55 of
  the map's best: the palette's dark half; else 0, black).
- "threads": "THREADS READ WRITE", the best GB/s per thread count ("-":
  none).
- "latency\\tRW" per direction (read, write, readwrite) with a point that
  has GB/s and a p99: block 0, every such point by GB/s, "GB/s p99_ms
  class pick label"; two blank lines; block 1, the Pareto front, "GB/s
  p99_ms label". p99: fio's completion latency percentile, median over
  repeats (ms). class: "front" (a trusted point no other trusted point
  beats: as many GB/s or more at the same p99 or less, better in one),
  "beaten" or "flagged" (never picked); pick: 1 for best.RW; label: the
  parts of the point's name that differ between the direction's points.
- "bw\\tPOINT\\tWHY" for the best read, write and readwrite points and
  every point that drops during the run, no data (tswap.report.plots
  bw_plot draws them from the points' bandwidth logs).
"""

from __future__ import annotations

from typing import Any

from .. import jqjson

_text = jqjson.text


def heat_lines(points: list[dict], rw: str, w: Any, s: Any) -> list[str]:
    """The heat map of rw's points with window w and submit s: per block
    and queue depth, the fastest point (a later one on a tie)."""
    al = [p for p in points if p.get('rw') == rw]
    bs = jqjson.unique([p.get('block') for p in al])
    qs = jqjson.unique([p.get('qd') for p in al])
    sel = [p for p in al if p.get('window') == w and p.get('submit') == s and p.get('gbs') is not None]
    best = [jqjson.jmax_by(g, lambda p: p.get('gbs'))
            for g in jqjson.group_by(sel, lambda p: [p.get('block'), p.get('qd')])]
    m = jqjson.jmax([p.get('gbs') for p in best])
    return ['%s %s %s %s' % (_text(_index(bs, p.get('block'))), _text(_index(qs, p.get('qd'))),
                             _text(p.get('gbs')), 16777215 if p['gbs'] < 0.55 * m else 0)
            for p in best]


def _index(xs: list, x: Any) -> Any:
    for i, y in enumerate(xs):
        if jqjson.sort_key(y) == jqjson.sort_key(x):
            return i
    return None


def threads_lines(points: list[dict]) -> list[str]:
    """Per thread count, the best read and write GB/s ("-": none)."""
    pp = [p for p in points if p.get('gbs') is not None]

    def best(t: Any, rw: str) -> Any:
        g = jqjson.jmax([p['gbs'] for p in pp if p.get('threads') == t and p.get('rw') == rw])
        return '-' if g is None or g is False else g
    return ['%s %s %s' % (_text(t), _text(best(t, 'read')), _text(best(t, 'write')))
            for t in jqjson.unique([p.get('threads') for p in pp])]


def beats(a: dict, b: dict) -> bool:
    """a beats b: as many GB/s or more at the same p99 or less, and better
    in one of them (the Pareto order)."""
    return a['gbs'] >= b['gbs'] and a['p99'] <= b['p99'] and (a['gbs'] > b['gbs'] or a['p99'] < b['p99'])


def latency_rows(agg: dict, rw: str) -> list[dict]:
    """rw's points with GB/s and a p99, by GB/s, p99, name: point, gbs,
    p99 (ms), trusted, class, label."""
    al = [{'point': p.get('point'), 'gbs': p['gbs'], 'p99': p['clat_p99_us'] / 1000,
           'trusted': p.get('trusted') is True, 'parts': p['point'].split('-')}
          for p in agg['points']
          if p.get('rw') == rw and p.get('gbs') is not None and p.get('clat_p99_us') is not None]
    common: list = []
    if al:
        common = al[0]['parts']
        for parts in (a['parts'] for a in al[1:]):
            keep = [x for x in common if x not in parts]
            common = [x for x in common if x not in keep]
    trusted = [a for a in al if a['trusted']]
    rows = []
    for a in al:
        cls = ('flagged' if not a['trusted'] else 'beaten' if any(beats(t, a) for t in trusted)
               else 'front')
        rows.append(dict(a, **{'class': cls,
                               'label': '-'.join(x for x in a['parts'] if x not in common) or '-'}))
    return sorted(rows, key=lambda r: jqjson.sort_key([r['gbs'], r['p99'], r['point']]))


def latency_lines(agg: dict, rw: str) -> list[str]:
    """The latency plot's two blocks (the module's "latency")."""
    pick = ((agg.get('best') or {}).get(rw) or {}).get('point')
    rows = latency_rows(agg, rw)
    return (['%s %s %s %d %s' % (jqjson.fixed(r['gbs'], 6), jqjson.fixed(r['p99'], 3), r['class'],
                                 1 if r['point'] == pick else 0, r['label']) for r in rows]
            + ['', '']
            + ['%s %s %s' % (jqjson.fixed(r['gbs'], 6), jqjson.fixed(r['p99'], 3), r['label'])
               for r in rows if r['class'] == 'front'])


def records(agg: dict) -> list[tuple[tuple[str, ...], list[str]]]:
    """Every record of aggregate.json agg (the module's list), in order,
    as (header fields, data lines)."""
    p = agg.get('points') or []
    out: list[tuple[tuple[str, ...], list[str]]] = []
    for rw in ('read', 'write'):
        d = [x for x in p if x.get('rw') == rw]
        blocks = ' '.join(_text(x) for x in jqjson.unique([x.get('block') for x in d]))
        qds = ' '.join(_text(x) for x in jqjson.unique([x.get('qd') for x in d]))
        for w, s in jqjson.unique([[x.get('window'), x.get('submit')] for x in d]):
            out.append((('heat', rw, _text(w), _text(s), blocks, qds),
                        heat_lines(agg['points'], rw, w, s)))
    out.append((('threads',), threads_lines(agg['points'])))
    for rw in ('read', 'write', 'readwrite'):
        if any(x.get('rw') == rw and x.get('gbs') is not None and x.get('clat_p99_us') is not None
               for x in p):
            out.append((('latency', rw), latency_lines(agg, rw)))
    best = agg.get('best') or {}
    bw = [[b.get('point'), 'best ' + _text(b.get('rw'))]
          for b in (best.get('read'), best.get('write'), best.get('readwrite')) if b is not None]
    bw += [[x.get('point'), 'drops %s%% during the run' % _text(jqjson.jround(x['drop_pct']))]
           for x in p if x.get('drops') is True]
    for g in jqjson.group_by(bw, lambda r: r[0]):
        out.append((('bw', _text(g[0][0]), g[0][1]), []))
    return out
