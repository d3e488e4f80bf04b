# SPDX-License-Identifier: GPL-2.0-only
"""tswap.executor.locks: one sweep per run directory and per target, with
lock.sh's rules (lock_dir, target_lock_file, lock_take,
lock_target_inode, lock_run, lock_busy, lock_probe) and settings.sh
out_empty's; tswap.cli.sweep_local's run directory and its children."""
import fcntl
import hashlib
import os
import subprocess
import sys

import pytest

from tswap.cli import sweep_local
from tswap.cli.sweep_host import Home
from tswap.executor import locks as L
from tswap.plan.values import Refusal


def held(path):
    """Whether another open file description cannot flock path now."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def close(lk):
    for fd in lk.fds.values():
        os.close(fd)
    lk.fds.clear()


def test_lock_dir_path_root_runtime_dir_or_tmp():
    # lock.sh lock_dir: /run/tswap-locks for root, else ${XDG_RUNTIME_DIR:-/tmp}/tswap-locks-EUID
    assert L.lock_dir_path(0, '/run/user/0') == '/run/tswap-locks'
    assert L.lock_dir_path(1000, '/run/user/1000') == '/run/user/1000/tswap-locks-1000'
    assert L.lock_dir_path(1000, '') == '/tmp/tswap-locks-1000'


def test_lock_dir_made_0700_and_a_symlink_refused(tmp_path):
    d = tmp_path / 'locks'
    lk = L.Locks(1, os.geteuid(), '', str(d))
    assert lk.lock_dir() == str(d)
    assert (os.stat(d).st_mode & 0o777) == 0o700
    # an existing directory is chmod'ed 0700 once a run
    os.chmod(d, 0o755)
    assert L.Locks(1, os.geteuid(), '', str(d)).lock_dir() and (os.stat(d).st_mode & 0o777) == 0o700
    link = tmp_path / 'link'
    link.symlink_to(d)
    with pytest.raises(Refusal) as e:
        L.Locks(1, os.geteuid(), '', str(link)).lock_dir()
    assert e.value.code == 3 and 'a symlink, or another user' in e.value.message
    # another user's directory
    with pytest.raises(Refusal):
        L.Locks(1, os.geteuid() + 1, '', str(d)).lock_dir()


def test_lock_name_file_hash_of_the_resolved_path(tmp_path):
    # lock.sh target_lock_file: sha256 of readlink -m PATH, first 32 hex
    real = tmp_path / 'real'
    real.mkdir()
    (tmp_path / 'ln').symlink_to(real)
    want = 'file-%s.lock' % hashlib.sha256(str(real / 'new.swap').encode()).hexdigest()[:32]
    assert L.lock_name(str(real / 'new.swap')) == want
    assert L.lock_name(str(tmp_path / 'ln' / 'new.swap')) == want
    # the same as the shell says it
    sh = subprocess.run(['bash', '-c', 'k=$(printf %s "$(readlink -m -- "$1")" | sha256sum);'
                         ' printf "file-%s.lock" "${k:0:32}"', 'x', str(tmp_path / 'ln/./new.swap')],
                        stdout=subprocess.PIPE, check=True).stdout.decode()
    assert sh == want


def test_lock_name_block_device_in_hex():
    if not os.path.exists('/dev/loop0'):
        pytest.skip('no /dev/loop0')
    st = os.stat('/dev/loop0')
    assert L.lock_name('/dev/loop0') == 'blk-%x-%x.lock' % (os.major(st.st_rdev), os.minor(st.st_rdev))


def test_target_locks_path_and_inode_on_fds_from_10_inheritable(tmp_path):
    t = tmp_path / 't.swap'
    t.write_bytes(b'x')
    d = tmp_path / 'locks'
    lk = L.Locks(4242, os.geteuid(), '', str(d))
    try:
        lk.targets((str(t),), ('file',), [])
        st = os.stat(t)
        ino = '%s/ino-%d-%d.lock' % (d, st.st_dev, st.st_ino)
        path = '%s/%s' % (d, L.lock_name(str(t)))
        assert sorted(lk.fds) == sorted((ino, path))
        for f, fd in lk.fds.items():
            assert fd >= 10 and os.get_inheritable(fd) and held(f)
            # lock.sh target_lock_note: pid, then the run ("" until it is locked)
            assert open(f).read() == '4242\n\n'
        # a hard link is the same target: its inode lock is held
        os.link(t, tmp_path / 'hard')
        other = L.Locks(7, os.geteuid(), '', str(d))
        with pytest.raises(Refusal) as e:
            other.target(str(tmp_path / 'hard'))
        assert e.value.code == 2
        assert e.value.message == ('refusing target %s: in use by another tswap-sweep (pid 4242, or a'
                                   ' fio it started, which finishes its point first); wait for it,'
                                   ' or give another --target' % (tmp_path / 'hard'))
        close(other)
    finally:
        close(lk)


def test_rank_files_of_file_targets_locked(tmp_path):
    d = tmp_path / 'locks'
    lk = L.Locks(1, os.geteuid(), '', str(d))
    t = str(tmp_path / 't.swap')
    try:
        lk.targets((t,), ('file',), [(0, 'io'), (0, 'write'), (1, 'io')])
        names = {L.lock_name(x) for x in (t, t + '.rank0', t + '.rank0.write', t + '.rank1')}
        assert {os.path.basename(f) for f in lk.fds} == names
    finally:
        close(lk)


def test_a_symlink_lock_file_is_refused_and_not_followed(tmp_path):
    d = tmp_path / 'locks'
    d.mkdir(mode=0o700)
    victim = tmp_path / 'victim'
    victim.write_text('keep')
    t = str(tmp_path / 't.swap')
    (d / L.lock_name(t)).symlink_to(victim)
    lk = L.Locks(1, os.geteuid(), '', str(d))
    with pytest.raises(Refusal) as e:
        lk.target(t)
    assert e.value.code == 3 and e.value.message.startswith('refusing the lock file ')
    assert victim.read_text() == 'keep'


def test_run_lock_names_the_holder_and_the_targets_get_the_run(tmp_path):
    run = tmp_path / 'run'
    run.mkdir()
    d = tmp_path / 'locks'
    lk = L.Locks(55, os.geteuid(), '', str(d), run_fd=200)
    t = str(tmp_path / 't.swap')
    try:
        lk.targets((t,), ('file',), [])
        lk.lock_run(str(run))
        assert (run / '.lock').read_text() == '55\n' and os.get_inheritable(200)
        assert open(next(iter(lk.fds))).read() == '55\n%s\n' % run
        # lock.sh lock_busy: exit 2 naming the holder; lock_probe the same
        for f in (L.Locks(9, os.geteuid(), '', str(d), run_fd=201).lock_run,
                  L.Locks(9, os.geteuid(), '', str(d)).probe_run):
            with pytest.raises(Refusal) as e:
                f(str(run))
            assert (e.value.code, e.value.message) == (2, '%s is in use by another tswap-sweep (pid 55,'
                                                       ' or a fio it started, which finishes its point'
                                                       ' first)' % run)
    finally:
        close(lk)
        os.close(200)


def test_run_lock_symlink_refused(tmp_path):
    (tmp_path / '.lock').symlink_to(tmp_path / 'elsewhere')
    with pytest.raises(Refusal) as e:
        L.Locks(1, 0, '', str(tmp_path), run_fd=202).lock_run(str(tmp_path))
    assert e.value.code == 2 and 'a symbolic link (the run\'s lock file is never followed)' in e.value.message
    assert not (tmp_path / 'elsewhere').exists()


def test_holder_and_note_parsing():
    assert L.holder_pid(b'12a3\n') == '123' and L.holder_pid(b'') == 'unknown'
    assert L.note_holder(b' 12 \n/run/x\n') == ('12', '/run/x')
    # read -r pid && read -r run: no run without the newline after the pid
    assert L.note_holder(b'12') == ('12', '')


@pytest.mark.parametrize('names,lock,is_file,empty', [
    ([], None, False, True),
    (['x'], None, False, False),
    ([], b'', True, True),
    ([], b'123\n', True, True),
    ([], b'123\n4\n', True, False),    # two lines: not a sweep's
    ([], b'abc\n', True, False),
    ([], b'1' * 17, True, False),      # more than 16 bytes
    ([], b'123\n', False, False),      # a symlink or not a regular file
])
def test_out_empty_rules(names, lock, is_file, empty):
    # settings.sh out_empty
    assert L.run_dir_empty(names, lock, is_file) is empty


def test_new_run_dir_out_rules(tmp_path):
    h = Home(str(tmp_path), str(tmp_path), '', str(tmp_path))
    lk = L.Locks(1, os.geteuid(), '', str(tmp_path / 'locks'), run_fd=203)
    assert sweep_local.new_run_dir(h, 'a/b/run', lk) == str(tmp_path / 'a/b/run')
    full = tmp_path / 'full'
    full.mkdir()
    (full / 'x').write_text('')
    with pytest.raises(Refusal) as e:
        sweep_local.new_run_dir(h, str(full), lk)
    assert e.value.message == ('%s exists and is not empty (use --resume to finish it, or another'
                               ' --out)' % full)
    assert not (full / '.lock').exists()
    # mkdir -p's reason for a parent that is a file: "File exists"
    (tmp_path / 'file').write_text('')
    with pytest.raises(Refusal) as e:
        sweep_local.new_run_dir(h, str(tmp_path / 'file/run'), lk)
    assert e.value.message == '--out %s/file/run: cannot create the run directory (File exists)' \
        % tmp_path
    # the default one: its parent under a file (and a file as its
    # parent) is refused, naming --out
    co = Home(str(tmp_path), str(tmp_path), str(tmp_path / 'file'), str(tmp_path))
    with pytest.raises(Refusal) as e:
        sweep_local.new_run_dir(co, '', lk)
    assert (e.value.code, e.value.message) == (2, 'cannot create the default run directory in %s/file/build/sweep'
                                               ' (Not a directory): give --out DIR' % tmp_path)
    (tmp_path / 'co' / 'build').mkdir(parents=True)
    (tmp_path / 'co' / 'build' / 'sweep').write_text('')
    co = Home(str(tmp_path), str(tmp_path), str(tmp_path / 'co'), str(tmp_path))
    with pytest.raises(Refusal) as e:
        sweep_local.new_run_dir(co, '', lk)
    assert e.value.message == ('cannot create the default run directory in %s/co/build/sweep (File exists):'
                               ' give --out DIR' % tmp_path)
    empty = tmp_path / 'empty'
    empty.mkdir()
    assert sweep_local.new_run_dir(h, str(empty), lk) == str(empty)
    assert (empty / '.lock').read_text() == '1\n'
    os.close(203)


def test_default_run_dir_gets_a_suffix(tmp_path):
    h = Home(str(tmp_path), str(tmp_path), '', str(tmp_path))
    lk = L.Locks(1, os.geteuid(), '', str(tmp_path / 'locks'))
    a = sweep_local.new_run_dir(h, '', lk)
    b = sweep_local.new_run_dir(h, '', lk)
    assert os.path.basename(a).startswith('tswap-sweep-')
    # within one second: DATE-TIME-2; else its own DATE-TIME
    assert b == a + '-2' or os.path.dirname(a) == os.path.dirname(b)
    assert os.path.isdir(a) and os.path.isdir(b) and a != b


def test_background_children_are_reaped_when_stopped():
    bg = sweep_local.Background()
    bg.start('x', [sys.executable, '-c', 'import time; time.sleep(30)'])
    p = bg.procs['x']
    bg.stop()
    assert p.returncode is not None and not bg.procs
    bg.start('y', ['sh', '-c', 'printf "a\\n\\n"'])
    assert bg.read('y') == (0, b'a\n\n') and bg.read('y') is None
