# SPDX-License-Identifier: GPL-2.0-only
"""tswap.plan.points: the plan text (sweep/lib/grid.sh's lines) as
plan.json's points, and the facts the sweep asks of them (grid.sh
plan_facts, ranks.sh rank_slots)."""
import pytest

from tswap.plan.points import facts, parse

LINE = 'read-x\ttswap\tread\tlibaio\t16777216\t1048576\t8\tblock\toverlap\t2\t1'


def test_a_line_becomes_a_point_with_its_ceiling_key():
    (p,) = parse(LINE + '\n')
    assert p == {'point': 'read-x', 'kind': 'tswap', 'rw': 'read', 'backend': 'libaio',
                 'tensor': 16777216, 'block': 1048576, 'qd': 8, 'submit': 'block',
                 'window': 'overlap', 'threads': 2, 'iodepth': 1, 'ranks': 1, 'ckey': 'read'}
    (q,) = parse(LINE + '\t3')
    assert q['ranks'] == 3 and q['ckey'] == 'read-n3'


def test_a_short_or_non_numeric_line_is_refused():
    with pytest.raises(ValueError):
        parse('read-x\ttswap\tread')
    with pytest.raises(ValueError):
        parse(LINE.replace('16777216', 'big'))


def test_facts_writes_one_rank_points_and_handles():
    rw = LINE.replace('\tread\t', '\treadwrite\t', 1)
    # a one-rank read, and a readwrite of 2 ranks: rank 0 and 1 each an io
    # and a write handle
    assert facts(LINE + '\n' + rw + '\t2\n') == ['1', 'true', '0\tio', '0\twrite', '1\tio',
                                                 '1\twrite']
    # reads of 1 rank only: nothing written, no multi-handle points
    assert facts(LINE + '\n') == ['0', 'true']
    # 3 ranks of reads: 3 io handles, no write handles
    assert facts(LINE + '\t3\n') == ['0', 'false', '0\tio', '1\tio', '2\tio']
