# SPDX-License-Identifier: GPL-2.0-only
"""tswap.plan.points: the plan text (grid.sh's lines) as
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


def settings(**kw):
    from tswap.plan.config import Settings
    base = dict(target='/t', target_kind='file', size='64m', size_bytes=67108864, grid='quick',
                grid_desc='d', runtime='1', ramp='', io_size='', repeat=3, engine='/e',
                ceiling=1, ceiling_bs='1m', ceiling_qd=64, ceiling_jobs=1, ds_version='',
                steady='off', fixed_runtime=0, ss_crit='bw_slope:2%', ss_dur=5,
                precondition='auto', created='now', host='h', kernel='k', fio='fio-3.33',
                targets=['/t'])
    base.update(kw)
    return Settings(**base)


def test_sweep_json_steady_fields_only_with_steady_state_on():
    # docs/sweep.md "Steady state": ss and ss_dur say fio's criterion
    from tswap.plan.config import sweep_json
    off = sweep_json(settings())
    assert off['ss'] is None and off['ss_dur'] is None and off['ds_version'] is None
    on = sweep_json(settings(steady='on', ds_version='0.16.4'))
    assert (on['ss'], on['ss_dur'], on['ds_version']) == ('bw_slope:2%', 5, '0.16.4')
    assert on['ceiling'] is True and on['fixed_runtime'] is False
    assert 'fleet' not in on and sweep_json(settings(fleet={'hosts': []}))['fleet'] == {'hosts': []}
    # workload: only when given (a recorded run's sweep.json has no key)
    assert 'workload' not in on
    doc = sweep_json(settings(workload='checkpoint', fleet={'hosts': []}))
    assert list(doc)[-2:] == ['workload', 'fleet'] and doc['workload'] == 'checkpoint'


def test_damage_names_the_point_and_field_of_a_hand_edited_plan():
    # settings.sh load_config refuses such a plan.json on --resume
    from tswap.plan.points import damage
    good = {'points': parse(LINE + '\n')}
    assert damage(good) is None
    assert damage({'points': []}) == 'no points'
    assert damage([]) == 'not {"points": [...]}'
    bad = {'points': [dict(good['points'][0], qd=-8.0)]}
    assert damage(bad) == 'point 1 (read-x): qd: not a whole number of 0 or more: -8'
    bad = {'points': [dict(good['points'][0], rw='randrw')]}
    assert damage(bad) == 'point 1 (read-x): rw: not one of read, write, readwrite: "randrw"'
    bad = {'points': [dict(good['points'][0], tensor=1.5)]}
    assert damage(bad).endswith('tensor: not a whole number of 0 or more: 1.5')
    # a checkpoint run's points (--workload checkpoint) are whole
    assert damage({'points': [dict(good['points'][0], kind='checkpoint')]}) is None
    bad = {'points': [dict(good['points'][0], kind='zero')]}
    assert damage(bad) == 'point 1 (read-x): kind: not one of tswap, checkpoint, ceiling: "zero"'
