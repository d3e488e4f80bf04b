# SPDX-License-Identifier: GPL-2.0-only
"""The fleet's report.md, first sections: the run, the verdict, the hosts,
the fleet's figures, errors, points by host and the best settings
(docs/fleet.md "Reading the report")."""

from __future__ import annotations

from typing import Any, Optional

from ..jqjson import dumps, get, join, text, truthy
from .fmt import g, md, p0, p1, sz

Doc = dict[str, Any]


def _flag(h: Doc, d: str) -> str:
    # " !": a failed check of direction d (DIR_min_gbs, DIR_vs_fleet)
    return ' !' if any(c.get('status') == 'fail' and c['name'].startswith(d) for c in h['checks']) else ''


def _flagtext(p: Doc) -> str:
    f = p.get('flags')
    f = f if truthy(f) else []
    return join(f, ', ') if f else '-'


def _cv(p: Doc) -> str:
    return '-' if p.get('cv') is None else p1(p['cv'] * 100) + '%'


def _head(s: Doc, f: Doc, a: Doc, notes: str) -> list[str]:
    bar = (['read >= %s GB/s' % text(f['min_read_gbs'])] if f.get('min_read_gbs') is not None else []) + \
          (['write >= %s GB/s' % text(f['min_write_gbs'])] if f.get('min_write_gbs') is not None else [])
    return [
        '# tswap fleet report', '',
        '- controller: `%s` (runs the fio clients), kernel %s, %s, run started %s' % (
            text(s.get('host')), text(s.get('kernel')), text(s.get('fio_version')), text(s.get('created'))),
        '- hosts: %d from `%s`, through fio\'s client mode (`fio --server` on each host); every point runs on all '
        'hosts at once' % (len(f['hosts']), text(get(s, 'fleet', 'hosts_file'))),
        '- grid: **%s**%s, %d point(s) x %s repeat(s), ' % (
            text(s.get('grid')),
            ' (%s)' % text(s.get('grid_description')) if s.get('grid_description') != '' else '',
            len(a.get('points') or []), text(s.get('repeat')))
        + ('%s per point' % text(s.get('io_size')) if s.get('io_size') != '' else
           '%s s per point after a %s s ramp' % (text(s.get('runtime')), text(s.get('ramp'))))
        + ', %s of each target' % text(s.get('size')),
        '- the bar: ' + (join(bar, ', ') if bar else 'none (no --min-read-gbs/--min-write-gbs)')
        + '; outliers: hosts more than %s%% below the fleet median' % text(f['outlier_pct']),
        "- GB/s is 10^9 bytes/s. A host's figure is its best point of that direction (the median over repeats); "
        "the fleet median is the median of the hosts' figures",
        "- device ceiling (fio's own libaio engine, bs=%s, iodepth=%s, on each host): " % (
            text(s.get('ceiling_bs')), text(s.get('ceiling_qd')))
        + ('measured, % of ceiling per host below' if truthy(s.get('ceiling')) else 'not measured'),
        "- page caches on the hosts are not dropped (reads use O_DIRECT, and fio invalidates the target's "
        'cached pages before each job)'] + (['\n'.join('- note: ' + x for x in notes.split('\n'))] if notes != '' else [])


def _verdict(f: Doc) -> str:
    s = f['summary']
    fl = [h.get('label') for h in f['hosts'] if h.get('verdict') == 'FAIL']
    el = [h.get('label') for h in f['hosts'] if h.get('verdict') == 'ERROR']
    if s['error'] > 0:
        return '**ERROR**: %s of %s host(s) with errors (%s); %s below the bar%s; %s pass.' % (
            text(s['error']), text(s['hosts']), join(el, ', '), text(s['fail']),
            ' (%s)' % join(fl, ', ') if s['fail'] > 0 else '', text(s['pass']))
    if s['fail'] > 0:
        return '**FAIL**: %s of %s host(s) below the bar or outliers (%s); %s pass.' % (
            text(s['fail']), text(s['hosts']), join(fl, ', '), text(s['pass']))
    return '**PASS**: all %s host(s) pass.' % text(s['hosts'])


def _hosts(s: Doc, f: Doc) -> list[str]:
    ceil = truthy(s.get('ceiling'))
    dirs = f['directions']
    out = ['| host | verdict | ' + ' | '.join('%s GB/s | %% of fleet median%s' % (text(d), ' | % of ceiling' if ceil else '')
                                             for d in dirs) + ' | failed checks and errors |',
           '|---|---|' + ''.join('---|---|---|' if ceil else '---|---|' for _ in dirs) + '---|']
    for h in f['hosts']:
        cells = []
        for d in dirs:
            fl = _flag(h, d)
            cells.append('%s%s | %s%s' % (g(get(h, 'best', d, 'gbs')), fl, p0(get(h, 'pct_of_median', d)), fl)
                         + (' | %s' % p1(get(h, 'best', d, 'pct_ceiling')) if ceil else ''))
        why = ['%s (%s run(s))' % (text(e.get('reason')), text(e.get('runs'))) for e in h['errors']] + \
              ['%s: %s' % (text(c.get('name')), text(c.get('message'))) for c in h['checks'] if c.get('status') == 'fail']
        out.append('| %s | %s | ' % (md(h.get('label')), text(h.get('verdict'))) + ' | '.join(cells)
                   + ' | ' + md(join(why, '; ')) + ' |')
    out += ['', '| host | address | hostname | fio | target | engine | hosts-file options |',
            '|---|---|---|---|---|---|---|']
    for h in f['hosts']:
        opts = h.get('options') or []
        out.append('| %s | %s | %s | %s | `%s` | `%s` | %s |' % (
            md(h.get('label')), md(h.get('address')), md(h['hostname'] if truthy(h.get('hostname')) else '-'),
            md(h['fio_version'] if truthy(h.get('fio_version')) else '-'), md(h.get('target')), md(h.get('engine')),
            join(['`%s`' % md(o) for o in opts], ' ') if len(opts) > 0 else '-'))
    return out


def _fleet(f: Doc) -> list[str]:
    out = ['| direction | hosts | median GB/s | min GB/s | max GB/s | spread | CV across hosts | outlier bar '
           '(median - %s%%) | outliers |' % text(f['outlier_pct']), '|---|---|---|---|---|---|---|---|---|']
    for d in f['directions']:
        x = f['fleet'][d]
        out.append('| %s | %s | %s | %s%s | %s%s | %s | %s | %s | %s |' % (
            text(d), text(x['n']), g(x['median']), g(x['min']),
            ' (%s)' % md(x['min_host']) if truthy(x.get('min_host')) else '', g(x['max']),
            ' (%s)' % md(x['max_host']) if truthy(x.get('max_host')) else '',
            '-' if x.get('spread_pct') is None else p1(x['spread_pct']) + '%',
            '-' if x.get('cv') is None else p1(x['cv'] * 100) + '%', g(x['bar']),
            join([md(o) for o in x['outliers']], ', ') if len(x['outliers']) > 0 else 'none'))
    return out


def _first(agg: Any, point: Any) -> Optional[Doc]:
    return next((p for p in get(agg, 'points') or [] if p.get('point') == point), None)


def _points(f: Doc, a: Doc, ha: list[Any]) -> list[str]:
    hosts = f['hosts']
    if len(hosts) <= 8:
        out = ['| point | fleet median | CV across hosts | flags | ' + ' | '.join(md(h.get('label')) for h in hosts) + ' |',
               '|---|---|---|---|' + ''.join('---|' for _ in hosts)]
        for p in a['points']:
            cells = []
            for x in ha:
                q = _first(x, p.get('point'))
                cells.append(text(get(q, 'status')) if get(q, 'gbs') is None else g(q['gbs']))
            out.append('| %s | %s | %s | %s | ' % (text(p.get('point')), g(p.get('gbs')), _cv(p), _flagtext(p))
                       + ' | '.join(cells) + ' |')
        return out
    out = ['| point | fleet median | CV across hosts | flags | min | max | hosts ok |', '|---|---|---|---|---|---|---|']
    for p in a['points']:
        v = []
        for i, x in enumerate(ha):
            gb = get(_first(x, p.get('point')), 'gbs')
            if gb is not None:
                v.append({'label': get(hosts, i, 'label'), 'gbs': gb})
        lo = hi = None
        for e in v:
            lo = e if lo is None or e['gbs'] < lo['gbs'] else lo
            hi = e if hi is None or not e['gbs'] < hi['gbs'] else hi
        out.append('| %s | %s | %s | %s | %s | %s | %d/%d |' % (
            text(p.get('point')), g(p.get('gbs')), _cv(p), _flagtext(p),
            '%s (%s)' % (g(lo['gbs']), md(lo['label'])) if lo else '-',
            '%s (%s)' % (g(hi['gbs']), md(hi['label'])) if hi else '-', len(v), len(hosts)))
    return out


def _best(a: Doc, aio: Any) -> list[str]:
    out = ['| | fleet median GB/s | backend | tensor | block | queue depth | submit | window | threads | ops queued |',
           '|---|---|---|---|---|---|---|---|---|---|']
    for d in ('read', 'write'):
        b = get(a, 'best', d)
        if truthy(b):
            out.append('| best %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
                d, g(b.get('gbs')), text(b.get('backend')), sz(b.get('tensor')), sz(b.get('block')),
                text(b.get('qd')), text(b.get('submit')), text(b.get('window')), text(b.get('threads')),
                text(b.get('iodepth'))))
        elif any(p.get('rw') == d and p.get('gbs') is not None for p in a['points']):
            out.append('| best %s | no trustworthy %s point: every one is flagged (Points by host) | | | | | | | | |' % (d, d))
        else:
            out.append('| best %s | no %s point with a result | | | | | | | | |' % (d, d))
    out.append('')
    if get(aio, 'trusted') is False:
        out.append('No trustworthy libaio point (every one is flagged: above the link or the ceiling, '
                   'failed or not steady): no DeepSpeed aio config.')
    elif not aio:
        out.append('No libaio point with a result: no DeepSpeed aio config.')
    else:
        out += ['DeepSpeed aio config (best-aio.json), by fleet median: %s' % text(get(a, 'best', 'aio_source', 'why')),
                '', '```json', dumps(aio, compact=True), '```']
    return out


def report(sweep: Doc, fl: Doc, agg: Doc, hagg: list[Any], aio: Any, notes: str) -> list[str]:
    """report.md's lines up to "What each host is": sweep (sweep.json), fl
    (fleet.json), agg (the fleet's aggregate.json), hagg (each host's
    aggregate.json, in host order), aio (best-aio.json, None when empty),
    notes (the run's notes, one a line)."""
    return (_head(sweep, fl, agg, notes)
            + ['', '## Verdict', '', _verdict(fl), '', '## Hosts', '',
               '! marks a figure below the bar or an outlier. % of ceiling: the host\'s own fio libaio ceiling.', '']
            + _hosts(sweep, fl) + ['', '## Fleet', ''] + _fleet(fl)
            + ['', 'Spread: (max - min) / median. With fewer than two hosts with a result, nothing is an outlier.',
               '', '## Errors', '']
            + (['- **%s** (%s): %s (%s run(s))' % (md(h.get('label')), text(h.get('address')), md(e.get('reason')),
                                                  text(e.get('runs'))) for h in fl['hosts'] for e in h['errors']]
               or ['None.'])
            + ['', '## Points by host', '',
               'GB/s, the median over repeats; fleet: the median over hosts, the coefficient of variation across '
               'hosts, and the flags that keep a point from the pick (docs/sweep.md, How the pick is made).', '']
            + _points(fl, agg, hagg) + ['', '## Best settings by fleet median', ''] + _best(agg, aio) + [''])
