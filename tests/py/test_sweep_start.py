# SPDX-License-Identifier: GPL-2.0-only
"""A new run's setup before anything runs: the hosts file of --hosts
(docs/fleet.md "The hosts file"; tswap.plan.hosts) and the budget's
default rule, first plan and too-small refusal (docs/sweep.md "Budget:
successive halving"; tswap.plan.budget_start). No fio, no wall clock.
The real runs: tests/fleet-hosts.bats, tests/sweep-budget.bats."""
import pytest

from tswap.plan import budget_start as bs
from tswap.plan import hosts
from tswap.plan.points import parse
from tswap.plan.values import Refusal


def load(text, target='', engine='/usr/local/lib/fio/tswap.so', utf8=True):
    return hosts.parse(text.split('\n'), '/h', target, engine, utf8)


def refused(text, **kw):
    with pytest.raises(Refusal) as e:
        load(text, **kw)
    assert e.value.code == 2 and e.value.message.endswith(' (see --help)')
    return e.value.message[:-len(' (see --help)')]


def test_tokens_blanks_quotes_and_comments():
    # docs/fleet.md: blanks separate words, "..." keeps blanks, # starts a comment
    assert hosts.tokens('a  "b c"\t"d\\"e" # x y') == ['a', 'b c', 'd"e']
    assert hosts.tokens('a#b') == ['a#b']
    assert hosts.tokens('"" x') == ['', 'x']
    assert hosts.tokens('a "open') is None
    # glibc's spaces in a UTF-8 locale, not the no-break ones
    assert hosts.tokens('a\u2000b\u00a0c') == ['a', 'b\u00a0c']
    assert hosts.tokens('a\u2000b', utf8=False) == ['a\u2000b']


def test_host_port_label_id_and_defaults():
    h = load('# fleet\n\nnode1 target=/t\nnode1,9000 name=n/2 bs=4k iodepth=8', target='/d')
    assert [(x.addr, x.label, x.id, x.target, x.opts, x.where) for x in h] == [
        ('node1,8765', 'node1', 'h01-node1', '/t', (), '/h:3'),
        ('node1,9000', 'n/2', 'h02-n_2', '/d', ('bs=4k', 'iodepth=8'), '/h:4')]
    assert load('ip6:::1,0010 target=/t')[0].label == 'ip6:::1:10'


def test_bad_lines_are_refused_with_file_and_line():
    assert refused('a,b target=/t').startswith("/h:1: 'a,b' is not HOST[,PORT]")
    assert refused('h,70000 target=/t') == '/h:1: port 70000 is out of range'
    assert refused('h,0 target=/t') == '/h:1: port 0 is out of range'
    assert refused('h target=') == '/h:1: target needs a value (target=...)'
    assert refused('h target=/t ioengine=sync').startswith('/h:1: ioengine is set by the sweep')
    assert refused("h target=/t 9x=1").startswith("/h:1: '9x=1' is neither target=")
    assert refused('h target=/t bs=4k;x') == "/h:1: 'bs=4k;x': fio cuts option values at ';'"
    assert refused('h "x') == '/h:1: unterminated quote'
    assert refused('h target=/a\nh target=/b') == \
        "/h:2: host name 'h' is used twice (give one of them name=LABEL)"
    assert refused('# none\n') == '--hosts: /h names no host'


def test_paths_fio_on_a_host_cannot_take():
    assert refused('h').startswith('/h:1: no target for h: give target=PATH')
    assert refused('h target=rel').startswith('/h:1: target rel: not an absolute path')
    assert 'fio cannot take it' in refused('h target=/a;b')
    assert 'fio cannot take it' in refused('h target=/a/${x}')
    assert "':'" in refused('h target=/t engine=/a:b')
    assert load('h target=/a:b')[0].target == '/a:b'


def test_port_wraps_as_bash_arithmetic():
    # the shell's $((10#PORT)): 2^64 + 1 is 1
    assert hosts.shell_int('18446744073709551617') == 1
    assert load('h,18446744073709551617 target=/t')[0].addr == 'h,1'


def test_fleet_config_is_what_resume_reads():
    h = load('h target=/t bs=4k')
    assert hosts.fleet_config(h, '/h', 20.0, 10, 120, 'fio-3.33') == {
        'hosts_file': '/h', 'hosts': [{'index': 0, 'id': 'h01-h', 'label': 'h',
                                       'address': 'h,8765', 'target': '/t',
                                       'engine': '/usr/local/lib/fio/tswap.so',
                                       'options': ['bs=4k'], 'where': '/h:1'}],
        'outlier_pct': 20.0, 'connect_timeout': 10, 'host_timeout': 120, 'fio_version': 'fio-3.33'}


def plan_lines(n, rw='read'):
    return parse('\n'.join('%s-%d\ttswap\t%s\tlibaio\t1048576\t1048576\t8\tblock\toverlap\t1\t2'
                           % (rw, i, rw) for i in range(n)))


def test_reserve_is_five_seconds_and_two_hundredths_a_line():
    assert bs.reserve(0) == 5
    assert bs.reserve(10) == 6
    assert bs.reserve(100) == 7
    assert bs.reserve(10, 2.0) == 20


def test_default_budget_only_above_an_hour():
    # docs/sweep.md: a grid whose exhaustive run would take longer than an hour
    assert bs.auto_estimate(10, 3, 1, 0) == (30, 60)
    runs, est = bs.auto_estimate(1000, 3, 1, 0)
    assert est > bs.AUTO_OVER
    first = bs.first_plan(plan_lines(8), 0, False, 0, 10, 3)
    assert bs.auto_seconds(first, 5) == bs.AUTO_OVER
    assert bs.auto_seconds({'floor_s': 3000.2}, 6) == 4508
    assert bs.auto_seconds({'floor_s': 1, 'steady_floor_s': 4000}, 6) == 6006
    assert bs.auto_note('g', 30, 2, 3700, 3600).startswith(
        'note: grid g is 30 fio run(s) of about 2 s, about 1:01:40 exhaustively: running it'
        ' with --budget 3600')


def test_steady_window_floor_only_for_one_handle_points():
    assert bs.steady_window(plan_lines(2), True, 2) == 9
    assert bs.steady_window(plan_lines(2), False, 2) is None
    assert bs.steady_window(plan_lines(2, 'readwrite'), True, 2) is None
    p = bs.first_plan(plan_lines(4), 20, True, 2, 20, 3)
    assert p['steady_window'] == 9 and p['below_steady'] in (True, False)


def test_too_small_names_both_budgets():
    first = bs.first_plan(plan_lines(8), 10 - bs.reserve(8), False, 0, 5, 3)
    assert first['fits'] is False
    msg = bs.too_small(10, first, bs.reserve(8), bs.spent(0.04), False)
    assert msg.startswith('--budget 10: too small to run round 1 once (every point once at 1 s')
    assert bs.spent(0.04) == 1 and bs.spent(0.3) == 2
    assert 'plus the target\'s preparation; ' in msg and 'gives the final round its 5 s' in msg


def test_sweep_json_text_around_target_kind_and_budget_after_meta():
    # docs/sweep.md "Run directory": sweep.json's keys in the order runs
    # have always written them; the budget follows the meta (settings.sh)
    from tswap import jqjson
    from tswap.cli.sweep_start import sweep_doc
    v = {'TARGET': '/t "x"', 'TARGETS': ('/t "x"',), 'SIZE': '64m', 'SIZE_BYTES': '67108864',
         'G_NAME': 'g', 'G_DESC': 'd', 'RUNTIME': '1', 'RAMP': '0', 'IO_SIZE': '',
         'REPEAT': '1', 'ENGINE': '/e.so', 'CEILING': '1', 'CEILING_QD': '64',
         'CEILING_JOBS': '1', 'DS_VERSION': '', 'STEADY': 'off', 'FIXED_RUNTIME': '0',
         'PRECONDITION': 'auto', 'WORKLOAD': 'tensor'}
    head, tail, member = sweep_doc(v, 'fio-3.33', None, '60', False)
    doc = jqjson.loads(head + '"block"' + tail)
    assert list(doc)[:3] == ['target', 'target_kind', 'size']
    assert doc['target_kind'] == 'block' and doc['targets'] == ['/t "x"']
    assert 'budget' not in doc and doc['fio_version'] == 'fio-3.33'
    whole = jqjson.dumps(dict(doc, meta={'a': 1}))
    with_budget = jqjson.loads(whole[:-2] + ',\n' + member + '\n}')
    assert list(with_budget)[-2:] == ['meta', 'budget']
    assert with_budget['budget']['seconds'] == 60 and \
        with_budget['budget']['final_repeats_at_most'] == 3
    assert sweep_doc(v, None, None, '', False)[2] == ''


def test_a_host_that_is_not_utf8_is_refused_in_a_utf8_locale():
    # sweep.json keeps the hosts as UTF-8 text
    assert refused('h\udcff target=/t').startswith("/h:1: 'h\\xff' is not UTF-8 text")
    assert load('h\xff target=/t', utf8=False)[0].label == 'h\xff'


def test_a_word_that_is_not_utf8_is_refused_before_sweep_json_holds_it():
    # sweep.json is UTF-8 JSON (RFC 8259 section 8.1): a target, engine
    # or name with bytes that are not UTF-8 cannot be recorded; before,
    # every point ran and the run ended on a UnicodeEncodeError, exit 3
    for word in ('target=/t\udcff', 'engine=/e\udcffso', 'name=h\udcff'):
        msg = refused('localhost ' + word)
        assert msg.startswith("/h:1: '%s' is not UTF-8 text" % word.replace('\udcff', '\\xff'))
    # a comment is not a word
    assert load('localhost target=/t # \udcff')[0].target == '/t'
