# SPDX-License-Identifier: GPL-2.0-only
"""The finish of a run, RUN and the options setup() takes (tswap.cli.run_local
finish_stage runs it in the sweep's process): a run's outputs from its
points' results, in this order:

before the plots: RUN/results.json (every points/KEY.rN/result.json, by
runkey), aggregate.json (tswap.stats.aggregate; a --budget run's rounds:
tswap.stats.budget.into_aggregate), summary.csv (tswap.report.csv),
best-aio.json (tswap.report.best_aio) and, for a checkpoint plan,
best-checkpoint.json (tswap.plan.checkpoint). A fleet (--fleet): each
host's hosts/ID/{results,aggregate}.json, fleet-results.json, the
fleet's aggregate.json and fleet.json (tswap.cli.finish_fleet).

the plots: RUN/plots/ (tswap.cli.plots; a fleet's hosts plot too), the
report's links to them (tswap.report.plots links). Their notes in
RUN/notes.txt (a plot gnuplot failed on, no gnuplot) are this render's:
those of an earlier render are removed first, the points' run's kept
(tswap.cli.plots clear_notes), so report.md's notes say what this
render did.

after the plots: report.md (tswap.report.md; a fleet's: tswap.report.fleet,
with fleet.json's stack checks and junit.xml first), compare.md
(--compare, also on stdout), the summary on stdout, and the run's exit
status: 0, 1 a --min-*-gbs bar missed, 3 a run (a fleet: a host) failed,
4 no trustworthy point (3 before 4 before 1), with a line on stderr for 3
and 4. A file that cannot be read or written: one line, exit 3.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import locale
import os
import sys
import time
from typing import Any

from .. import jqjson
from ..plan.checkpoint import best_checkpoint
from ..plan.deepspeed import DEEPNVME, ReleaseError, release, show
from ..report.best_aio import best_aio
from ..report.csv import summary_csv
from ..report.md import RunLines, notes, report_md
from ..report.plots import links
from ..report.summary import budget_summary, compare_md, summary_text
from ..report.verdict import Thresholds, run_verdict, thresholds
from ..stats.aggregate import Limits, aggregate
from ..stats.budget import into_aggregate
from . import StageError, plots, read_json, read_json_opt
from .files import write_text

PROG = 'tswap-sweep'
UNTRUSTED = ('every checkpoint point with a result is flagged (above the ceiling, failed or CV:'
             ' report.md says which); no config is given')


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('rundir', metavar='RUN')
    p.add_argument('--bwlog-msec', metavar='MS', required=True, help="fio's bandwidth log interval (bwlog.sh)")
    for k in ('cvflag', 'cvrel', 'cvmax', 'cache', 'costtol'):
        p.add_argument('--' + k, type=float, required=True)
    p.add_argument('--ds-version', default='')
    p.add_argument('--min-read', default='')
    p.add_argument('--min-write', default='')
    p.add_argument('--budget', default='', help='--budget SECONDS, as given ("" none)')
    p.add_argument('--budget-t0', default='', help="the budget clock's start (bash EPOCHREALTIME)")
    p.add_argument('--fleet', action='store_true', help='a fleet run (sweep.json fleet.hosts)')
    p.add_argument('--outlier-pct', type=float, default=0.0)
    p.add_argument('--junit-out', default='', help='a copy of junit.xml (--junit)')
    for k in ('steady', 'bwlog', 'precondition'):
        p.add_argument('--' + k, default='', help="report.md's line on it")
    p.add_argument('--compare', default='', help='the run directory to compare with (absolute)')
    p.add_argument('--rerun', default='', help='RUN quoted for a shell, for the --resume hint')


def out(s: str) -> None:
    """s on stdout (what the sweep's summary prints); StageError when
    stdout is closed (the outputs are written by then)."""
    if sys.stdout is None:
        raise StageError('stdout is closed: the summary is not printed (the run directory has the outputs)')
    sys.stdout.write(s)


def flush() -> None:
    """stdout flushed, unless it is closed."""
    if sys.stdout is not None:
        sys.stdout.flush()


def warn(msg: str) -> None:
    """A line on stderr, after what stdout has so far (one pipe for both
    keeps the order the shell stages had)."""
    flush()
    print('%s: %s' % (PROG, msg), file=sys.stderr, flush=True)


def warn_tswap(msg: str) -> None:
    """A one-line error, as finish_stage gives a StageError."""
    flush()
    print('tswap: %s' % msg, file=sys.stderr, flush=True)


def results_of(run: str, depth: int) -> list[Any]:
    """Every result.json depth levels below RUN/points (2: KEY.rN/, a
    fleet's 3: KEY.rN/HOST/), outside unfinished .tmp-* directories, as
    `find RUN/points -mindepth D -maxdepth D -name result.json ! -path
    '*/.tmp-*'` found them; unsorted."""
    dirs = [os.path.join(run, 'points')]
    for _ in range(depth - 1):
        nxt = []
        for d in dirs:
            try:
                with os.scandir(d) as it:
                    nxt += [e.path for e in it if e.is_dir(follow_symlinks=False)]
            except OSError:
                pass
        dirs = nxt
    docs = []
    for d in dirs:
        f = os.path.join(d, 'result.json')
        if fnmatch.fnmatchcase(f, '*/.tmp-*') or not os.path.isfile(f):
            continue
        for doc in documents(_read(f), 'result ' + f):
            if not (isinstance(doc, dict) and isinstance(doc.get('runkey'), str)
                    and isinstance(doc.get('point'), str)):
                raise StageError('result %s: not a run\'s result (an object with runkey and point):'
                                 ' damaged or edited by hand' % f)
            docs.append(doc)
    return docs


def documents(text: str, what: str) -> list[Any]:
    """The JSON documents of a stream, as jq -s reads them."""
    dec = json.JSONDecoder(parse_int=float, parse_constant=lambda c: None)
    docs, i = [], 0
    try:
        while True:
            while i < len(text) and text[i] in ' \t\r\n':
                i += 1
            if i >= len(text):
                return docs
            doc, i = dec.raw_decode(text, i)
            docs.append(doc)
    except ValueError as e:
        raise StageError('%s: %s' % (what, e)) from None


def write_json(path: str, doc: Any) -> Any:
    """path (through path.tmp) as jq prints doc; the document as read
    back from it (what a later stage reading the file would get)."""
    text = jqjson.dumps(doc)
    write_text(path, text + '\n')
    return jqjson.loads(text)


def _read(path: str) -> str:
    try:
        with open(path, encoding='utf-8') as f:
            return f.read()
    except (OSError, ValueError) as e:
        raise StageError('%s: %s' % (path, e)) from None


def read_meta(path: str) -> Any:
    """The run's meta.json (None: missing or empty); StageError when it
    is not an object."""
    m = read_json_opt(path, 'meta')
    if m is not None and not isinstance(m, dict):
        raise StageError('meta %s: not an object: damaged or edited by hand' % path)
    return m


def collate() -> object:
    """The sort key of the environment's locale (as sort uses it), or None."""
    try:
        locale.setlocale(locale.LC_COLLATE, '')
    except locale.Error:
        return None
    return locale.strxfrm


def limits(a: argparse.Namespace, across: bool = False) -> Limits:
    """The aggregation's limits (state.sh CV_FLAG, ...); across: a
    fleet's aggregate over hosts (its CV flags nothing)."""
    return Limits(cvflag=a.cvflag, cvrel=a.cvrel, cvmax=a.cvmax, cache=a.cache,
                  costtol=a.costtol, cvtrust=not across)


def used_s(a: argparse.Namespace) -> str:
    """The budget's seconds used so far, 1 decimal (tswap.stats.budget_run.elapsed)."""
    return jqjson.fixed(time.time() - float(a.budget_t0), 1)


def write_best(a: argparse.Namespace, agg: Any, plan: Any) -> None:
    """best-aio.json, and for a checkpoint plan best-checkpoint.json."""
    d = a.rundir
    try:
        write_json(os.path.join(d, 'best-aio.json'), best_aio(agg, a.ds_version))
        if not any(p.get('kind') == 'checkpoint' for p in plan['points']):
            return
        if not release(a.ds_version).checkpoint_writer:
            raise StageError('--ds-version %s: DeepSpeed has no FastFileWriter before %s'
                             % (a.ds_version, show(DEEPNVME)))
        b = (agg.get('best') or {}).get('write')
        if b is not None and b.get('kind') == 'checkpoint':
            doc = best_checkpoint(b, b.get('verdict'), a.ds_version)
        elif any(p.get('kind') == 'checkpoint' and p.get('gbs') is not None
                 for p in agg.get('points') or []):
            doc = {'trusted': False, 'reason': UNTRUSTED}
        else:
            doc = {}
    except ReleaseError as e:
        raise StageError(str(e)) from None
    write_json(os.path.join(d, 'best-checkpoint.json'), doc)


def before_plots(a: argparse.Namespace) -> int:
    """One host's results.json, aggregate.json, summary.csv, best-aio.json."""
    d = a.rundir
    plan = read_json(os.path.join(d, 'plan.json'), 'plan')
    res = sorted(results_of(d, 2), key=lambda r: jqjson.sort_key(jqjson.get(r, 'runkey')))
    res = write_json(os.path.join(d, 'results.json'), res)
    meta = os.path.join(d, 'meta.json')
    agg = aggregate(res, plan, limits(a), read_meta(meta) if os.path.isfile(meta) else None)
    agg = write_json(os.path.join(d, 'aggregate.json'), agg)
    bpath = os.path.join(d, 'budget.json')
    if os.path.isfile(bpath):
        agg = write_json(os.path.join(d, 'aggregate.json'),
                         into_aggregate(agg, read_json(bpath, 'budget'), jqjson.loads(used_s(a))))
    try:
        csv = summary_csv(res, agg)
    except ValueError as e:
        raise StageError('results %s: %s' % (os.path.join(d, 'results.json'), e)) from None
    write_text(os.path.join(d, 'summary.csv'), csv)
    write_best(a, agg, plan)
    return 0


def write_report(a: argparse.Namespace, agg: Any, best: Any) -> None:
    """report.md (tswap.report.md)."""
    d = a.rundir
    best_path = os.path.join(d, 'best-aio.json')
    ckpt = os.path.join(d, 'best-checkpoint.json')
    nt = os.path.join(d, 'notes.txt')
    lines = RunLines(steady=a.steady, bwlog=a.bwlog, precondition=a.precondition,
                     plots=a.plot_links,
                     notes=notes(_read(nt), collate()) if os.path.isfile(nt) else '',
                     dropped=os.path.isfile(os.path.join(d, 'cache-dropped')), cvflag=a.cvflag,
                     thresholds=tuple(thresholds(agg, Thresholds(a.min_read, a.min_write))))
    meta = read_meta(os.path.join(d, 'meta.json'))
    budget = read_json_opt(os.path.join(d, 'budget.json'), 'budget') if a.budget else None
    write_text(os.path.join(d, 'report.md'),
               report_md(agg, read_json(os.path.join(d, 'sweep.json'), 'sweep'), best, _read(best_path),
                         meta, budget, lines, _read(ckpt) if os.path.isfile(ckpt) else ''))


def write_compare(a: argparse.Namespace, agg: Any) -> int:
    """compare.md against --compare's run, also on stdout; 2 when that
    is no finished run."""
    other = a.compare
    if not os.path.isfile(os.path.join(other, 'aggregate.json')):
        warn('--compare: %s has no aggregate.json (not a finished tswap-sweep run)' % other)
        return 2
    text = compare_md(a.rundir, other, agg, read_json(os.path.join(other, 'aggregate.json'), 'aggregate'))
    write_text(os.path.join(a.rundir, 'compare.md'), text)
    out(text)
    return 0


def after_plots(a: argparse.Namespace) -> int:
    """One host's report.md, compare.md, summary and exit status."""
    d = a.rundir
    agg = read_json(os.path.join(d, 'aggregate.json'), 'aggregate')
    best = read_json(os.path.join(d, 'best-aio.json'), 'best-aio')
    write_report(a, agg, best)
    if a.compare and write_compare(a, agg):
        return 2
    out('\n' + summary_text(agg, d, best))
    bpath = os.path.join(d, 'budget.json')
    if a.budget and os.path.isfile(bpath):
        out(budget_summary(a.budget, used_s(a), read_json(bpath, 'budget')) + '\n')
    lines = thresholds(agg, Thresholds(a.min_read, a.min_write))
    out(''.join(x + '\n' for x in lines))
    try:
        nerr, untrusted = run_verdict(read_json(os.path.join(d, 'results.json'), 'results'), agg, best)
    except StageError as e:
        warn_tswap(str(e))
        warn('cannot read %s/results.json, aggregate.json or best-aio.json' % d)
        return 3
    if nerr > 0:
        warn('%d run(s) failed (see report.md, Warnings); rerun them with --resume %s' % (nerr, a.rerun))
        return 3
    if untrusted:
        warn('no trustworthy point: every point with a result is flagged (report.md, Warnings);'
             ' best-aio.json has no aio block')
        return 4
    return 1 if any('FAIL:' in x for x in lines) else 0


def run(a: argparse.Namespace) -> int:
    """The run's exit status. A document that reads but is not what the
    sweep wrote (a field of the wrong type: damaged or edited by hand)
    fails deep in the rules: one line and 3 (a run error), never
    Python's 1 for an uncaught exception, which finish_run would take
    for 1, a --min-*-gbs bar missed."""
    try:
        if a.fleet:
            from . import finish_fleet
            before, after = finish_fleet.before_plots, finish_fleet.after_plots
        else:
            before, after = before_plots, after_plots
        rc = before(a)
        if rc:
            return rc
        plots.draw(a.rundir, a.bwlog_msec, a.fleet)
        a.plot_links = links(plots.pngs(a.rundir, collate()))
        return after(a)
    except (StageError, OSError):
        raise
    except Exception as e:  # noqa: BLE001
        raise StageError('%s: a document of the run%s does not read as the sweep wrote it'
                         ' (damaged or edited by hand?): %s: %s'
                         % (a.rundir, ' or of --compare' if a.compare else '', type(e).__name__, e)) from None
    finally:
        flush()
