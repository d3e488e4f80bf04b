# SPDX-License-Identifier: GPL-2.0-only
"""tswap.executor.target_rules: what the sweep may write to
(docs/sweep.md "Targets: what the sweep writes to", rules 1-3; issue 36
item 4: anything that holds or is stacked on the target, loop devices
backed by it included, is in use). The messages are the sweep's, to the
byte (tests/sweep-safety.bats, sweep-hostile.bats)."""

from tswap.executor.target_rules import (BlockFacts, NewPath, Options, Probe, TargetFacts, check_target,
                                         device_in_use, new_path_refusal, rank_file, size_refusal)

M = 1 << 20
W = Options(writes=True, destructive=False, force=False, size_bytes=16 * M, size='16m')
R = Options(writes=False, destructive=False, force=False, size_bytes=16 * M, size='16m')
WD = Options(writes=True, destructive=True, force=False, size_bytes=16 * M, size='16m')
WDF = Options(writes=True, destructive=True, force=True, size_bytes=16 * M, size='16m')
RD = Options(writes=False, destructive=True, force=False, size_bytes=16 * M, size='16m')


def blk(**kw):
    base = dict(missing_tool='', lsblk_error='', lsblk=(('/dev/loop7', ''),), swap=False, holder='',
                mounts_error='', mounted=False, loops=(Probe(),), claimed=Probe(), signature=Probe())
    base.update(kw)
    return BlockFacts(**base)


def dev(b=None):
    return TargetFacts('/dev/loop7', 'block', block=b)


# rule 1: a new path is the sweep's; its sidecar name must be free
def test_new_path_is_the_sweeps():
    v = check_target(TargetFacts('/t/x', 'none'), W)
    assert (v.kind, v.owned, v.warnings, v.refusal) == ('file', 'new', (), None)
    v = check_target(TargetFacts('/t/x', 'none', sidecar_free=False), W)
    assert v.refusal == (2, 'refusing target /t/x: /t/x.tswap-scratch, the name of its mark where the filesystem'
                         ' keeps no xattr (scratch.sh), is taken by something that is not a tswap mark; move it'
                         ' away, or give another --target')


def test_our_file_needs_no_flag_unless_a_loop_device_is_on_it():
    ours = TargetFacts('/t/x', 'file', size=16 * M, owned=True)
    assert check_target(ours, W).refusal is None and check_target(ours, W).owned == 'ours'
    on = TargetFacts('/t/x', 'file', size=16 * M, owned=True, loops=Probe('backs loop device /dev/loop3'))
    assert check_target(on, W).refusal == (2, 'refusing target /t/x: the file is in use (backs loop device'
                                           ' /dev/loop3); --force overrides')
    assert check_target(on, WDF).warnings == ('writing to an in-use file /t/x (backs loop device /dev/loop3)'
                                              ' because of --force',)
    # read only and long enough: never written, the loop device does not matter
    assert check_target(on, R).refusal is None


# rule 2: another regular file only with --destructive
def test_users_file_is_written_only_with_destructive():
    f = TargetFacts('/t/u', 'file', size=16 * M)
    assert check_target(f, W).refusal == (2, 'refusing target /t/u: an existing file the sweep did not create,'
                                          ' and the sweep writes to it (its data would be destroyed); pass'
                                          ' --destructive, a new path, or --rw read')
    assert check_target(f, R).refusal is None
    v = check_target(f, WD)
    assert v.refusal is None and v.owned == 'theirs'
    assert v.warnings == ('overwriting /t/u, a file the sweep did not create, because of --destructive',)
    # read, long enough, --destructive: nothing written, nothing said
    assert check_target(f, RD).warnings == ()


def test_users_short_file_is_refused_for_a_read_sweep():
    f = TargetFacts('/t/u', 'file', size=4 * M)
    assert check_target(f, R).refusal == (2, 'refusing target /t/u: an existing file the sweep did not create,'
                                          ' shorter (4194304 bytes) than --size 16m: fio would write it out to'
                                          ' full size; pass --destructive, a new path, or a smaller --size')


def test_users_file_behind_a_loop_device_needs_force_even_with_destructive():
    f = TargetFacts('/t/u', 'file', size=16 * M, loops=Probe('backs loop devices /dev/loop2 /dev/loop10'))
    assert 'in use (backs loop devices /dev/loop2 /dev/loop10); --force' in check_target(f, WD).refusal[1]
    # without --destructive the write rule speaks first
    assert 'pass --destructive' in check_target(f, W).refusal[1]
    f = TargetFacts('/t/u', 'file', size=16 * M, loops=Probe(error='losetup -j failed (exit 1: x): cannot tell'))
    assert check_target(f, WDF).refusal == (2, 'refusing target /t/u: losetup -j failed (exit 1: x): cannot tell')


def test_unwritable_file_and_other_kinds():
    f = TargetFacts('/t/u', 'file', size=16 * M, writable=False, owned=True)
    assert 'not writable (a read-only file system, or no permission)' in check_target(f, W).refusal[1]
    assert check_target(f, R).refusal is None
    assert check_target(TargetFacts('/t/d', 'other'), R).refusal == (
        2, 'refusing target /t/d: not a regular file or a block device')
    assert check_target(TargetFacts('/proc/version', 'file', 'proc'), R).refusal == (
        2, 'refusing target /proc/version: it is on proc, a kernel pseudo-filesystem, not storage')


# rule 3: a block device only with --destructive; in use or signed only with --force
def test_block_device_rules():
    assert check_target(dev(), R).kind == 'block'
    assert check_target(dev(), R).refusal is None
    assert 'it is a block device and the sweep writes to it' in check_target(dev(blk()), W).refusal[1]
    assert check_target(dev(blk(missing_tool='blkid')), W).refusal == (3, 'blkid is not installed (make deps)')
    assert check_target(dev(blk()), WD).refusal is None
    sig = blk(signature=Probe('TYPE="ext4" '))
    assert check_target(dev(sig), WD).refusal == (
        2, 'refusing target /dev/loop7: the device holds a signature (TYPE="ext4" ) - a filesystem or partition'
        ' table would be destroyed; --force overrides')
    assert check_target(dev(sig), WDF).warnings == (
        'overwriting a device with a signature (TYPE="ext4" ) because of --force',)


def test_in_use_order_first_finding_wins_and_a_check_that_cannot_run_refuses():
    assert device_in_use(blk(lsblk=(('/dev/loop7', ''), ('/dev/loop7p1', '/mnt/a')), swap=True)).why == \
        'mounted: /dev/loop7p1 on /mnt/a'
    assert device_in_use(blk(swap=True, holder='dm-0')).why == 'used as swap'
    assert device_in_use(blk(holder='dm-0', mounted=True)).why == 'held by dm-0'
    assert device_in_use(blk(mounted=True)).why == 'mounted'
    # issue 36 item 1: a loop device stacked on it is in use
    assert device_in_use(blk(loops=(Probe(), Probe('backs loop device /dev/loop9')))).why == \
        'backs loop device /dev/loop9'
    assert device_in_use(blk(claimed=Probe('claimed: x'))).why == 'claimed: x'
    assert device_in_use(blk(lsblk_error='lsblk failed', swap=True)).error == 'lsblk failed'
    # in use, but the signature check cannot run: refused even with --force, after the warning
    v = check_target(dev(blk(mounted=True, signature=Probe(error='blkid -p failed'))), WDF)
    assert v.warnings == ('writing to an in-use device (mounted) because of --force',)
    assert v.refusal == (2, 'refusing target /dev/loop7: blkid -p failed')
    v = check_target(dev(blk(claimed=Probe(error='an O_EXCL open with python3 failed'))), WDF)
    assert v.refusal == (2, 'refusing target /dev/loop7: an O_EXCL open with python3 failed')


def test_new_path_refusals():
    assert new_path_refusal('/a/l', NewPath('/gone', False, '/a', True, True), '/d') == \
        'refusing target /a/l: a symbolic link to /gone, which does not exist'
    assert new_path_refusal('/a/l', NewPath('/a/l', True, '/a', True, True), '/d') == \
        'refusing target /a/l: a symbolic link that loops (too many levels of symbolic links)'
    assert new_path_refusal('/n/x', NewPath(None, False, '/n', False, False), '/d') == \
        'refusing target /n/x: its directory /n does not exist (the sweep creates no directories)'
    assert 'its directory /r is not writable' in new_path_refusal('/r/x', NewPath(None, False, '/r', True, False), '/d')
    # the default target's directory: the sweep makes it
    assert new_path_refusal('/d/x', NewPath(None, False, '/d', False, False), '/d') is None


def test_further_block_target_size_and_rank_files():
    assert size_refusal('/dev/loop8', 8 * M, W) == (2, '--size 16m is larger than /dev/loop8 (8388608 bytes)'
                                                    ' (see --help)')
    assert size_refusal('/dev/loop8', None, W) == (3, 'cannot read the size of /dev/loop8')
    assert size_refusal('/dev/loop8', 16 * M, W) is None
    assert rank_file('/t/x', 'file', 3, 'write') == '/t/x.rank3.write'
    assert rank_file('/t/x', 'file', 3, 'io') == '/t/x.rank3'
    assert rank_file('/dev/loop7', 'block', 3, 'io') == '/dev/loop7'
