# SPDX-License-Identifier: GPL-2.0-only
"""tswap.early: the children tswap-sweep's entry starts before it imports
the front end (fio --version, git describe), read or killed and reaped."""
import os
import sys

from tswap import early
from tswap.cli import sweep_host


def test_checkout_root_is_the_homes():
    # the entry's rule (sweep_host.home): script_dir/.. with Makefile and engine/
    sweep = os.path.join(os.path.dirname(__file__), '..', '..', 'sweep')
    root = early.checkout_root(sweep)
    assert root == os.path.normpath(sweep + '/..')
    assert sweep_host.home(sweep, sweep).root == root
    assert early.checkout_root('/') == ''


def test_a_restarted_child_replaces_the_first_which_is_reaped():
    bg = early.Background()
    bg.start('x', [sys.executable, '-c', 'import time; time.sleep(30)'])
    first = bg.procs['x']
    bg.start('x', ['sh', '-c', 'echo two'])
    assert first.returncode is not None
    assert bg.read('x') == (0, b'two\n')


def test_stop_kills_and_reaps_only_the_named():
    bg = early.Background()
    bg.start('a', [sys.executable, '-c', 'import time; time.sleep(30)'])
    bg.start('b', [sys.executable, '-c', 'import time; time.sleep(30)'])
    a, b = bg.procs['a'], bg.procs['b']
    bg.stop(('a', 'nothing'))
    assert a.returncode is not None and b.returncode is None and list(bg.procs) == ['b']
    bg.stop()
    assert b.returncode is not None and not bg.procs


def test_fio_version_reads_the_early_child_or_runs_one(tmp_path, monkeypatch):
    fio = tmp_path / 'fio'
    fio.write_text('#!/bin/sh\necho "$@" >>%s/calls\nprintf "fio-3.99\\n\\n"\n' % tmp_path)
    fio.chmod(0o755)
    monkeypatch.setenv('PATH', '%s:%s' % (tmp_path, os.environ.get('PATH', '')))
    bg = early.start(str(tmp_path / 'tswap-sweep'))
    assert bg.root == '' and 'git' not in bg.procs
    assert bg.fio_version() == 'fio-3.99'
    # not started early: run now
    assert bg.fio_version() == 'fio-3.99'
    assert (tmp_path / 'calls').read_text() == '--version\n--version\n'
    fio.write_text('#!/bin/sh\nexit 1\n')
    assert bg.fio_version() is None
    monkeypatch.setenv('PATH', str(tmp_path / 'none'))
    assert bg.fio_version() is None and not bg.procs
