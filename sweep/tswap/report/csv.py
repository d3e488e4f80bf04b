# SPDX-License-Identifier: GPL-2.0-only
"""summary.csv of one host: one row per tswap run and repeat (docs/sweep.md,
Outputs), the columns of HEADER, jq's @csv."""

from __future__ import annotations

from typing import Any

from ..jqjson import jround, number, text, truthy
from ..plan.points import MEASURED
from .fmt import alt

HEADER = ('point,repeat,status,direction,backend,tensor_size,block_size,queue_depth,submit,'
          'window,threads,iodepth,gbs,ops_per_s,clat_p50_us,clat_p99_us,clat_p999_us,'
          'usr_cpu_pct,sys_cpu_pct,io_submit_per_gb,pct_of_ceiling,error')


def field(x: Any) -> str:
    """A value as jq 1.6's @csv writes it: strings quoted (" doubled),
    numbers as jq prints them, true/false, null empty."""
    if x is None:
        return ''
    if isinstance(x, str):
        return '"' + x.replace('"', '""') + '"'
    if isinstance(x, bool):
        return 'true' if x else 'false'
    if isinstance(x, float) and x != x:
        return ''
    if isinstance(x, (int, float)):
        return number(x)
    raise ValueError('@csv: %s is not valid in a csv row' % text(x))


def _r(x: Any, n: int) -> Any:
    return '' if x is None else jround(x * n) / n


def row(r: dict[str, Any], ceiling: Any) -> str:
    """One result.json object's row; ceiling: aggregate.json's ceiling
    ({DIR or DIR-nRANKS: GB/s}), for pct_of_ceiling (1 decimal; "" without
    a ceiling, or at 0)."""
    ck = r.get('rw') if alt(r.get('ranks'), 1) == 1 else '%s-n%s' % (text(r.get('rw')), text(r.get('ranks')))
    c = ceiling.get(ck) if isinstance(ceiling, dict) else None
    # a ceiling of 0 GB/s has no percentage (jq divided by zero)
    pct = _r(100 * r['gbs'] / c, 10) if truthy(c) and c != 0 and truthy(r.get('gbs')) else ''
    cols = [r.get('point'), r.get('repeat'), r.get('status'), r.get('rw'), r.get('backend'),
            r.get('tensor'), r.get('block'), r.get('qd'), r.get('submit'), r.get('window'),
            r.get('threads'), r.get('iodepth'), _r(r.get('gbs'), 10000),
            _r(r.get('ops_per_s'), 100), _r(r.get('clat_p50_us'), 10),
            _r(r.get('clat_p99_us'), 10), _r(r.get('clat_p999_us'), 10),
            _r(r.get('usr_cpu'), 100), _r(r.get('sys_cpu'), 100),
            _r(r.get('submit_per_gb'), 10), pct, r.get('error')]
    return ','.join(field(x) for x in cols)


def summary_csv(results: list[dict[str, Any]], agg: Any) -> str:
    """summary.csv's text: HEADER, then a row per result of kind "tswap"
    (results.json's order); agg: aggregate.json (None: no ceiling)."""
    ceiling = agg.get('ceiling') if isinstance(agg, dict) else None
    lines = [HEADER] + [row(r, ceiling) for r in results
                        if r.get('kind') in MEASURED]
    return '\n'.join(lines) + '\n'
