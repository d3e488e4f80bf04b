# SPDX-License-Identifier: GPL-2.0-only
"""tswap.cli.sweep_args: tswap-sweep's options, each value's rule and
which options go together (docs/sweep.md "Options"); the run's state
(tswap.cli.sweep_main) gives each value back as given."""
from dataclasses import replace

import pytest

from tswap.cli import sweep_main
from tswap.cli.sweep_args import parse
from tswap.cli.sweep_host import Home
from tswap.plan.values import Refusal


def refused(*argv):
    with pytest.raises(Refusal) as e:
        parse(list(argv))
    assert e.value.code == 2
    return e.value.message


def test_values_normalised_and_flags():
    o = parse(['--runtime=007', '--ramp', '02', '--budget', '0010', '-q', '--no-ceiling'])
    assert (o.runtime, o.ramp, o.budget, o.quiet, o.ceiling, o.settings_seen) == \
        ('7', '2', '10', True, False, True)
    assert not parse(['--quiet', '--dry-run', '--min-read-gbs', '2']).settings_seen


def test_help_version_and_list_grids_end_the_parse_where_they_stand():
    assert parse(['--help', '--bogus']).action == 'help'
    assert parse(['--list-grids', '--target', '']).action == 'list-grids'
    assert refused('--target', '', '--help') == '--target: an empty path (see --help)'
    # --flag=value: the value is an argument of its own
    assert refused('--dry-run=1') == "unknown argument '1' (see --help)"


def test_each_rule_names_the_option():
    assert refused('--size') == '--size needs a value (see --help)'
    assert refused('--runtime', '0') == '--runtime: not a positive integer: 0 (see --help)'
    assert refused('--runtime', '604801') == '--runtime: at most 604800 s (a week): 604801 (see --help)'
    assert refused('--repeat', '101') == '--repeat: at most 100 passes over the grid: 101 (see --help)'
    assert refused('--repeat', '0') == '--repeat: not a positive integer: 0 (see --help)'
    assert refused('--min-read-gbs', '-1').startswith('--min-read-gbs: not a positive number of GB/s')
    assert refused('--min-read-gbs', '0.0').startswith('--min-read-gbs: not a positive number')
    assert refused('--io-size', '0') == '--io-size: must not be 0 (see --help)'
    assert refused('--ds-version', '0.3.14').startswith('--ds-version: DeepSpeed 0.3.14')
    assert refused('--ds-version', '0.16.4\n').endswith('(e.g. 0.16.4): 0.16.4\\n (see --help)')
    assert refused('--outlier-pct', '101').startswith('--outlier-pct: not a percentage')


def test_options_that_exclude_or_need_each_other():
    assert refused('--budget', '5', '--exhaustive').startswith('--budget and --exhaustive')
    assert refused('--io-size', '16m', '--runtime', '3').startswith('--runtime and --io-size')
    assert refused('--precondition', '--no-precondition').startswith('--precondition and')
    assert refused('--resume', 'r', '--size', '1g').startswith('--resume uses the run')
    assert refused('--junit', 'j.xml').endswith('need --hosts (fleet mode) (see --help)')
    assert refused('--force') == '--force only means something with --destructive (see --help)'
    assert refused('--emit-jobs', 'd', '--hosts', 'h').startswith('--emit-jobs writes')


def test_the_state_gives_back_every_value():
    # a newline is refused on the command line (parse), not in the state
    o = replace(parse(['--min-read-gbs', '2', '--destructive']), target="a b'c\n$(x)")
    h = Home('/s', '/s', '', '/w')
    v = sweep_main.state(h, o, None, '1.5')
    assert [v[k] for k in ('TARGET', 'MIN_READ', 'DESTRUCTIVE', 'BUDGET_T0', 'DEFAULT_TARGET', 'FLEET')] == [
        "a b'c\n$(x)", '2', '1', '1.5', '/w/tswap-scratch.swap', '0']


def resume(tmp_path, cfg, plan=None, tsv=None, **opts):
    from tswap.cli.sweep_resume import load
    run = tmp_path / 'run'
    run.mkdir()
    (run / 'sweep.json').write_text(cfg)
    if plan is not None:
        (run / 'plan.json').write_text(plan)
    if tsv is not None:
        (run / 'plan.tsv').write_text(tsv)
    r = load(Home('/s', '/s', '', str(tmp_path)), parse(['--resume', 'run'] + list(opts.get('argv', ()))))
    return dict(r.values), dict(r.arrays)


PLAN = ('{"points": [{"point": "read-x", "kind": "tswap", "rw": "read", "backend": "libaio",'
        ' "tensor": 1048576, "block": 1048576, "qd": 4, "submit": "block", "window": "overlap",'
        ' "threads": 1, "iodepth": 1, "ranks": 2}]}')


CFG = ('{"target": "/t", "size": "16m", "size_bytes": 16777216, "grid": "g", "runtime": "1",'
       ' "ramp": "0", "repeat": 3, "engine": "/e.so", "ceiling": true}')


def test_resume_reads_the_runs_own_settings_and_plan(tmp_path):
    # settings.sh load_config before the port: sweep.json's values as jq's tostring
    v, a = resume(tmp_path, CFG, PLAN,
                  argv=['--ds-version', '0.16.4'])
    assert (v['RUN'], v['TARGET'], v['SIZE_BYTES'], v['REPEAT'], v['CEILING'], v['CEILING_QD']) == \
        (str(tmp_path / 'run'), '/t', '16777216', '3', '1', '64')
    assert (v['STEADY'], v['PRECONDITION'], v['IO_SIZE'], v['DS_VERSION'], v['ENGINE']) == \
        ('off', 'off', '', '0.16.4', '/e.so')
    assert a['TARGETS'] == ('/t',)
    assert v['PLAN_TEXT'] == 'read-x\ttswap\tread\tlibaio\t1048576\t1048576\t4\tblock\toverlap\t1\t1\t2'
    # a run from before plan.json: its plan.tsv, trailing newlines dropped
    old = tmp_path / 'old'
    old.mkdir()
    tsv = 'read-x\ttswap\tread\tlibaio\t1048576\t1048576\t4\tblock\toverlap\t1\t1'
    v, _ = resume(old, CFG, tsv=tsv + '\n\n')
    assert v['PLAN_TEXT'] == tsv


def test_resume_refuses_what_is_not_a_run(tmp_path):
    for cfg, code, msg in (('{', 3, 'does not parse'), ('null', 3, 'does not parse'),
                           ('', 3, 'settings missing'), ('[1]', 3, 'settings missing'),
                           ('{"targets": []}', 3, 'settings missing')):
        d = tmp_path / str(len(list(tmp_path.iterdir())))
        d.mkdir()
        with pytest.raises(Refusal) as e:
            resume(d, cfg, PLAN)
        assert (e.value.code, e.value.message.endswith(msg)) == (code, True), cfg
    d = tmp_path / 'plan'
    d.mkdir()
    with pytest.raises(Refusal) as e:
        resume(d, CFG, '{"points": []}')
    assert e.value.code == 3 and e.value.prog == 'tswap' and 'damaged or edited by hand' in e.value.message


def test_an_empty_value_is_refused_naming_the_option():
    # a CI's unset variable: --resume "" started a new run, --hosts "" ran
    # here, --compare "" compared nothing
    for opt in ('--resume', '--hosts', '--compare', '--engine', '--size', '--runtime', '--rw',
                '--grid', '--junit', '--repeat'):
        assert refused(opt, '') == '%s: empty; give a value or leave the option out (see --help)' \
            % opt, opt
        assert refused('%s=' % opt).startswith(opt + ': empty'), opt


def test_a_newline_in_a_path_or_list_is_refused_not_cut():
    # the shell read up to the newline: --target $'/x\ny' used /x
    assert refused('--target', '/tmp/x\ny') == \
        '--target: a newline in the path: /tmp/x\ny (see --help)'
    assert refused('--rw', 'read\nwrite').startswith('--rw: a newline in the list')
    assert refused('--out=/o\n').startswith('--out: a newline in the path')


def test_resume_refuses_damaged_settings_before_the_shell_sees_them(tmp_path):
    import json
    base = json.loads(CFG)
    for edit, msg in (({'repeat': 'TARGETS[$(touch PWNED)0]'},
                       'repeat: not a whole number from 1 to 100: "TARGETS[$(touch PWNED)0]"'),
                      ({'repeat': None}, 'repeat: not a whole number from 1 to 100: null'),
                      ({'size_bytes': 'a[$(id)]'}, 'size_bytes: not a whole number from'),
                      ({'runtime': -3}, 'runtime: not a whole number from 1 to 604800: -3'),
                      ({'ceiling_qd': 1e30}, 'ceiling_qd: not a whole number from 1 to 4096: 1e+30'),
                      ({'size': '1x'}, 'size: not a size: "1x"'),
                      ({'precondition': 'yes'}, 'precondition: not one of auto, on, off: "yes"'),
                      ({'target': None, 'targets': None}, 'targets: not a list of paths: [null]'),
                      ({'targets': ['/a', 7]}, 'targets: not a list of paths: ["/a",7]')):
        d = tmp_path / str(len(list(tmp_path.iterdir())))
        d.mkdir()
        with pytest.raises(Refusal) as e:
            resume(d, json.dumps(dict(base, **edit)), PLAN)
        assert e.value.code == 3, edit
        assert msg in e.value.message and e.value.message.endswith('(damaged or edited by hand)'), \
            e.value.message
    # an io_size run has no runtime or ramp
    d = tmp_path / 'io'
    d.mkdir()
    v, _ = resume(d, json.dumps(dict(base, io_size='8m', runtime='', ramp='')), PLAN)
    assert (v['IO_SIZE'], v['RUNTIME'], v['RAMP']) == ('8m', '', '')


def test_resume_refuses_a_damaged_plan_tsv_in_one_line(tmp_path):
    # a run from before plan.json: its plan.tsv is checked as plan.json is
    for tsv, msg in (('x\ttswap\n', 'plan line with 2 fields'),
                     ('p\ttswap\tread\tlibaio\tabc\t1\t1\tblock\toverlap\t1\t1\n', 'abc'),
                     ('p\ttswap\tsideways\tlibaio\t1\t1\t1\tblock\toverlap\t1\t1\n', 'rw: not one')):
        d = tmp_path / str(len(list(tmp_path.iterdir())))
        d.mkdir()
        with pytest.raises(Refusal) as e:
            resume(d, CFG, tsv=tsv)
        assert e.value.code == 3 and msg in e.value.message and \
            e.value.message.endswith('plan.tsv: ' + e.value.message.split('plan.tsv: ', 1)[1])


def test_resume_reads_every_recorded_run():
    # the settings' checks accept what runs wrote (tests/fixtures/runs)
    import os
    from tswap.cli.sweep_resume import load
    runs = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'runs')
    names = sorted(n for n in os.listdir(runs) if os.path.isfile(os.path.join(runs, n, 'sweep.json')))
    assert len(names) >= 10
    from tswap.plan.values import Refusal
    for n in names:
        o = parse(['--resume', os.path.join(runs, n)])
        if n.startswith('budget'):
            # a --budget run is refused once read (docs/sweep.md "Budget")
            with pytest.raises(Refusal, match='is a --budget run: its rounds were planned'):
                load(Home('/s', '/s', '', '/'), o)
            continue
        v = dict(load(Home('/s', '/s', '', '/'), o).values)
        assert v['REPEAT'].isdigit() and v['SIZE_BYTES'].isdigit(), n


def test_a_path_that_is_not_utf8_is_refused_naming_the_option():
    for opt in ('--target', '--out', '--engine', '--hosts', '--grid'):
        assert refused(opt, '/p\udcff') == ("%s /p\\xff: not UTF-8 text; the run's JSON documents"
                                            " keep paths as UTF-8: rename it (see --help)" % opt)
