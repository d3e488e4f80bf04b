# SPDX-License-Identifier: GPL-2.0-only
"""The pick and its confidence end to end, in-process: a grid's plan
(tswap.plan.grid, tswap.plan.expand, tswap.plan.points), fixture
result.json arrays, aggregate.json (tswap.stats.aggregate with the
sweep's limits), best-aio.json (tswap.report.best_aio), report.md's lines
(tswap.report.head, tswap.report.sections), the summary on stdout
(tswap.report.summary) and the run verdict (tswap.report.verdict).
Flagged points are never picked, ties within noise are declared and
resolved by the cost order, and a run without a trustworthy point has no
aio block. Each document goes through its JSON text as on disk (jqjson)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional

import pytest

from tswap import jqjson
from tswap.cli.run_local import CV_FLAG, FINISH_LIMITS
from tswap.plan import expand, grid
from tswap.plan.points import parse
from tswap.report import head, sections
from tswap.report.best_aio import best_aio
from tswap.report.summary import summary_text
from tswap.report.verdict import run_verdict
from tswap.stats.aggregate import Limits, aggregate

t = jqjson.text
jround = jqjson.jround


def c(v: Any) -> str:
    """v as jq -c prints it."""
    return jqjson.dumps(v, compact=True)


def disk(doc: Any) -> Any:
    """doc as read back from its file."""
    return jqjson.loads(jqjson.dumps(doc) + '\n')


def limits(across_hosts: bool = False) -> Limits:
    """The sweep's limits of the pick (tswap.cli.run_local FINISH_LIMITS;
    state.sh CV_FLAG, CV_REL, CV_MAX, CACHE_FACTOR, COST_TOL)."""
    kw = {k[2:]: float(v) for k, v in zip(FINISH_LIMITS[::2], FINISH_LIMITS[1::2])}
    return Limits(cvtrust=not across_hosts, **kw)


def plan(tmp: Path, *lines: str, ceilings: Optional[tuple[int, int]] = None) -> list[dict]:
    """plan.json's points of a grid file of lines, with the ceiling lines
    of (iodepth, fio jobs) (the sweep's: 64, 1) when given; the engine's
    threads limit taken as 1024."""
    f = tmp / 't.grid'
    f.write_text(''.join(x + '\n' for x in lines))
    g, _ = grid.load(str(f), f.read_text(), '/', lambda: 1024)
    text = expand.expand(grid.with_defaults(g)).lines
    if ceilings is not None:
        text = expand.add_ceilings(tuple(text), *ceilings)
    return disk(parse('\n'.join(text) + '\n'))


def P(rw: str, qd: int, threads: int = 1, submit: str = 'block', block: str = '1m') -> str:
    """A point name of the test grids."""
    return '%s-libaio-t16m-b%s-q%s-%s-overlap-p%s-d1' % (rw, block, qd, submit, threads)


def runs(pl: list[dict], point: str, *gbs: Any, steady: Any = None) -> list[dict]:
    """One ok result.json per GB/s (repeats 1..n) of point; a GB/s of "x"
    is a failed run; steady: the runs' steady."""
    p = next(x for x in pl if x['point'] == point)
    return [dict(p, runkey='%s.r%d' % (point, i), repeat=i, status='error' if g == 'x' else 'ok',
                 error='boom' if g == 'x' else '', gbs=None if g == 'x' else g, steady=steady,
                 ops_per_s=1, clat_p50_us=10, clat_p99_us=20, clat_p999_us=30, submit_per_gb=2)
            for i, g in enumerate(gbs, 1)]


def result(pl: list[dict], runkey: str, point: str, repeat: int, gbs: float, status: str = 'ok') -> dict:
    """One result.json object of the plan point (without steady)."""
    p = next(x for x in pl if x['point'] == point)
    return dict(p, runkey=runkey, repeat=repeat, status=status, error='' if status == 'ok' else 'boom',
                gbs=gbs if status == 'ok' else None, ops_per_s=1, clat_p50_us=10, clat_p99_us=20,
                clat_p999_us=30, submit_per_gb=2)


def with_ops(rs: list[dict], n: int) -> list[dict]:
    """Each run one that completed n tensor ops of 16 MiB (one handle)."""
    return [dict(r, tensor=16777216, handles=[{'bytes': n * 16777216}]) for r in rs]


class Run:
    """A run directory: results.json, aggregate.json, best-aio.json."""

    def __init__(self, d: Path, pl: list[dict]):
        self.d, self.plan = d, pl
        self.results: list = []
        self.agg: dict = {}
        self.best: dict = {}

    def agg_of(self, rs: list[dict], ds_version: str = '') -> None:
        self.results = disk(rs)
        self.agg = disk(aggregate(self.results, disk(self.plan), limits()))
        self.best = disk(best_aio(self.agg, ds_version))
        (self.d / 'aggregate.json').write_text(jqjson.dumps(self.agg) + '\n')
        (self.d / 'best-aio.json').write_text(jqjson.dumps(self.best) + '\n')

    def point(self, name: str) -> dict:
        return next(p for p in self.agg['points'] if p['point'] == name)

    def summary(self) -> list[str]:
        return summary_text(self.agg, str(self.d), self.best).rstrip('\n').split('\n')

    def verdict(self) -> tuple[int, bool]:
        return run_verdict(self.results, self.agg, self.best)


def report_lines(name: str, agg: dict, *args: float) -> str:
    """report.md's lines of the section head/sections NAME, as report.md
    has them."""
    f = getattr(head, name, None) or getattr(sections, name)
    return '\n'.join(f(agg, *args))


def lines(text: str) -> list[str]:
    return text.split('\n')


@pytest.fixture
def run(tmp_path):
    return lambda pl: Run(tmp_path, pl)


def test_the_fastest_point_above_the_ceiling_with_a_cv_flag_failed_or_not_steady_is_skipped(tmp_path, run):
    pl = plan(tmp_path, 'rw read', 'tensor 16m', 'qd 2 4 8 16 32', ceilings=(64, 1))
    r = run(pl)
    r.agg_of(runs(pl, 'ceiling-read-fio-libaio-bs1m-qd64', 2.0, 2.0, 2.0)
             + runs(pl, P('read', 32), 2.5, 2.5, 2.5)      # 125% of the ceiling: a cache
             + runs(pl, P('read', 16), 1.9, 1.5, 2.1)      # CV 17%
             + runs(pl, P('read', 8), 1.95, 'x', 1.95)     # partial
             + runs(pl, P('read', 4), 1.9, 1.9, 1.9, steady=False)
             + runs(pl, P('read', 2), 1.50, 1.52, 1.51))
    b = r.agg['best']
    assert (b['read']['point'], b['aio_source']['point']) == (P('read', 2), P('read', 2))
    assert c([p['flags'] for p in r.agg['points']]) == '[[],["not steady"],["partial"],["cv"],["above ceiling"]]'
    assert b['read']['confidence'] == 'only'
    assert b['read']['verdict'] == ('%s is the only trustworthy point: nothing to compare it with '
                                    '(4 other read point(s) flagged: Warnings)' % P('read', 2))
    assert c(r.best['aio']['queue_depth']) == '2'
    # the report's warnings name each flagged point
    w = report_lines('report_warnings', r.agg, float(CV_FLAG))
    assert '%s: not steady' % P('read', 4) in w
    assert '%s**: 2.5 GB/s is more than 10%% above' % P('read', 32) in w
    assert re.fullmatch(r'[0-9]+ false', '%d %s' % (r.verdict()[0], t(r.verdict()[1])))


def test_a_points_cv_limit_is_5pc_or_twice_the_median_cv_of_the_others_at_most_20pc(tmp_path, run):
    # alike noisy points tie (the cheapest whose interval reaches within 3%
    # of the fastest median is picked), one far noisier is flagged
    pl = plan(tmp_path, 'rw read', 'tensor 16m', 'qd 2 4 8 16 32')
    r = run(pl)
    # every point varies by about 10% (a busy host): CVs 8-9%; q32 far
    # noisier than the rest: CV 40%
    r.agg_of(runs(pl, P('read', 2), 1.60, 1.90, 1.75) + runs(pl, P('read', 4), 1.70, 2.00, 1.80)
             + runs(pl, P('read', 8), 1.55, 1.85, 1.70) + runs(pl, P('read', 16), 1.65, 1.95, 1.85)
             + runs(pl, P('read', 32), 1.00, 2.40, 1.90))
    assert c([p['point'] for p in r.agg['points'] if p['flags'] != []]) == c([P('read', 32)])
    # q32's limit: twice the median of the other four CVs, not 5%
    assert t(jround(r.point(P('read', 32))['cv_limit'] * 1000)) == '170'
    # the alike points tie; the pick is the cheapest of those whose
    # interval reaches within 3% of the fastest median (q16, 1.85: 1.7945):
    # q2, whose fastest repeat is 1.90 though its median is 1.75 (a window
    # on the medians picked q4; docs/sweep.md, How the pick is made)
    b = r.agg['best']['read']
    assert [t(b['point']), t(b['tie']), t(len(b['tied'])), t(b['confidence'])] == [P('read', 2), 'true', '4', 'tie']
    assert b['verdict'] == ('%s, %s, %s and %s tie within noise; %s is the cheapest of them'
                            % (P('read', 2), P('read', 16), P('read', 4), P('read', 8), P('read', 2)))
    assert ("%s: coefficient of variation 40.2%% over 3 repeats (> 17%%: 5%%, or twice the median CV of "
            "the run's other points when that is more, at most 20%%" % P('read', 32)
            in report_lines('report_warnings', r.agg, float(CV_FLAG)))
    # quiet others keep the 5% floor, even with only two points: a point's
    # own CV never raises its limit
    r.agg_of(runs(pl, P('read', 2), 1.50, 1.51, 1.52) + runs(pl, P('read', 8), 1.55, 1.85, 1.70))
    assert c([[p['point'], p['cv_limit']] for p in r.agg['points'] if 'cv' in p['flags']]) == \
        '[["%s",0.05]]' % P('read', 8)
    # a busy host: every point varies by 25-40%: the limit stops at 20%,
    # nothing is trusted
    r.agg_of(runs(pl, P('read', 2), 1.00, 2.00, 1.50) + runs(pl, P('read', 4), 1.10, 1.90, 1.40)
             + runs(pl, P('read', 8), 0.90, 2.10, 1.60))
    assert c([[jround(p['cv_limit'] * 100), 'cv' in p['flags']] for p in r.agg['points']
              if p.get('cv') is not None]) == '[[20,true],[20,true],[20,true]]'
    assert c(r.agg['best']['read']) == 'null'


def test_overlapping_intervals_tie_resolved_by_threads_then_pinned_memory_then_block_submit(tmp_path, run):
    pl = plan(tmp_path, 'rw write', 'tensor 16m', 'block 1m 4m', 'qd 8 32', 'submit block single', 'threads 1 2')
    r = run(pl)
    r.agg_of(runs(pl, P('write', 32, 2), 2.00, 2.05, 1.98)           # top median, but 2 threads
             # tied, 1 thread: 32 x 1m = 8 x 4m pinned; block submit wins
             + runs(pl, P('write', 32, 1, 'single'), 1.96, 1.97, 2.01)
             + runs(pl, P('write', 32, 1, 'block'), 1.95, 1.96, 1.99)
             + runs(pl, P('write', 8, 1, 'block', '4m'), 1.97, 1.99, 1.96)
             # less pinned memory (8 x 1m), but its max 1.97 is below the
             # top's min 1.98: not tied, not picked
             + runs(pl, P('write', 8, 1, 'block'), 1.90, 1.97, 1.93)
             + runs(pl, P('write', 8, 2, 'single'), 1.2, 1.21, 1.19))   # clearly slower
    b = r.agg['best']['write']
    # 32 x 1m block and 8 x 4m block pin the same 32 MiB: GB/s breaks the tie (1.97 > 1.96)
    assert [t(b['point']), t(b['tie']), t(len(b['tied'])), t(b['runner_up']['point']),
            t(jround(b['margin_pct'] * 10))] == [P('write', 8, 1, 'block', '4m'), 'true', '4', P('write', 32, 2), '-15']
    v = ('%s, %s, %s and %s tie within noise; %s is the cheapest of them'
         % (P('write', 8, 1, 'block', '4m'), P('write', 32, 2), P('write', 32, 1, 'single'),
            P('write', 32, 1, 'block'), P('write', 8, 1, 'block', '4m')))
    assert b['verdict'] == v
    # the report's first lines: the pick, then one verdict: a tie names no
    # margin (its runner-up is tied with it)
    out = report_lines('report_pick', r.agg)
    assert ('**Pick** (best-aio.json): libaio, block 4M, queue depth 8, block submit, overlap window, '
            '1 thread(s)') in lines(out)[0]
    assert lines(out)[1] == '- verdict: ' + v
    assert '% above' not in out and 'margin' not in out
    # best-aio.json's reason and the summary on stdout: the same sentence
    assert best_aio(r.agg, '')['reason'] == v
    assert r.summary()[2] == 'pick:       %s (best-aio.json): %s' % (P('write', 8, 1, 'block', '4m'), v)


def test_disjoint_intervals_with_3_repeats_are_a_clear_pick_with_1_repeat_low_confidence(tmp_path, run):
    pl = plan(tmp_path, 'rw read', 'tensor 16m', 'qd 8 16')
    r = run(pl)
    r.agg_of(runs(pl, P('read', 16), 2.0, 2.1, 2.05) + runs(pl, P('read', 8), 1.5, 1.6, 1.55))
    v = ("%s is the best: 32.3%% above the runner-up %s, outside the noise (its slowest of 3 repeats, "
         "2 GB/s, beats the runner-up's fastest, 1.6 GB/s)" % (P('read', 16), P('read', 8)))
    b = r.agg['best']['read']
    assert [t(b['point']), t(b['tie']), t(jround(b['margin_pct'])), t(b['confidence']), t(b['verdict'])] == \
        [P('read', 16), 'false', '32', 'clear', v]
    # the report: the margin, and no tie
    out = report_lines('report_pick', r.agg)
    assert lines(out)[1] == '- verdict: ' + v
    assert lines(out)[2] == '- best read: 2.05 GB/s (min-max 2-2.1): ' + v
    assert 'tie' not in out
    # a direction without points gets no line
    assert 'best write' not in out
    r.agg_of(runs(pl, P('read', 16), 2.0) + runs(pl, P('read', 8), 1.5))
    b = r.agg['best']['read']
    assert [t(b['tie']), t(b['confidence']), t(b['verdict'])] == [
        'false', 'low', '%s leads the runner-up %s by 33.3%% on 1 repeat(s) per point: too few to tell a '
        'win from a tie (use --repeat 3 or more)' % (P('read', 16), P('read', 8))]


def test_a_repeat_counts_whole_tensor_ops_10_ops_a_run_tie_2_9pc_apart_1000_do_not(tmp_path, run):
    # the tie test widens the min-max by one op of each run
    pl = plan(tmp_path, 'rw read', 'tensor 16m', 'qd 8 16')
    r = run(pl)

    def ops(n):
        r.agg_of(with_ops(runs(pl, P('read', 16), 2.06, 2.07, 2.08) + runs(pl, P('read', 8), 1.99, 2.01, 2.02), n))
    # min-max 2.06-2.08 against 1.99-2.02: apart; +-10% (1 op of 10)
    # overlaps: a tie, the cheaper queue depth 8 picked
    ops(10)
    b = r.agg['best']['read']
    assert [t(b['point']), t(b['tie'])] == [P('read', 8), 'true']
    assert b['verdict'] == ('%s and %s tie within noise (min-max intervals widened by one tensor op); '
                            '%s is the cheapest of them' % (P('read', 8), P('read', 16), P('read', 8)))
    q16 = [p for p in r.agg['points'] if p['point'].endswith('q16-block-overlap-p1-d1')]
    assert len(q16) == 1 and q16[0]['lo'] == 2.06 and q16[0]['tlo'] == 2.06 * 0.9
    # +-0.1%: still apart, a clear pick that says the op
    ops(1000)
    b = r.agg['best']['read']
    assert [t(b['point']), t(b['tie'])] == [P('read', 16), 'false']
    assert re.search(r'is the best: 3% above the runner-up .*, outside the noise \(its slowest of 3 repeats '
                     r'less one tensor op, 2\.058 GB/s, beats the runner-up.s fastest plus one, 2\.022 GB/s\)$',
                     b['verdict'])


def test_a_points_cv_limit_is_at_least_one_tensor_op_6_ops_17pc_600_ops_5pc(tmp_path, run):
    pl = plan(tmp_path, 'rw read', 'tensor 16m', 'qd 8 16')
    r = run(pl)

    def ops(n):
        r.agg_of(with_ops(runs(pl, P('read', 16), 2.0, 2.4, 2.1) + runs(pl, P('read', 8), 2.0, 2.01, 2.02), n))
        q16 = [p for p in r.agg['points'] if '-q16-' in p['point']]
        assert len(q16) == 1
        return q16[0]
    # CV 9.9%: within one op of 6 (16.7%), trusted
    p = ops(6)
    assert '\t'.join(t(x) for x in (p['cv_flag'], p['trusted'], jround(p['cv_limit'] * 1000))) == 'false\ttrue\t167'
    # 600 ops a run: the limit is the 5% floor, and 9.9% is flagged
    p = ops(600)
    assert '\t'.join(t(x) for x in (p['cv_flag'], p['trusted'], jround(p['cv_limit'] * 1000),
                                     ','.join(p['flags']))) == 'true\tfalse\t50\tcv'


def test_no_trustworthy_point_gives_no_aio_block_and_a_report_that_says_so(tmp_path, run):
    # exit code 4: tests/sweep-pick.bats
    pl = plan(tmp_path, 'rw read', 'tensor 16m', 'qd 8 16', ceilings=(64, 1))
    r = run(pl)
    r.agg_of(runs(pl, 'ceiling-read-fio-libaio-bs1m-qd64', 1.0, 1.0, 1.0)
             + runs(pl, P('read', 16), 1.3, 1.3, 1.3)     # above the ceiling
             + runs(pl, P('read', 8), 0.5, 0.9, 0.7))     # CV
    assert c(r.agg['best']) == '{"read":null,"write":null,"combined":null,"readwrite":null,"aio_source":null}'
    assert [c('aio' in r.best), c(r.best['trusted'])] == ['false', 'false']
    out = report_lines('report_pick', r.agg)
    assert '**No trustworthy pick**' in lines(out)[0]
    assert '"aio"' not in out
    # each direction says why it has no pick and what to do, in one line,
    # in the report and on stdout
    why = ('none: all 2 read points with a result are flagged (1 above ceiling, 1 cv): a cache is serving '
           'them; use a target larger than memory, or a block device')
    assert '- best read: ' + why in lines(out)
    assert 'best write' not in out
    s = r.summary()
    assert s[0] == 'best read:  ' + why
    assert s[1] == 'best write: -'
    assert '%d %s' % (r.verdict()[0], t(r.verdict()[1])) == '0 true'


def test_best_aio_has_exactly_the_aio_keys_that_the_deepspeed_release_reads(tmp_path, run):
    # and says the range (0.14, 0.15, 0.16.3, 0.16.4 to 0.19.5)
    pl = plan(tmp_path, 'rw read', 'tensor 16m', 'qd 8', 'threads 2')
    r = run(pl)
    r.agg_of(runs(pl, P('read', 8, 2), 1.5))
    base = '"block_size":1048576,"queue_depth":8'
    tail = '"single_submit":false,"overlap_events":true'

    def best(v):
        return disk(best_aio(r.agg, v))
    # the default: the newest known, 0.19.5 (intra_op_parallelism from
    # 0.16.4), with the pick's verdict as "reason", which DeepSpeed ignores
    b = best('')
    assert b.pop('reason') == '%s is the only trustworthy point: nothing to compare it with' % P('read', 8, 2)
    assert c(b) == '{"deepspeed_versions":">=0.16.4","aio":{%s,"intra_op_parallelism":2,%s,"use_gds":false}}' % (
        base, tail)
    for v in ('0.16.4', '0.17', '0.19.5'):
        b = best(v)
        assert c([b['deepspeed_versions'], list(b['aio'])]) == \
            '[">=0.16.4",["block_size","queue_depth","intra_op_parallelism","single_submit","overlap_events","use_gds"]]'
    # 0.15.0 to 0.16.3 read thread_count, and use_gds
    for v in ('0.15', '0.15.0', '0.16.3'):
        b = best(v)
        del b['reason']
        assert c(b) == '{"deepspeed_versions":">=0.15.0,<0.16.4","aio":{%s,"thread_count":2,%s,"use_gds":false}}' % (
            base, tail)
    # before 0.15.0: thread_count and no use_gds
    for v in ('0.14', '0.14.5', '0.3.15'):
        b = best(v)
        del b['reason']
        assert c(b) == '{"deepspeed_versions":">=0.3.15,<0.15.0","aio":{%s,"thread_count":2,%s}}' % (base, tail)


# --- from tests/sweep-lib.bats: aggregate.json's figures ---------------------------

def test_the_ceiling_of_a_direction_is_its_faster_ceiling_point_of_one_job_or_several(tmp_path):
    # the ceiling lines and their jobs: tests/sweep-lib.bats
    pl = plan(tmp_path, 'rw read write', 'tensor 16m', 'block 1m', 'qd 8', 'threads 1 4', ceilings=(64, 4))
    rs = [result(pl, 'ceiling-read-fio-libaio-bs1m-qd64.r1', 'ceiling-read-fio-libaio-bs1m-qd64', 1, 2.0),
          result(pl, 'ceiling-read-fio-libaio-bs1m-qd64-j4.r1', 'ceiling-read-fio-libaio-bs1m-qd64-j4', 1, 1.5),
          result(pl, 'ceiling-write-fio-libaio-bs1m-qd64.r1', 'ceiling-write-fio-libaio-bs1m-qd64', 1, 1.0),
          result(pl, 'ceiling-write-fio-libaio-bs1m-qd64-j4.r1', 'ceiling-write-fio-libaio-bs1m-qd64-j4', 1, 1.25)]
    agg = disk(aggregate(disk(rs), disk(pl), limits()))
    assert c(agg['ceiling']) == '{"read":2,"write":1.25}'


def test_aggregate_medians_cv_pct_of_ceiling_flags_and_the_best_picks(tmp_path):
    # medians and CV over repeats, % of ceiling, flags, and the best read,
    # write, combined and aio picks
    pl = plan(tmp_path, 'rw read write', 'backend libaio io_uring', 'tensor 4m', 'qd 8 16', ceilings=(64, 1))
    rl8, rl16 = 'read-libaio-t4m-b1m-q8-block-overlap-p1-d1', 'read-libaio-t4m-b1m-q16-block-overlap-p1-d1'
    ru8, wl8 = 'read-io_uring-t4m-b1m-q8-block-overlap-p1-d1', 'write-libaio-t4m-b1m-q8-block-overlap-p1-d1'
    wl16, wu16 = 'write-libaio-t4m-b1m-q16-block-overlap-p1-d1', 'write-io_uring-t4m-b1m-q16-block-overlap-p1-d1'
    rs = [result(pl, 'ceiling-read-fio-libaio-bs1m-qd64.r1', 'ceiling-read-fio-libaio-bs1m-qd64', 1, 2.0),
          result(pl, 'ceiling-write-fio-libaio-bs1m-qd64.r1', 'ceiling-write-fio-libaio-bs1m-qd64', 1, 1.0),
          # rl8: repeats 1.0, 1.2, 1.1 -> median 1.1, CV 0.0909 (flagged)
          result(pl, rl8 + '.r1', rl8, 1, 1.0), result(pl, rl8 + '.r2', rl8, 2, 1.2),
          result(pl, rl8 + '.r3', rl8, 3, 1.1),
          result(pl, rl16 + '.r1', rl16, 1, 1.5), result(pl, rl16 + '.r2', rl16, 2, 1.5),
          # io_uring reads fastest, and above 1.1 x the ceiling (a cache)
          result(pl, ru8 + '.r1', ru8, 1, 2.5),
          result(pl, wl8 + '.r1', wl8, 1, 0.9),
          result(pl, wl16 + '.r1', wl16, 1, 0.3), result(pl, wl16 + '.r2', wl16, 2, 0, 'error'),
          result(pl, wu16 + '.r1', wu16, 1, 0.95)]
    agg = disk(aggregate(disk(rs), disk(pl), limits()))
    pts = {p['point']: p for p in agg['points']}
    assert c(agg['ceiling']) == '{"read":2,"write":1}'
    p = pts[rl8]
    assert ' '.join(t(x) for x in (p['gbs'], jround(p['cv'] * 1e4), p['cv_flag'], p['pct_ceiling'], p['runs'],
                                   p['ok_runs'], p['status'])) == '1.1 909 true 55.00000000000001 3 3 ok'
    p = pts[wl16]
    assert ' '.join(t(x) for x in (p['gbs'], p['cv'], p['status'], p['errors'])) == '0.3 null partial ["boom"]'
    p = pts[ru8]
    assert ' '.join(t(x) for x in (p['above_ceiling'], p['pct_ceiling'])) == 'true 125'
    assert [p['point'] for p in agg['points'] if p['status'] == 'not run'] == [
        'read-io_uring-t4m-b1m-q16-block-overlap-p1-d1', 'write-io_uring-t4m-b1m-q8-block-overlap-p1-d1']
    # flags: the reasons not to trust a point; a flagged point is never a pick
    assert c([{'q': p['qd'], 'rw': p['rw'], 'b': p['backend'], 'flags': p['flags'], 'trusted': p['trusted']}
              for p in agg['points'] if p['gbs'] is not None]) == (
        '[{"q":8,"rw":"read","b":"libaio","flags":["cv"],"trusted":false},'
        '{"q":16,"rw":"read","b":"libaio","flags":[],"trusted":true},'
        '{"q":8,"rw":"read","b":"io_uring","flags":["above ceiling"],"trusted":false},'
        '{"q":8,"rw":"write","b":"libaio","flags":[],"trusted":true},'
        '{"q":16,"rw":"write","b":"libaio","flags":["partial"],"trusted":false},'
        '{"q":16,"rw":"write","b":"io_uring","flags":[],"trusted":true}]')
    # best read and write: the highest median among trusted points; the
    # io_uring read above the ceiling (2.5) is skipped
    assert '%s %s' % (t(agg['best']['read']['point']), t(agg['best']['write']['point'])) == '%s %s' % (rl16, wu16)
    # combined needs a trusted read and write of the same settings: libaio
    # q8's read has a CV flag, q16's write is partial: none
    assert c(agg['best']['combined']) == 'null'
    # so best-aio.json comes from the best trusted libaio point of one
    # direction, never from io_uring
    a = agg['best']['aio_source']
    assert c({'backend': a['backend'], 'qd': a['qd'], 'why': a['why']}) == \
        '{"backend":"libaio","qd":16,"why":"Best libaio read GB/s"}'
    assert c(disk(best_aio(agg, ''))) == (
        '{"deepspeed_versions":">=0.16.4","aio":{"block_size":1048576,"queue_depth":16,'
        '"intra_op_parallelism":1,"single_submit":false,"overlap_events":true,"use_gds":false},'
        '"reason":"%s is the only trustworthy point: nothing to compare it with (2 other read point(s) '
        'flagged: Warnings)"}' % rl16)
    assert c(agg['trust']) == '{"trusted":3,"flagged":3,"libaio_with_result":4}'


def test_aggregate_one_direction_best_aio_of_its_best_libaio_point_none_empty(tmp_path):
    # with one direction only, best-aio.json takes the best libaio point
    # of it; with none, {}
    pl = plan(tmp_path, 'rw read', 'qd 8 16')
    rs = [result(pl, 'r1', 'read-libaio-t64m-b1m-q8-block-overlap-p1-d1', 1, 1.0),
          result(pl, 'r2', 'read-libaio-t64m-b1m-q16-block-overlap-p1-d1', 1, 1.4)]
    agg = disk(aggregate(disk(rs), disk(pl), limits()))
    a = agg['best']['aio_source']
    assert c({'c': agg['best']['combined'], 'w': agg['best']['write'], 'ceiling': agg['ceiling'],
              'a': {'qd': a['qd'], 'why': a['why']}}) == \
        '{"c":null,"w":null,"ceiling":{},"a":{"qd":16,"why":"Best libaio read GB/s"}}'
    agg = disk(aggregate(disk([]), disk(pl), limits()))
    assert c(disk(best_aio(agg, ''))) == '{}'


def test_aggregate_an_even_number_of_runs_without_latencies_gives_null_medians(tmp_path):
    # a 2-host fleet's ceiling rows, across hosts: no error
    pl = plan(tmp_path, 'rw read', 'qd 8', ceilings=(64, 1))
    rs = [dict(result(pl, 'ceiling-read-fio-libaio-bs1m-qd64.h%d' % i, 'ceiling-read-fio-libaio-bs1m-qd64', i, g),
               ops_per_s=None, clat_p50_us=None, clat_p99_us=None, clat_p999_us=None)
          for i, g in ((1, 2.0), (2, 1.0))]
    agg = disk(aggregate(disk(rs), disk(pl), limits(across_hosts=True)))
    assert c(agg['ceiling']) == '{"read":1.5}'
