# SPDX-License-Identifier: GPL-2.0-only
"""tswap.executor.local and tswap.cli.run_local: the rules of the run on
this host that the bash executor had (pipeline.sh point_label, util.sh
fmt_secs, status.sh, steady.sh steady_line, target.sh target_identity,
target_fds_open)."""

import os

from tswap.cli.run_local import steady_line
from tswap.executor.local import fmt_secs, point_label, status_text
from tswap.executor.targets import Held, identity


def test_point_label_shapes():
    # pipeline.sh point_label: printf '%-5s %-8s t=%s b=%s ...'
    line = '\t'.join(['k', 'tswap', 'read', 'libaio', '4194304', '1048576', '8', 'block', 'overlap', '1', '1'])
    assert point_label(line) == 'read  libaio   t=4m b=1m q=8 block/overlap p=1 d=1'
    assert point_label(line + '\t2') == 'read  libaio   t=4m b=1m q=8 block/overlap p=1 d=1 n=2'
    ceil = '\t'.join(['c', 'ceiling', 'write', 'libaio', '1048576', '1048576', '64', '-', '-', '4', '1'])
    assert point_label(ceil) == 'write ceiling (fio libaio bs=1m iodepth=64 over 4 jobs)'
    ck = '\t'.join(['c', 'checkpoint', 'write', 'tswap', '4194304', '1048576', '8', 'block', 'overlap', '1', '2'])
    assert point_label(ck) == 'checkpoint io_buffer=4m double b=1m q=8 block/overlap p=1'


def test_fmt_secs_and_status():
    assert fmt_secs(59) == '0:59' and fmt_secs(3600) == '1:00:00' and fmt_secs(3725) == '1:02:05'
    assert status_text('L', 3, 12) == '    L: 3 s of 12 s, 9 s left\n'
    assert status_text('L', 13, 12) == '    L: 13 s of 12 s, winding down\n'
    assert status_text('L', 3, None) == '    L: 3 s, --io-size: no estimate\n'


def test_steady_line_window():
    v = {'STEADY': 'on', 'BUDGET': '', 'IO_SIZE': '', 'FIXED_RUNTIME': '0'}
    assert steady_line(v, '12', '2').startswith('- steady state: fio steadystate=bw_slope:2%, ss_dur=5 s')
    assert 'needs (9 s' in steady_line(v, '8', '2') and '--runtime 9 or more' in steady_line(v, '8', '2')
    assert steady_line(dict(v, IO_SIZE='8m'), '8', '2') == ''
    assert steady_line(dict(v, STEADY='off', FIXED_RUNTIME='1'), '8', '') == \
        '- fixed runtime: no steady-state detection (--fixed-runtime)'


def test_held_target_replaced(tmp_path):
    # target.sh target_fds_open: a path that names another file since it
    # was kept is said once, and nothing is held
    t = tmp_path / 't'
    t.write_bytes(b'x')
    said = []
    h = Held(said.append)
    h.keep([str(t)])
    assert identity(str(t)).startswith('file ')
    assert h.open() and list(h.fds) == [str(t)]
    h.close()
    os.unlink(t)
    (tmp_path / 'u').write_bytes(b'y' * 10)
    os.rename(tmp_path / 'u', t)
    assert not h.open() and h.fds == {}
    assert said and said[0].startswith('refusing target %s: it changed since the sweep checked it' % t)
    h.close_refs()


def test_internal_error_is_one_line_and_exit_3(capfd):
    # run.sh on_err: an error nothing expected is one line and exit 3,
    # never a traceback (here: a state without the plan's facts)
    from tswap.cli.run_local import run
    assert run({'DRY_RUN': '1'}, None, '/') == 3
    out, err = capfd.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith('tswap-sweep: internal error: '), err
    assert 'Traceback' not in err and '(at ' in lines[0]


def test_internal_error_text_and_full_run_directory(tmp_path, capfd, monkeypatch):
    from types import SimpleNamespace
    from tswap.cli import run_local
    from tswap.executor.local import Local
    assert run_local.internal_error(None, ValueError('a\nb')) == 3
    assert capfd.readouterr()[1] == 'tswap-sweep: internal error: ValueError: a\\nb\n'
    # on_err: a full run directory says so first (space.sh
    # run_dir_full_exit): the point being written and *.tmp go
    (tmp_path / 'points').mkdir()
    (tmp_path / 'points' / '.tmp-p.1').mkdir()
    (tmp_path / 'report.md.tmp').write_text('x')
    x = SimpleNamespace(s=SimpleNamespace(run=str(tmp_path)), tmp=str(tmp_path / 'points' / '.tmp-p.1'))
    x.full_exit = lambda free: Local.full_exit(x, free)
    x.die = lambda code, msg: Local.die(x, code, msg)
    monkeypatch.setattr(run_local, 'run_dir_free', lambda run: 4096)
    assert run_local.internal_error(x, OSError(28, 'No space left on device')) == 3
    assert capfd.readouterr()[1] == ('tswap-sweep: run directory full: 4096 bytes free in %s (free space, then:'
                                     ' tswap-sweep --resume %s)\n' % (tmp_path, tmp_path))
    assert os.listdir(tmp_path / 'points') == [] and not (tmp_path / 'report.md.tmp').exists()


def test_steady_line_budget_and_fixed():
    # steady.sh steady_line's bats test (tests/sweep-steady.bats): a
    # budget's final round below the window points at a larger --budget,
    # not --runtime
    v = {'IO_SIZE': '', 'FIXED_RUNTIME': '0', 'STEADY': 'on', 'BUDGET': ''}
    assert steady_line(v, '12', '2').startswith(
        '- steady state: fio steadystate=bw_slope:2%, ss_dur=5 s, ss_ramp=2 s, capped by the 12 s runtime')
    assert steady_line(dict(v, BUDGET='120'), '3', '2') == (
        "- fixed runtime: the budget's final round of 3 s is shorter than a steady-state window needs (9 s:"
        " ramp + 1 s + 5 s of samples + 1 s); a larger --budget gives it one (the caution at the top)")
    t = steady_line(dict(v, STEADY='off'), '3', '2')
    assert t.startswith('- fixed runtime: the 3 s runtime is shorter than a steady-state window needs (9 s: ')
    assert '--runtime 9 or more turns it on' in t
