# SPDX-License-Identifier: GPL-2.0-only
"""A fleet's per-host results as runs of the fleet-wide aggregate
(docs/fleet.md "Reading the report": the fleet median is the median over
the hosts' figures).

Each host's aggregate.json counts as one run of each plan point, so the
fleet's aggregate.json (tswap.stats.aggregate, across hosts) has medians
over hosts and its CV is between hosts.
"""

from __future__ import annotations

from typing import Any

from .. import jqjson

Doc = dict[str, Any]


def host_runs(aggs: list[Doc], plan: list[Doc]) -> list[Doc]:
    """fleet-results.json: for each host (aggs, aggregate.json in host
    order) and plan point, the point with runkey "POINT.hN", repeat N (the
    host, from 1), status ok when the host has a median GB/s (a ceiling
    point: the host's ceiling of its direction) and error otherwise,
    error (the host's errors of the point, sorted, once each, "; "), and
    the host's medians: gbs, ops_per_s, clat_p50/p99/p999_us (us),
    submit_per_gb."""
    out = []
    for i, a in enumerate(aggs):
        by = {p['point']: p for p in jqjson.get(a, 'points') or []}
        for p in plan:
            if p.get('kind') == 'ceiling':
                x = {'gbs': jqjson.get(a, 'ceiling', p.get('rw'))}
            else:
                x = by.get(p.get('point'))
                x = x if jqjson.truthy(x) else {}
            r = dict(p)
            errs = x.get('errors')
            r.update({
                'runkey': '%s.h%d' % (jqjson.text(p.get('point')), i + 1),
                'repeat': i + 1,
                'status': 'ok' if x.get('gbs') is not None else 'error',
                'error': jqjson.join(jqjson.unique(errs if jqjson.truthy(errs) else []), '; '),
                'gbs': x.get('gbs'), 'ops_per_s': x.get('ops_per_s'),
                'clat_p50_us': x.get('clat_p50_us'), 'clat_p99_us': x.get('clat_p99_us'),
                'clat_p999_us': x.get('clat_p999_us'), 'submit_per_gb': x.get('submit_per_gb')})
            out.append(r)
    return out
