# SPDX-License-Identifier: GPL-2.0-only
"""The pick's verdict sentence, generated from the decision's own data
(docs/sweep.md "How the pick is made", step 4; issue 38, item 3).

pick() (tswap.stats.pick) fills a Decision; sentence() turns it into the
one sentence aggregate.json's best.*.verdict, best-aio.json's reason,
report.md and the summary on stdout carry. Nothing in a sentence is
said that the Decision does not hold: a point is called the cheapest only
when no tied point is cheaper, and a point is said to be out of the
tolerance only with the figure that puts it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..jqjson import jround, text


@dataclass(frozen=True)
class Out:
    """A tied point cheaper than the pick that the tolerance left out:
    its name and its reach (GB/s: the top of its interval, widened by one
    tensor op when the decision's intervals are)."""
    point: str
    reach: float


@dataclass(frozen=True)
class Decision:
    """What the pick decided, with the figures its sentence names.

    rw: the direction ("read", "write", "readwrite"; None for a combined
    pair); point: the pick; confidence: "only", "tie", "low", "clear";
    tied: the pick first, then the other tied points, fastest first;
    within: how many tied points are within the tolerance; out: the tied
    points cheaper than the pick that are not (cheapest first); top and
    top_gbs: the fastest median's point and GB/s; tol_pct: the tolerance,
    % of top_gbs; widened: the intervals are widened by one tensor op;
    runner_up, margin_pct: the fastest other point and the pick's % above
    it; repeats: the fewer ok repeats of the pick and the runner-up;
    ok_runs: the pick's; slow: the pick's slowest repeat (less one op
    when widened), fast: the runner-up's fastest (plus one op when
    widened); flagged: points of rw with a result that are flagged."""
    rw: Optional[str]
    point: str
    confidence: str
    tied: tuple[str, ...] = ()
    within: int = 1
    out: tuple[Out, ...] = ()
    top: str = ''
    top_gbs: float = 0.0
    tol_pct: float = 3.0
    widened: bool = False
    runner_up: Optional[str] = None
    margin_pct: Optional[float] = None
    repeats: int = 0
    ok_runs: int = 0
    slow: Optional[float] = None
    fast: Optional[float] = None
    flagged: int = 0


def names(xs: list[str] | tuple[str, ...]) -> str:
    """"a", "a and b", "a, b and c"."""
    if len(xs) <= 1:
        return xs[0] if xs else ''
    return ', '.join(xs[:-1]) + ' and ' + xs[-1]


def r1(x: Optional[float]) -> Optional[float]:
    """x rounded to one decimal (jq: . * 10 | round / 10); None stays None."""
    return None if x is None else jround(x * 10) / 10


def g3(x: Optional[float]) -> Optional[float]:
    """x rounded to three decimals; None stays None."""
    return None if x is None else jround(x * 1000) / 1000


def _gbs(d: Decision) -> str:
    """The unit of d's figures: GB/s, or for a combined pair (rw None)
    the read + write sum (tswap.stats.aggregate's pairs: gbs, lo, hi,
    tlo, thi are each read's plus write's)."""
    return 'GB/s' if d.rw else 'GB/s read + write'


def _tie(d: Decision) -> str:
    widened = ' (min-max intervals widened by one tensor op)' if d.widened else ''
    head = '%s tie within noise%s; ' % (names(d.tied), widened)
    tol = text(r1(d.tol_pct))
    if not d.out:
        # no tied point is cheaper than the pick (the tolerance may have
        # left out costlier ones)
        return head + '%s is the cheapest of them' % d.point
    one = len(d.out) == 1
    reach = ('fastest repeat' if one else 'fastest repeats') + (' plus one op' if d.widened else '')
    outs = names([o.point for o in d.out])
    fig = text(g3(max(o.reach for o in d.out)))
    why = ('%s %s cheaper, but %s %s, %s%s %s, %s more than %s%% below the fastest median, '
           '%s %s (%s)') % (
        outs, 'is' if one else 'are', 'its' if one else 'their', reach,
        '' if one else 'at most ', fig, _gbs(d), 'is' if one else 'are', tol, text(g3(d.top_gbs)),
        _gbs(d), d.top)
    if d.within == 1:
        return head + '%s is picked: %s' % (d.point, why)
    return head + '%s is the cheapest of the %s within %s%% of the fastest median; %s' % (
        d.point, text(d.within), tol, why)


def sentence(d: Decision) -> str:
    """The verdict of decision d, one of the forms docs/sweep.md names:
    the only point, a tie (won by the cheapest, or by a costlier point when
    the cheaper ones are out of the tolerance), too few repeats, a clear
    win."""
    if d.confidence == 'only':
        s = '%s is the only trustworthy point: nothing to compare it with' % d.point
        if d.flagged > 0:
            s += ' (%d other %s point(s) flagged: Warnings)' % (d.flagged, d.rw)
        return s
    if d.confidence == 'tie':
        return _tie(d)
    if d.confidence == 'low':
        return ('%s leads the runner-up %s by %s%% on %s repeat(s) per point: '
                'too few to tell a win from a tie (use --repeat 3 or more)') % (
            d.point, d.runner_up, text(r1(d.margin_pct)), text(d.repeats))
    if d.widened:
        beat = (' less one tensor op, %s %s, beats the runner-up\'s fastest plus one, %s %s'
                % (text(g3(d.slow)), _gbs(d), text(g3(d.fast)), _gbs(d)))
    else:
        beat = (', %s %s, beats the runner-up\'s fastest, %s %s'
                % (text(g3(d.slow)), _gbs(d), text(g3(d.fast)), _gbs(d)))
    return ('%s is the best: %s%% above the runner-up %s, outside the noise '
            '(its slowest of %s repeats%s)') % (
        d.point, text(r1(d.margin_pct)), d.runner_up, text(d.ok_runs), beat)


def budget_stopped(verdict: str, not_run: int, points: int, once_s: Optional[float]) -> str:
    """Verdict with what a --budget run that stopped leaves out
    (docs/sweep.md "Budget", Behind; tswap.stats.budget.stopped): the
    points not run of all, that the pick is the best of those that ran,
    and, when budget.json's stop has it (once_s, s), the budget that
    runs every point once on this machine. not_run: tswap points not run
    (pruned ones ran), points: all tswap points."""
    once = '; about %s s run every point once here' % text(once_s) if once_s is not None else ''
    return '%s (the budget ran out before %s of the %s points ran: the best of those that ran%s)' % (
        verdict, text(not_run), text(points), once)
