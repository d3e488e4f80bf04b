# SPDX-License-Identifier: GPL-2.0-only
"""tswap.executor.target_facts: what the target rules are decided on,
read as scratch.sh and target.sh read it (docs/sweep.md
"Targets": the mark DEV:INODE:BIRTH in user.tswap.scratch or the sidecar
TARGET.tswap-scratch; kernel pseudo-filesystems are not storage)."""

import os
import subprocess

from tswap.executor import target_facts as tf


def test_pseudo_filesystems_by_statfs_type(tmp_path):
    assert tf.pseudo_fs('/proc/version') == 'proc'
    assert tf.pseudo_fs('/proc/no-such-file') == 'proc'
    assert tf.pseudo_fs('/sys/kernel') == 'sysfs'
    assert tf.pseudo_fs(str(tmp_path / 'x')) == ''


def test_identity_says_what_stat_says(tmp_path):
    p = tmp_path / 'f'
    p.write_bytes(b'x')
    out = subprocess.run(['stat', '-L', '-c', '%d:%i %.9W', str(p)], stdout=subprocess.PIPE,
                         check=True, text=True).stdout.split()
    want = 'file ' + out[0] + (', born ' + out[1] if out[1][0] in '123456789' else '')
    assert tf.identity(str(p)) == want
    assert tf.identity(str(tmp_path / 'none')) == 'no file'
    assert tf.scratch_mark(str(p)) == out[0] + (':' + out[1] if out[1][0] in '123456789' else '')


def test_the_mark_in_the_sidecar_and_a_copy(tmp_path):
    p = tmp_path / 't.swap'
    p.write_bytes(b'x')
    mark = tf.scratch_mark(str(p))
    assert not tf.scratch_owned(str(p))
    side = tmp_path / 't.swap.tswap-scratch'
    if mark.count(':') == 2:
        side.write_text(mark + '\n')
        assert tf.scratch_owned(str(p))
        assert tf.identity(str(p)).endswith(", the sweep's mark")
        # an earlier mark may be replaced, a user's file may not
        assert tf.sidecar_free(str(p))
        side.write_text('precious\n')
        assert not tf.sidecar_free(str(p))
        assert not tf.scratch_owned(str(p))
    if side.exists():
        os.unlink(side)
    assert tf.sidecar_free(str(p))
    os.symlink('/nowhere', side)
    assert not tf.sidecar_free(str(p))


def test_no_loop_device_on_a_fresh_file(tmp_path):
    p = tmp_path / 'f'
    p.write_bytes(b'x')
    assert tf.loops_on(str(p)).why == ''
    assert tf.loops_on(str(tmp_path / 'none')) == tf.Probe()


def test_new_path_facts(tmp_path):
    os.symlink('/nowhere/x', tmp_path / 'dangling')
    n = tf.new_path(str(tmp_path / 'dangling'))
    assert (n.link_to, n.link_loops, n.dir, n.dir_is_dir) == ('/nowhere/x', False, str(tmp_path), True)
    os.symlink('loop', tmp_path / 'loop')
    assert tf.new_path(str(tmp_path / 'loop')).link_loops
    assert not tf.new_path(str(tmp_path / 'no' / 'x')).dir_is_dir
