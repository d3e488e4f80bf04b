# SPDX-License-Identifier: GPL-2.0-only
"""python3 -m tswap STAGE (tswap/__main__.py), run as the sweep runs it:
a bad document is one line and exit 3, a bad stage a usage error, exit
2; never a traceback."""
import subprocess
import sys
import time
from pathlib import Path

import pytest

SWEEP = Path(__file__).resolve().parents[2] / 'sweep'


def stage(*args, stdin=''):
    """A stage run as util.sh py runs it."""
    boot = ('import sys; sys.path.insert(0, sys.argv.pop(1)); '
            'from tswap.__main__ import main; sys.exit(main())')
    return subprocess.run([sys.executable, '-I', '-B', '-c', boot, str(SWEEP), *args],
                          input=stdin, capture_output=True, text=True)


def test_unreadable_document_is_one_line_exit_3(tmp_path):
    r = stage('fleet-progress', str(tmp_path / 'none.json'))
    assert r.returncode == 3 and r.stderr.count('\n') == 1
    assert r.stderr.startswith('tswap: result %s: ' % (tmp_path / 'none.json'))
    bad = tmp_path / 'bad.json'
    bad.write_text('{"half":')
    r = stage('fleet-progress', str(bad))
    assert r.returncode == 3 and 'Traceback' not in r.stderr and r.stderr.count('\n') == 1


@pytest.mark.parametrize('args', [('bogus',), ()])
def test_a_bad_stage_is_a_usage_error(args):
    r = stage(*args)
    assert r.returncode == 2 and 'Traceback' not in r.stderr


def test_sigint_ends_a_stage_as_the_signal_without_a_traceback():
    # a Ctrl-C reaches the stage with the sweep's process group
    import signal
    boot = ('import sys; sys.path.insert(0, sys.argv.pop(1)); '
            'from tswap.__main__ import main; sys.exit(main())')
    p = subprocess.Popen([sys.executable, '-I', '-B', '-c', boot, str(SWEEP), 'plan'],
                         stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdin.write('x')  # the stage is reading its plan text: still running
    p.stdin.flush()
    # wait until the stage blocks reading its plan from the pipe: main()
    # has run by then (a bounded wait on state, not on time)
    for _ in range(6000):
        with open('/proc/%d/wchan' % p.pid) as f:
            if 'pipe' in f.read():
                break
        time.sleep(0.01)
    else:
        pytest.fail('the stage never blocked on its stdin')
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == -signal.SIGINT and 'Traceback' not in err
