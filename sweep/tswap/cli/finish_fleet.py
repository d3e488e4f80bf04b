# SPDX-License-Identifier: GPL-2.0-only
"""The finish stage of a fleet run (tswap.cli.finish --fleet), the hosts
those of sweep.json's fleet.hosts (id, target), in host order.

before the plots: results.json (every host and repeat, by host, then
runkey); per host hosts/ID/results.json and aggregate.json, its points
against its own PCIe link (preflight/ID/meta.json); fleet-results.json (a
host's median per point is one run: tswap.results.fleet); the fleet's
aggregate.json (medians over hosts, the CV across hosts flags nothing,
against the fastest host link); fleet.json (each host's figures and
verdict, the fleet's median, spread and outliers: tswap.stats.fleet; each
host's metadata: tswap.stats.fleet_meta); summary.csv (one row per host,
point and repeat: tswap.report.fleet_text); best-aio.json.

after the plots: fleet.json with each host's stack checks (tswap.stats.check
on the collector's output the probe brought back, preflight/ID/target/
meta.kv, against tswap.stats.check settings_for; judged across the
fleet: tswap.stats.fleet_check), junit.xml (tswap.report.junit), report.md
(tswap.report.fleet, fleet_text), compare.md, the copy of junit.xml
(--junit-out), the summary, and the exit status: 0 all hosts pass, 1 some
below the bar or outliers, 3 a host or a run failed.
"""

from __future__ import annotations

import argparse
import os
import shutil
from types import MappingProxyType
from typing import Any

from .. import jqjson
from ..report.fleet import report
from ..report.fleet_text import check_report, meta_report, summary, summary_csv
from ..report.junit import junit
from ..report.md import notes
from ..results.fleet import host_runs
from ..stats.aggregate import aggregate
from ..stats.check import Settings, checks, settings_for
from ..stats.fleet import Bars, verdicts
from ..stats.fleet_check import with_checks
from ..stats.fleet_meta import with_meta
from . import StageError, read_json, read_json_opt
from .files import write_text
from .finish import _read, collate, documents, limits, out, results_of, warn, write_best, write_compare, write_json

NOT_PROBED = MappingProxyType({'collected': False,
                               'note': 'metadata: not collected (the host was not probed in this run)'})
FILES = ('Files: junit.xml (one testcase per host and check), summary.csv (one row per host, point and'
         ' repeat), fleet.json (figures and checks per host), results.json, aggregate.json (fleet medians),'
         ' best-aio.json, hosts/ID/ (per host), preflight/ID/ (the probe), points/POINT.rN/ID/ (job.fio,'
         ' run.sh, fio.client.out, fio.json, fio.stderr, result.json).\n')


def _opt(path: str, what: str, none: Any) -> Any:
    return read_json(path, what) if os.path.isfile(path) else none


def before_plots(a: argparse.Namespace) -> int:
    d = a.rundir
    sweep = read_json(os.path.join(d, 'sweep.json'), 'sweep.json')
    ids = [h['id'] for h in sweep['fleet']['hosts']]
    plan = read_json(os.path.join(d, 'plan.json'), 'plan')
    res = sorted(results_of(d, 3), key=lambda r: jqjson.sort_key([jqjson.get(r, 'host_index'),
                                                                  jqjson.get(r, 'runkey')]))
    res = write_json(os.path.join(d, 'results.json'), res)
    links = [read_json_opt(os.path.join(d, 'preflight', i, 'meta.json'), 'meta') for i in ids]
    haggs, hres = [], []
    for h, i in enumerate(ids):
        hd = os.path.join(d, 'hosts', i)
        os.makedirs(hd, exist_ok=True)
        r = write_json(os.path.join(hd, 'results.json'),
                       [x for x in res if jqjson.equal(jqjson.get(x, 'host_index'), h)])
        hres.append(r)
        haggs.append(write_json(os.path.join(hd, 'aggregate.json'),
                                aggregate(r, plan, limits(a), None, [links[h]])))
    fr = write_json(os.path.join(d, 'fleet-results.json'), host_runs(haggs, plan['points']))
    agg = write_json(os.path.join(d, 'aggregate.json'), aggregate(fr, plan, limits(a, across=True), None, links))
    pre = [os.path.join(d, 'preflight', i) for i in ids]
    fl = verdicts(sweep, haggs, hres, [_opt(os.path.join(p, 'result.json'), 'preflight result', None) for p in pre],
                  plan['points'], Bars(min_read=a.min_read, min_write=a.min_write, outlier_pct=a.outlier_pct))
    fl = write_json(os.path.join(d, 'fleet.json'),
                    with_meta(fl, [_opt(os.path.join(p, 'meta.json'), 'meta', dict(NOT_PROBED)) for p in pre]))
    write_text(os.path.join(d, 'summary.csv'), ''.join(x + '\n' for x in summary_csv(res, fl)))
    write_best(a, agg, plan)
    return 0


def host_checks(pre: str, target: str, settings: Any) -> str:
    """A host's stack checks as one compact JSON line: tswap.stats.check on
    its probe's collector output, or {collected: false, note} saying why
    there are none (a host whose checks do not run has none)."""
    meta = os.path.join(pre, 'meta.json')
    try:
        if read_json(meta, 'meta').get('collected') is True:
            st = settings
            s = Settings(float(st['block_size']), float(st['queue_depth']), float(st['threads']),
                         str(st['backend']))
            return jqjson.dumps(checks(_read(os.path.join(pre, 'target', 'meta.kv')), s, target, ''),
                                compact=True)
    except Exception:  # noqa: BLE001 (as the shell had it: any failure, no checks)
        pass
    if not os.path.isfile(meta):
        return jqjson.dumps(dict(NOT_PROBED), compact=True)
    m = read_json(meta, 'meta')
    note = m.get('note') if m.get('collected') is False else 'metadata: the checks could not read it'
    return jqjson.dumps({'collected': False, 'note': note}, compact=True)


def copy_junit(src: str, dst: str) -> None:
    """junit.xml copied to --junit's dst as `mkdir -p; cp` did: its
    directories made, into it as junit.xml when it is a directory,
    through a symlink; StageError naming --junit when it cannot be (a
    FIFO, under a file, a full filesystem)."""
    try:
        os.makedirs(os.path.dirname(dst) or '.', exist_ok=True)
        shutil.copyfile(src, os.path.join(dst, 'junit.xml') if os.path.isdir(dst) else dst)
    except OSError as e:
        what = '%s: ' % e.filename if e.filename and e.filename != dst else ''
        raise StageError('--junit %s: %s%s' % (dst, what, e.strerror or e)) from None


def after_plots(a: argparse.Namespace) -> int:
    d = a.rundir
    sweep = read_json(os.path.join(d, 'sweep.json'), 'sweep.json')
    hosts = sweep['fleet']['hosts']
    plan = read_json(os.path.join(d, 'plan.json'), 'plan')
    aio = os.path.join(d, 'best-aio.json')
    settings = jqjson.loads(jqjson.dumps(settings_for(read_json(aio, 'best-aio'), plan.get('points')),
                                         compact=True))
    hc = ''.join(host_checks(os.path.join(d, 'preflight', h['id']), h['target'], settings) + '\n'
                 for h in hosts)
    fl = write_json(os.path.join(d, 'fleet.json'),
                    with_checks(read_json(os.path.join(d, 'fleet.json'), 'fleet'),
                                documents(hc, 'host checks'), settings))
    write_text(os.path.join(d, 'junit.xml'), junit(fl, sweep.get('created')))
    nt = os.path.join(d, 'notes.txt')
    hagg = [read_json(os.path.join(d, 'hosts', h['id'], 'aggregate.json'), 'aggregate.json') for h in hosts]
    agg = read_json(os.path.join(d, 'aggregate.json'), 'aggregate.json')
    best = read_json_opt(aio, 'best-aio.json') if os.path.isfile(aio) else read_json(aio, 'best-aio.json')
    lines = (report(sweep, fl, agg, hagg, best,
                    notes(_read(nt), collate()) if os.path.isfile(nt) else '')
             + meta_report(fl) + check_report(fl))
    write_text(os.path.join(d, 'report.md'), ''.join(x + '\n' for x in lines) + '## Plots\n\n'
               + a.plot_links + FILES)
    if a.compare and write_compare(a, agg):
        return 2
    if a.junit_out:
        copy_junit(os.path.join(d, 'junit.xml'), a.junit_out)
    out('\n' + ''.join(x + '\n' for x in summary(fl)))
    out('report:     %s/report.md\ncsv:        %s/summary.csv\njunit:      %s/junit.xml%s\n'
        % (d, d, d, ' (copied to %s)' % a.junit_out if a.junit_out else ''))
    n = fl['summary']['error']
    if n > 0:
        warn('%s host(s) with errors (see report.md, Errors); rerun what failed with --resume %s'
             % (jqjson.text(n), a.rerun))
        return 3
    return 1 if fl['summary']['fail'] != 0 else 0

