# SPDX-License-Identifier: GPL-2.0-only
"""Recorded sweep runs (tests/fixtures/runs/NAME/, made with the bash+jq
sweep) re-rendered by the Python package: each output the package can
render today must come out byte for byte as recorded (issue 36, "Same
outputs"). tests/fixtures/runs/README.md says how each run was made.

RENDERERS is the table: an output's path in the run directory (a glob
pattern) -> the function that renders it from the run directory's other
files. A stage ported to Python adds its entry here; an output with no
entry yet is reported as skipped, "no Python renderer yet: FILE", never
left out.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

from tswap.cli.plots import bw_plots
from tswap.report.junit import junit
from tswap.report.plots import hosts_plot, run_notes, run_plots
from tswap.results.plot_data import records
from tswap import jqjson
from tswap.report.best_aio import best_aio
from tswap.report.csv import summary_csv
from tswap.report.fleet_text import summary_csv as fleet_csv
from tswap.report.md import RunLines, notes, report_md
from tswap.report.summary import compare_md
from tswap.report.verdict import Thresholds, thresholds
from tswap.results.fleet import host_runs
from tswap.stats.aggregate import Limits, aggregate

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / 'tests' / 'fixtures' / 'runs'

# What a run writes that a re-render must reproduce (text only: no PNGs,
# no gnuplot logs); each fixture holds those its run wrote.
OUTPUTS = ('results.json', 'aggregate.json', 'summary.csv', 'best-aio.json',
           'report.md', 'junit.xml', 'compare.md', 'fleet.json',
           'fleet-results.json', 'hosts/*/results.json',
           'hosts/*/aggregate.json', 'plots/*.dat', 'plots/*.gp')


class Pending(Exception):
    """This output of this run has no Python renderer yet (the reason)."""


def runs() -> list[Path]:
    return sorted(d for d in FIXTURES.iterdir() if d.is_dir())


def index() -> dict[str, dict[str, str]]:
    """index.tsv: NAME, the run's original directory, its exit status and
    the options a --resume re-render takes again (tests/sweep-rerender.bats)."""
    out = {}
    for line in (FIXTURES / 'index.tsv').read_text(encoding='utf-8').splitlines():
        if not line or line.startswith('#'):
            continue
        name, path, status, args = (line.split('\t') + [''])[:4]
        out[name] = {'path': path, 'status': status, 'args': args}
    return out


def limits(across_hosts: bool = False) -> Limits:
    """The run's trust limits, as the sweep passes them to its finish
    stage (tswap.cli.run_local FINISH_LIMITS, state.sh's values; the runs
    were recorded with them: a change there must show here)."""
    from tswap.cli.run_local import FINISH_LIMITS
    opts = dict(zip(FINISH_LIMITS[::2], FINISH_LIMITS[1::2]))

    def val(name: str) -> float:
        return float(opts['--' + name])
    return Limits(cvflag=val('cvflag'), cvrel=val('cvrel'), cvmax=val('cvmax'),
                  cache=val('cache'), costtol=val('costtol'),
                  cvtrust=not across_hosts)


def load(path: Path) -> Any:
    return jqjson.loads(path.read_text(encoding='utf-8'))


def load_opt(path: Path) -> Optional[Any]:
    """A document that may be absent (meta.json): None then, or when
    empty (results.sh aggregate_json passes it only when it exists)."""
    if not path.is_file():
        return None
    text = path.read_text(encoding='utf-8')
    return jqjson.loads(text) if text.strip() else None


def is_fleet(run: Path) -> bool:
    return bool(load(run / 'sweep.json').get('fleet'))


def json_text(doc: Any) -> str:
    return jqjson.dumps(doc) + '\n'


# --- renderers: (run directory, output path in it) -> the output's text -------

def render_aggregate(run: Path, rel: str) -> str:
    """aggregate.json. One host (results.sh collect): the runs of
    results.json, with meta.json as .meta when the run has one. A fleet
    (fleet-report.sh collect_fleet): the host medians of
    fleet-results.json, across hosts (their CV does not flag), no meta."""
    if (run / 'budget.json').exists():
        raise Pending('aggregate.json of a --budget run (budget.sh '
                      'budget_into_aggregate: the rounds, pruned points, used_s)')
    plan = load(run / 'plan.json')
    if is_fleet(run):
        return json_text(aggregate(load(run / 'fleet-results.json'), plan,
                                   limits(across_hosts=True)))
    return json_text(aggregate(load(run / 'results.json'), plan, limits(),
                               load_opt(run / 'meta.json')))


def render_host_aggregate(run: Path, rel: str) -> str:
    """hosts/ID/aggregate.json (fleet-report.sh collect_fleet): that
    host's runs as one host's, without meta."""
    host = run / Path(rel).parent
    return json_text(aggregate(load(host / 'results.json'), load(run / 'plan.json'),
                               limits()))


def option(run: Path, name: str) -> str:
    """The value of option name in the run's re-render options (index.tsv),
    "" without it."""
    args = index()[run.name]['args'].split()
    return args[args.index(name) + 1] if name in args else ''


def render_best_aio(run: Path, rel: str) -> str:
    """best-aio.json (results.sh write_best_aio): the newest releases' keys
    (no run here was given --ds-version)."""
    return json_text(best_aio(load(run / 'aggregate.json')))


def render_summary_csv(run: Path, rel: str) -> str:
    """summary.csv of one host (results.sh write_csv) or of a fleet
    (fleet-report.sh write_csv_fleet: every host's runs with its metadata)."""
    if is_fleet(run):
        return ''.join(x + '\n' for x in fleet_csv(load(run / 'results.json'), load(run / 'fleet.json')))
    return summary_csv(load(run / 'results.json'), load(run / 'aggregate.json'))


def shell_lines(recorded: str) -> tuple[str, str, str, str]:
    """What the shell still makes of report.md, from the recording: the
    steady-state, bandwidth-log and precondition lines of "How the points
    ran" (steady.sh, bwlog.sh, precondition.sh) and the plot links
    (tswap.report.plots links, from the PNGs, which are not recorded)."""
    lines = recorded.split('\n')
    i = lines.index('## How the points ran') + 2
    how = lines[i:lines.index('', i)]

    def first(*starts: str) -> str:
        return next((x for x in how if x.startswith(starts)), '')
    plots = recorded.split('\n## Plots\n\n', 1)[1].split('Files: ', 1)[0]
    return (first('- steady state', '- fixed runtime'), first('- bandwidth'),
            first('- preconditioned', '- not preconditioned'), plots)


def render_report(run: Path, rel: str) -> str:
    """report.md of one host (report.sh write_report); the notes are the
    points' run's (notes.txt's but the outputs' own, which a render
    replaces: tswap.report.plots run_notes; these renders draw nothing)."""
    if is_fleet(run):
        raise Pending('report.md of a fleet (its Plots section and Files line: fleet-report.sh)')
    steady, bwlog, pre, plots = shell_lines((run / rel).read_text(encoding='utf-8'))
    agg = load(run / 'aggregate.json')
    nt = run / 'notes.txt'
    lines = RunLines(steady=steady, bwlog=bwlog, precondition=pre, plots=plots,
                     notes=notes(run_notes(nt.read_text(encoding='utf-8'))) if nt.is_file() else '',
                     dropped=(run / 'cache-dropped').exists(), cvflag=limits().cvflag,
                     thresholds=tuple(thresholds(agg, Thresholds(option(run, '--min-read-gbs'),
                                                                 option(run, '--min-write-gbs')))))
    return report_md(agg, load(run / 'sweep.json'), load(run / 'best-aio.json'),
                     (run / 'best-aio.json').read_text(encoding='utf-8'),
                     load_opt(run / 'meta.json'), load_opt(run / 'budget.json'), lines)


def render_compare(run: Path, rel: str) -> str:
    """compare.md (report.sh write_compare) against the run --compare names,
    both under the directories they were recorded in."""
    other = option(run, '--compare')
    return compare_md(index()[run.name]['path'], other, load(run / 'aggregate.json'),
                      load(FIXTURES / Path(other).name / 'aggregate.json'))


def host_ids(run: Path) -> list[str]:
    return [h['id'] for h in load(run / 'sweep.json')['fleet']['hosts']]


def render_fleet_results(run: Path, rel: str) -> str:
    """fleet-results.json (fleet-report.sh collect_fleet): each host's
    medians as one run per host and point."""
    return json_text(host_runs([load(run / 'hosts' / i / 'aggregate.json') for i in host_ids(run)],
                               load(run / 'plan.json')['points']))


def render_junit(run: Path, rel: str) -> str:
    """a fleet's junit.xml (fleet-report.sh write_junit), from fleet.json
    and sweep.json's created."""
    return junit(load(run / 'fleet.json'), load(run / 'sweep.json').get('created'))


def render_plot(run: Path, rel: str) -> str:
    """plots/NAME.dat or .gp (tswap.cli.plots): from aggregate.json and
    the points' bandwidth logs, a fleet's hosts plot from fleet.json; the
    paths in them are the run's original directory's."""
    orig = index()[run.name]['path']
    name, ext = rel[len('plots/'):].rsplit('.', 1)
    if name == 'hosts':
        dat, plot = hosts_plot(orig, load(run / 'fleet.json'))
        assert plot is not None
        return dat if ext == 'dat' else plot.gp
    from tswap.executor.base import BWLOG_MSEC
    plots, bw = run_plots(orig, records(load(run / 'aggregate.json')))
    plots += bw_plots(orig, bw, BWLOG_MSEC, root=str(run))
    got = {p.name: p for p in plots}
    assert name in got, '%s: not among the plots rendered: %s' % (rel, sorted(got))
    return got[name].dat if ext == 'dat' else got[name].gp


RENDERERS: dict[str, Callable[[Path, str], str]] = {
    'plots/*.dat': render_plot,
    'plots/*.gp': render_plot,
    'aggregate.json': render_aggregate,
    'hosts/*/aggregate.json': render_host_aggregate,
    'best-aio.json': render_best_aio,
    'summary.csv': render_summary_csv,
    'report.md': render_report,
    'compare.md': render_compare,
    'fleet-results.json': render_fleet_results,
    'junit.xml': render_junit,
}


def renderer(rel: str) -> Optional[Callable[[Path, str], str]]:
    for pattern, fn in RENDERERS.items():
        if fnmatch.fnmatchcase(rel, pattern) and rel.count('/') == pattern.count('/'):
            return fn
    return None


def recorded_outputs() -> list[tuple[str, str]]:
    out = []
    for run in runs():
        for pattern in OUTPUTS:
            for f in sorted(run.glob(pattern)):
                out.append((run.name, f.relative_to(run).as_posix()))
    return out


# --- tests ----------------------------------------------------------------------

@pytest.mark.parametrize('name,rel', recorded_outputs(),
                         ids=['%s:%s' % x for x in recorded_outputs()])
def test_rerender_is_byte_identical(name: str, rel: str) -> None:
    run = FIXTURES / name
    fn = renderer(rel)
    if fn is None:
        pytest.skip('no Python renderer yet: %s' % rel)
    try:
        got = fn(run, rel)
    except Pending as e:
        pytest.skip('no Python renderer yet: %s' % e)
    want = (run / rel).read_text(encoding='utf-8')
    if got != want:
        # the first line that differs, not two whole documents
        g, w = got.splitlines(), want.splitlines()
        i = next((i for i, (a, b) in enumerate(zip(g, w)) if a != b), min(len(g), len(w)))
        pytest.fail('%s/%s differs from the recording at line %d:\n  recorded: %s\n  rendered: %s'
                    % (name, rel, i + 1, w[i] if i < len(w) else '(end)',
                       g[i] if i < len(g) else '(end)'))


def test_the_corpus_is_as_the_issue_names_it() -> None:
    # at least 10 runs, each listed in index.tsv with its inputs
    idx = index()
    names = [r.name for r in runs()]
    assert len(names) >= 10
    assert sorted(idx) == names
    for run in runs():
        for f in ('sweep.json', 'plan.json', 'results.json', 'aggregate.json'):
            assert (run / f).is_file(), '%s has no %s' % (run.name, f)
        assert list(run.glob('points/*/result.json')) or list(run.glob('points/*/*/result.json'))
        assert not list(run.rglob('*.png')), 'PNGs are not recorded'
    # every output a renderer covers exists in some run
    rels = {rel for _, rel in recorded_outputs()}
    for pattern in RENDERERS:
        assert any(fnmatch.fnmatchcase(r, pattern) for r in rels), pattern


def test_the_corpus_stays_small() -> None:
    total = sum(f.stat().st_size for f in FIXTURES.rglob('*') if f.is_file())
    assert total < 2 * 1024 * 1024, '%d bytes' % total
