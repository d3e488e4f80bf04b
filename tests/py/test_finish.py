# SPDX-License-Identifier: GPL-2.0-only
"""The finish (tswap/cli/finish.py), as the sweep runs it in its process
(tswap.cli.run_local finish_stage), on a run directory a user damaged,
and tswap.cli.files.write_text when the write fails: one line and exit 3,
never a traceback nor Python's 1 (the run's 1 is "a --min-*-gbs bar
missed"), and no half-written FILE.tmp left."""
import os
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tswap.cli.files import write_text
from tswap.cli.run_local import finish_stage

REPO = Path(__file__).resolve().parents[2]
SINGLE = REPO / 'tests' / 'fixtures' / 'runs' / 'single'
# state.sh's CV_FLAG, CV_REL, CV_MAX, CACHE_FACTOR, COST_TOL
LIMITS = ('--cvflag', '0.05', '--cvrel', '2', '--cvmax', '0.2', '--cache', '1.1', '--costtol', '0.03',
          '--bwlog-msec', '250')


@pytest.fixture
def finish(capfd, monkeypatch):
    """finish(RUN, *OPTIONS, path=PATH): the finish on RUN with the
    limits and OPTIONS (PATH: the PATH it runs gnuplot from); its exit
    status, stdout and stderr (their file descriptors: gnuplot's too)."""
    def finish(run, *more, path=None):
        if path is not None:
            monkeypatch.setenv('PATH', path)
        capfd.readouterr()
        rc = finish_stage(str(run), [str(run), *LIMITS, *more])
        sys.stdout.flush()
        out, err = capfd.readouterr()
        return SimpleNamespace(returncode=rc, stdout=out, stderr=err)
    return finish


@pytest.fixture
def run(tmp_path):
    d = tmp_path / 'run'
    shutil.copytree(SINGLE, d)
    return d


def one_line_3(r):
    assert (r.returncode, 'Traceback' not in r.stderr, r.stderr.count('\n')) == (3, True, 1), r.stderr


def test_write_text_onto_a_directory_leaves_no_tmp_and_names_the_path(tmp_path):
    (tmp_path / 'report.md').mkdir()
    with pytest.raises(IsADirectoryError):
        write_text(str(tmp_path / 'report.md'), 'x\n')
    assert not (tmp_path / 'report.md.tmp').exists()


def test_write_text_failing_write_leaves_no_tmp_and_names_the_path(tmp_path):
    # ENOSPC as a full run directory gives it: the .tmp is /dev/full
    (tmp_path / 'aggregate.json.tmp').symlink_to('/dev/full')
    with pytest.raises(OSError) as e:
        write_text(str(tmp_path / 'aggregate.json'), '{}\n')
    assert (e.value.errno, e.value.filename) == (28, str(tmp_path / 'aggregate.json'))
    assert list(tmp_path.iterdir()) == []


def test_the_recorded_run_finishes(run, finish):
    r = finish(run)
    assert r.returncode == 0 and r.stderr == ''


def test_a_rerender_replaces_the_outputs_notes_and_keeps_the_points_runs(run, tmp_path, finish):
    # an earlier render without gnuplot, and one gnuplot failed on, left
    # their notes; this one has a gnuplot (that draws nothing, quietly)
    (run / 'notes.txt').write_text('gnuplot is not installed: no plots\na note of the points\n'
                                   'gnuplot failed for latency-read (see plots/latency-read.log)\n')
    bin_ = tmp_path / 'bin'
    bin_.mkdir()
    (bin_ / 'gnuplot').write_text('#!/bin/sh\nexit 0\n')
    (bin_ / 'gnuplot').chmod(0o755)
    r = finish(run, path='%s:%s' % (bin_, os.environ.get('PATH', '')))
    assert r.returncode == 0 and r.stderr == ''
    report = (run / 'report.md').read_text()
    assert [x for x in report.split('\n') if x.startswith('- note: ')] == ['- note: a note of the points']
    assert (run / 'notes.txt').read_text() == 'a note of the points\n'
    # again without gnuplot: its one note, the points' run's kept
    r = finish(run, path=str(tmp_path / 'nothing'))
    assert r.returncode == 0 and r.stderr == ''
    assert (run / 'notes.txt').read_text() == 'a note of the points\ngnuplot is not installed: no plots\n'


@pytest.mark.parametrize('text', ['[1]', '"x"', '\udcff'])
def test_a_meta_json_not_an_object_or_not_utf8_is_one_line_exit_3(run, text, finish):
    (run / 'meta.json').write_bytes(text.encode('utf-8', 'surrogateescape'))
    r = finish(run)
    one_line_3(r)
    assert r.stderr.startswith('tswap: meta %s: ' % (run / 'meta.json')), r.stderr


def test_notes_not_utf8_is_one_line_exit_3(run, finish):
    (run / 'notes.txt').write_bytes(b'\xff\xfe note\n')
    r = finish(run)
    one_line_3(r)
    assert r.stderr.startswith('tswap: %s: ' % (run / 'notes.txt')), r.stderr


@pytest.mark.parametrize('text', ['[]', '1', '"x"', 'null', '{}', '{"runkey": "zz.r1", "point": 5}'])
def test_a_stray_result_json_not_a_runs_result_is_one_line_exit_3(run, text, finish):
    (run / 'points' / 'zz.r1').mkdir()
    (run / 'points' / 'zz.r1' / 'result.json').write_text(text)
    r = finish(run)
    one_line_3(r)
    assert "zz.r1/result.json: not a run's result" in r.stderr
    assert (run / 'results.json').read_bytes() == (SINGLE / 'results.json').read_bytes()


@pytest.mark.parametrize('doc', ['{"points": [{}]}', '{"points": [{"point": "x", "rw": "read", "gbs": "abc"}]}'])
def test_compare_with_a_damaged_aggregate_is_exit_3_not_1(run, tmp_path, doc, finish):
    other = tmp_path / 'other'
    other.mkdir()
    (other / 'aggregate.json').write_text(doc)
    r = finish(run, '--compare', str(other))
    one_line_3(r)
    assert 'damaged or edited by hand' in r.stderr
    assert not list(run.glob('*.tmp'))


FLEET3 = REPO / 'tests' / 'fixtures' / 'runs' / 'fleet3'


@pytest.fixture
def fleet(tmp_path):
    d = tmp_path / 'fleet'
    shutil.copytree(FLEET3, d)
    return d


def test_junit_into_a_directory_is_copied_into_it_as_cp_did(fleet, tmp_path, finish):
    ci = tmp_path / 'ci'
    ci.mkdir()
    base = finish(fleet, '--fleet')
    r = finish(fleet, '--fleet', '--junit-out', str(ci))
    assert (r.returncode, r.stderr) == (base.returncode, base.stderr)
    assert base.returncode in (0, 1)
    assert (ci / 'junit.xml').read_bytes() == (fleet / 'junit.xml').read_bytes()
    assert 'junit:      %s/junit.xml (copied to %s)\n' % (fleet, ci) in r.stdout


@pytest.mark.parametrize('where', ['/dev/full', 'afile/x.xml', 'fifo.xml'])
def test_junit_that_cannot_be_written_is_one_line_naming_it(fleet, tmp_path, where, finish):
    import os
    (tmp_path / 'afile').write_text('a user file\n')
    os.mkfifo(tmp_path / 'fifo.xml')
    dst = where if where.startswith('/') else str(tmp_path / where)
    r = finish(fleet, '--fleet', '--junit-out', dst)
    one_line_3(r)
    assert r.stderr.startswith('tswap: --junit %s: ' % dst), r.stderr
    assert (tmp_path / 'afile').read_text() == 'a user file\n'


def test_stdout_closed_is_one_line_exit_3_after_the_files(run, monkeypatch, capfd):
    # sys.stdout is None when the sweep started with its stdout closed
    (run / 'report.md').unlink()
    monkeypatch.setattr(sys, 'stdout', None)
    rc = finish_stage(str(run), [str(run), *LIMITS])
    assert rc == 3
    assert capfd.readouterr().err == \
        'tswap: stdout is closed: the summary is not printed (the run directory has the outputs)\n'
    assert (run / 'report.md').read_text().startswith('# tswap sweep')
