# SPDX-License-Identifier: GPL-2.0-only
"""The fleet's other texts: report.md's "What each host is" and "Checks"
sections, the summary on stdout, a point's progress line and the rows of
summary.csv (docs/fleet.md "Reading the report", "What each host is",
"Checks")."""

from __future__ import annotations

from typing import Any

from ..jqjson import get, join, jround, text, truthy
from .csv import field
from .fmt import _mod, g, md, p0, v

Doc = dict[str, Any]


def _gib(x: Any) -> str:
    return '-' if x is None else '%s GiB' % text(jround(x / 1073741824 * 10) / 10)


def _or(x: Any, d: Any) -> Any:
    return x if truthy(x) else d


def meta_report(fl: Doc) -> list[str]:
    """"What each host is": each host's device, link, queue, filesystem and
    host, bold where it differs from the fleet's majority, and the slow
    hosts grouped by how they differ."""
    out = ['## What each host is', '',
           'Read on each host by the target probe (fio exec_prerun, no SSH); all of it is in fleet.json '
           '(hosts[].meta, as meta.json of a local run) and in preflight/ID/meta.json. **bold**: differs from '
           "the fleet's majority.", '',
           '| host | device | model / firmware | capacity | block sizes | PCIe (max) | NUMA | scheduler, '
           'nr_requests, max_sectors_kb | filesystem | kernel | CPUs, memory | fio |',
           '|---|---|---|---|---|---|---|---|---|---|---|---|']
    for h in fl['hosts']:
        f, m = h.get('fields'), h.get('meta')
        d = [x.get('field') for x in h.get('differences') or []]

        def b(k: str, s: Any) -> str:
            return '**%s**' % text(s) if k in d else text(s)
        if get(m, 'collected') is False:
            out.append('| %s | %s | | | | | | | | | | |' % (md(h.get('label')), md(get(m, 'note'))))
            continue
        fv = (lambda k: get(f, k))
        pcie = ('%s %s (%s x%s)' % (b('pcie_speed', fv('pcie_speed')), b('pcie_width', 'x' + text(fv('pcie_width'))),
                                    v(fv('pcie_max_speed')), v(fv('pcie_max_width')))
                if truthy(fv('pcie_speed')) else md(_or(get(m, 'pcie', 'note'), '-')))
        fs = ('%s on `%s`' % (b('fs_type', fv('fs_type')), md(v(get(m, 'target', 'filesystem', 'source'))))
              if truthy(fv('fs_type')) else md(_or(get(m, 'target', 'filesystem', 'note'), 'block device')))
        note = get(m, 'device', 'note')
        out.append('| %s | `%s`%s' % (md(h.get('label')), md(_or(get(m, 'device', 'path'), '-')),
                                      ' (%s)' % md(note) if truthy(note) else '')
                   + ' | %s / %s' % (b('model', md(v(fv('model')))), b('firmware', md(v(fv('firmware')))))
                   + ' | %s' % b('capacity_bytes', _gib(fv('capacity_bytes')))
                   + ' | %s/%s B' % (b('logical_block_size', v(fv('logical_block_size'))),
                                     b('physical_block_size', v(fv('physical_block_size'))))
                   + ' | ' + pcie + ' | ' + b('numa_node', v(fv('numa_node')))
                   + ' | %s, %s, %s' % (b('scheduler', v(fv('scheduler'))), b('nr_requests', v(fv('nr_requests'))),
                                        b('max_sectors_kb', v(fv('max_sectors_kb'))))
                   + ' | ' + fs + ' | ' + b('kernel', md(v(fv('kernel'))))
                   + ' | %s x %s, %s' % (b('cpus', v(fv('cpus'))), b('cpu_model', md(v(fv('cpu_model')))),
                                         b('memory_bytes', _gib(fv('memory_bytes'))))
                   + ' | %s |' % b('fio', md(v(fv('fio')))))
    out += ['', '### Slow hosts, by how they differ from the fleet', '']
    groups = fl.get('slow_groups') or []
    if not groups:
        out.append('No host is below the bar or an outlier.')
    else:
        out += ['Hosts below the bar or outliers, grouped by each recorded field in which they differ from the '
                'majority of the hosts with metadata (a field without a majority is not compared):', '']
        out += ['- ' + md(x.get('text')) for x in groups]
    return out + ['']


def _sz(x: Any) -> str:
    # bytes in M or K when a whole multiple (no G: fleet-check-report.jq's)
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        for unit, suf in ((1048576, 'M'), (1024, 'K')):
            if x >= unit and _mod(x, unit) == 0:
                return text(x / unit) + suf
    return text(x)


def _bad(h: Doc) -> list[Doc]:
    return [c for c in h['stack_checks'] if c.get('verdict') in ('fail', 'warn')]


def _short(c: Doc) -> str:
    return '`%s` %s%s: %s (expected %s)' % (text(c.get('id')), text(c.get('verdict')),
                                            ' (a warn most hosts pass)' if truthy(c.get('escalated')) else '',
                                            v(c.get('value')), v(c.get('expected')))


def _lowest(h: Doc, dirs: list[Any]) -> float:
    # the lowest % of the fleet median over the directions; 1e9 for none
    pm = [get(h, 'pct_of_median', d) for d in dirs]
    pm = [x for x in pm if truthy(x)]
    return min(pm) if pm else 1e9


def check_report(fl: Doc) -> list[str]:
    """report.md's "Checks": each host's failing and warning stack checks
    with their advice, the hosts grouped by what differs, and the hosts by
    GB/s, the lowest % of the fleet median first."""
    s, dirs, c = fl['check_settings'], fl['directions'], fl['check_summary']
    out = ['## Checks', '',
           "tswap-check's checks (docs/sweep.md) of each host's stack, from what the probe read there, against "
           'block_size %s, queue_depth %s, %s thread(s), %s (%s); `fleet.*` compare the host with the majority '
           'of the fleet, and a warn that most hosts pass is a fail (that host is the odd one). They do not '
           "change a host's verdict or the exit status; junit.xml has each as a testcase." % (
               _sz(s.get('block_size')), text(s.get('queue_depth')), text(s.get('threads')),
               text(s.get('backend')), text(s.get('from'))), '',
           ('**%s check(s) fail** on %s; %s warn.' % (text(c['fail']), join([md(x) for x in c['hosts']], ', '),
                                                     text(c['warn']))
            if c['fail'] > 0 else 'No check fails; %s warn.' % text(c['warn'])),
           '', '| host | checks | fail or warn |', '|---|---|---|']
    for h in fl['hosts']:
        if h.get('stack') is None:
            cell = md(h.get('stack_note'))
        else:
            cell = join([_short(x) for x in _bad(h)], '; ')
            cell = '-' if cell == '' else md(cell)
        out.append('| %s | %s | %s |' % (md(h.get('label')), text(h.get('stack_verdict')), cell))
    out.append('')
    out += ['- **%s** `%s` **%s**: %s (source: %s)' % (md(h.get('label')), text(x.get('id')), text(x.get('verdict')),
                                                      md(x.get('advice')), md(x.get('source')))
            for h in fl['hosts'] for x in _bad(h)]
    out += ['', '### How the hosts differ', '']
    if not fl.get('check_groups'):
        out.append('No host differs from the others in model, firmware, PCIe link, kernel or NUMA locality '
                   '(where they could be read).')
    else:
        out += ['- %s: ' % text(x.get('name')) + join(['%s (%s)' % (md(y.get('value')), join([md(z) for z in y['hosts']], ', '))
                                                         for y in x['groups']], '; ')
                for x in fl['check_groups']]
    out += ['', '### Hosts by GB/s, the lowest first', '',
            '| host | ' + join(['%s GB/s (%% of fleet median)' % text(d) for d in dirs], ' | ')
            + " | differs from the fleet's majority | failing checks |",
            '|---|' + ''.join('---|' for _ in dirs) + '---|---|']
    for h in sorted(fl['hosts'], key=lambda h: _lowest(h, dirs)):
        diff = h.get('stack_differences')
        if diff is None:
            dt = 'metadata not collected'
        else:
            dt = join(['%s %s (fleet: %s)' % (text(x.get('name')), md(x.get('value')), md(x.get('majority')))
                       for x in diff], ', ') or '-'
        fails = join(['`%s`' % text(x.get('id')) for x in h['stack_checks'] if x.get('verdict') == 'fail'], ', ') or '-'
        out.append('| %s | ' % md(h.get('label'))
                   + join(['%s (%s%%)' % (g(get(h, 'best', d, 'gbs')), p0(get(h, 'pct_of_median', d))) for d in dirs], ' | ')
                   + ' | %s | %s |' % (dt, fails))
    return out + ['']


def summary(fl: Doc) -> list[str]:
    """The fleet summary on stdout: each host's verdict and figures, the
    fleet median, the counts, the stack checks."""
    dirs = fl['directions']
    out = []
    for h in fl['hosts']:
        why = [e.get('reason') for e in h['errors']] + [c.get('message') for c in h['checks'] if c.get('status') == 'fail']
        out.append('%s  %s  ' % (text(h.get('verdict')), text(h.get('label')))
                   + join(['%s %s GB/s' % (text(d), g(get(h, 'best', d, 'gbs'))) for d in dirs], '  ')
                   + ('  - ' + join(why, '; ') if why else ''))
    s = fl['summary']
    out.append('fleet median: ' + join(['%s %s GB/s' % (text(d), g(get(fl, 'fleet', d, 'median'))) for d in dirs], ', '))
    out.append('hosts: %s pass, %s below the bar, %s error(s)' % (text(s['pass']), text(s['fail']), text(s['error'])))
    c = fl.get('check_summary')
    if truthy(c):
        out.append('stack checks: %s fail%s, %s warn (report.md, Checks)' % (
            text(c['fail']), ' (%s)' % join(c['hosts'], ', ') if c['fail'] > 0 else '', text(c['warn'])))
    return out


def progress(results: list[Doc]) -> str:
    """A fleet point's progress: "N/M hosts ok, median G GB/s, min G
    (HOST)" from the hosts' result.json."""
    ok = [r for r in results if r.get('status') == 'ok']
    vs = sorted(r['gbs'] for r in ok)
    n = len(vs)
    line = '%d/%d hosts ok' % (len(ok), len(results))
    if n:
        med = vs[(n - 1) // 2] if n % 2 else (vs[n // 2 - 1] + vs[n // 2]) / 2
        lo = min(ok, key=lambda r: r['gbs'])
        line += ', median %s GB/s, min %s (%s)' % (g(med), g(lo['gbs']), text(lo.get('host')))
    return line


# summary.csv of a fleet: the columns of one host's run, the host's, and
# the host's metadata (tswap.stats.fleet_meta FIELDS; metadata_note: why
# they are empty)
CSV_META = ('model', 'firmware', 'capacity_bytes', 'logical_block_size', 'pcie_speed', 'pcie_width',
            'pcie_max_speed', 'pcie_max_width', 'numa_node', 'scheduler', 'nr_requests', 'max_sectors_kb',
            'fs_type', 'kernel', 'cpus', 'memory_bytes', 'metadata_note')
CSV_HEADER = ('host,address,point,repeat,status,direction,backend,tensor_size,block_size,queue_depth,submit,'
              'window,threads,iodepth,gbs,ops_per_s,clat_p50_us,clat_p99_us,clat_p999_us,usr_cpu_pct,sys_cpu_pct,'
              'io_submit_per_gb,pct_of_ceiling,error,' + ','.join(CSV_META))


def _r(x: Any, n: int) -> Any:
    return '' if x is None else jround(x * n) / n


def summary_csv(results: list[Doc], fl: Doc, meta: tuple[str, ...] = CSV_META) -> list[str]:
    """A fleet's summary.csv lines: CSV_HEADER, then each tswap run of each
    host (results.json), its figures rounded, % of its host's own ceiling,
    and the host's metadata fields named in meta (fleet.json)."""
    H = fl['hosts']
    out = [CSV_HEADER]
    for r in results:
        if r.get('kind') != 'tswap':
            continue
        h = get(H, r.get('host_index'))
        c = _or(get(h, 'ceiling'), {})
        ceil = get(c, r.get('rw'))
        # a ceiling of 0 has no percentage (jq's division by zero stopped the CSV)
        pc = _r(100 * r['gbs'] / ceil, 10) if truthy(ceil) and ceil != 0 and truthy(r.get('gbs')) else ''
        row = [r.get(k) for k in ('host', 'address', 'point', 'repeat', 'status', 'rw', 'backend', 'tensor', 'block',
                                  'qd', 'submit', 'window', 'threads', 'iodepth')]
        row += [_r(r.get('gbs'), 10000), _r(r.get('ops_per_s'), 100), _r(r.get('clat_p50_us'), 10),
                _r(r.get('clat_p99_us'), 10), _r(r.get('clat_p999_us'), 10), _r(r.get('usr_cpu'), 100),
                _r(r.get('sys_cpu'), 100), _r(r.get('submit_per_gb'), 10), pc, r.get('error')]
        for k in meta:
            x = get(h, 'meta', 'note') if k == 'metadata_note' else get(h, 'fields', k)
            row.append(x if truthy(x) else None)
        out.append(','.join(field(x) for x in row))
    return out
