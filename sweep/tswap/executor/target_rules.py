# SPDX-License-Identifier: GPL-2.0-only
"""Whether the sweep may use a target: the rules of docs/sweep.md
"Targets: what the sweep writes to" and issue 36 item 4 (anything that
holds or is stacked on the target, loop devices backed by it included,
is in use), decided on the facts target_facts reads.

Pure: each rule takes the frozen facts of one path and the options, and
returns the verdict: the kind (file, block), whose file it is (new, ours:
the sweep's scratch mark, theirs), the warnings said on the way, and the
refusal (exit status and its one line) if any. The messages are the
sweep's interface, to the byte (tests/sweep-safety.bats,
sweep-hostile.bats, sweep-locks.bats)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..plan.values import EXIT_ERROR, EXIT_USAGE, bytes_to_size

# the name of a target's mark where the filesystem keeps no xattr
SCRATCH_SIDECAR = '.tswap-scratch'


@dataclass(frozen=True)
class Options:
    """What the rules depend on: the plan writes (a write or readwrite
    point, a write ceiling), --destructive, --force, --size in bytes and
    as given (said in messages)."""
    writes: bool
    destructive: bool
    force: bool
    size_bytes: int
    size: str


@dataclass(frozen=True)
class Probe:
    """One check's answer: why the target is in use or signed ("" when
    it is not), or why the check could not run (error: a refusal even
    with --force)."""
    why: str = ''
    error: str = ''


@dataclass(frozen=True)
class NewPath:
    """A path the sweep would create (it does not exist, symlinks
    followed): a dangling or looping symlink, its directory."""
    link_to: Optional[str]      # a symlink: what it points to
    link_loops: bool            # ELOOP
    dir: str                    # dirname of the path
    dir_is_dir: bool
    dir_writable: bool


@dataclass(frozen=True)
class BlockFacts:
    """What is known about a block device the sweep would write, in the
    order the rules ask (docs/sweep.md "Targets", rule 3)."""
    missing_tool: str           # the first of blkid, lsblk not installed
    lsblk_error: str            # lsblk failed: why
    lsblk: tuple[tuple[str, str], ...]   # (NAME, MOUNTPOINT): it, its partitions and holders
    swap: bool                  # in /proc/swaps
    holder: str                 # the first of its (or a partition's) holders/
    mounts_error: str           # the mount table could not be read: why
    mounted: bool               # a mount's source (of its root) is the device
    loops: tuple[Probe, ...]    # loop devices stacked on each lsblk NAME (else the device)
    claimed: Probe              # an O_EXCL open fails with EBUSY
    signature: Probe            # blkid -p: TYPE= / PTTYPE=


@dataclass(frozen=True)
class TargetFacts:
    """One path, as read: kind "block", "file", "other" (exists, neither)
    or "none"; a pseudo-filesystem's type under it ("" none); for a
    regular file whether it is writable, its size (bytes) and whether it
    carries the sweep's mark (scratch.sh); for a new path whether its
    sidecar name is free; the loop devices stacked on a file; a written
    block device's BlockFacts."""
    path: str
    kind: str
    pseudo: str = ''
    writable: bool = True
    size: int = 0
    owned: bool = False
    sidecar_free: bool = True
    loops: Probe = Probe()
    block: Optional[BlockFacts] = None


@dataclass(frozen=True)
class Verdict:
    """kind (file, block), owned (new, ours, theirs; "" for a device),
    the warnings said, and the refusal: (exit status, message) or None."""
    kind: str
    owned: str = ''
    warnings: tuple[str, ...] = ()
    refusal: Optional[tuple[int, str]] = None


def _refuse(path: str, why: str) -> tuple[int, str]:
    return (EXIT_USAGE, 'refusing target %s: %s' % (path, why))


def new_path_refusal(path: str, n: NewPath, default_dir: str) -> Optional[str]:
    """A target or rank file the sweep would create: refused (exit 2,
    before the run directory) when it is a dangling or looping symlink, or
    its directory is missing or not writable; the sweep creates no
    directory but default_dir, the default target's (docs/sweep.md
    "Targets"; ranks.sh target_new_file before)."""
    if n.link_to is not None:
        if n.link_loops:
            return 'refusing target %s: a symbolic link that loops (too many levels of symbolic links)' % path
        return 'refusing target %s: a symbolic link to %s, which does not exist' % (path, n.link_to)
    if n.dir == default_dir:
        return None
    if not n.dir_is_dir:
        return 'refusing target %s: its directory %s does not exist (the sweep creates no directories)' % (path, n.dir)
    if not n.dir_writable:
        return ('refusing target %s: its directory %s is not writable (a read-only file system, or no permission)'
                % (path, n.dir))
    return None


def device_in_use(b: BlockFacts) -> Probe:
    """Why a device (or a partition of it) is busy: mounted, swap, held
    (holders), a loop device stacked on it, or claimed (an O_EXCL open
    fails with EBUSY); the first check that could not run, as an error
    (docs/sweep.md "Targets" rule 3; issue 36 item 4)."""
    if b.lsblk_error:
        return Probe(error=b.lsblk_error)
    for name, mp in b.lsblk:
        if mp:
            return Probe('mounted: %s on %s' % (name, mp))
    if b.swap:
        return Probe('used as swap')
    if b.holder:
        return Probe('held by ' + b.holder)
    if b.mounts_error:
        return Probe(error=b.mounts_error)
    if b.mounted:
        return Probe('mounted')
    for p in b.loops:
        if p.error or p.why:
            return p
    return b.claimed


def check_block(path: str, b: Optional[BlockFacts], o: Options) -> Verdict:
    """A block device: written only with --destructive; in use or with a
    signature only with --force; a check that cannot run refuses even
    then (docs/sweep.md "Targets" rule 3). b: None when not written."""
    if not o.writes:
        return Verdict('block')
    assert b is not None
    if b.missing_tool:
        return Verdict('block', refusal=(EXIT_ERROR, '%s is not installed (make deps)' % b.missing_tool))
    if not o.destructive:
        return Verdict('block', refusal=_refuse(path, 'it is a block device and the sweep writes to it (write points'
                                                ' and the write ceiling destroy its data); pass --destructive,'
                                                ' or --rw read'))
    warns: list[str] = []
    use = device_in_use(b)
    if use.error:
        return Verdict('block', refusal=_refuse(path, use.error))
    if use.why:
        if not o.force:
            return Verdict('block', refusal=_refuse(path, 'the device is in use (%s); --force overrides' % use.why))
        warns.append('writing to an in-use device (%s) because of --force' % use.why)
    sig = b.signature
    if sig.error:
        return Verdict('block', warnings=tuple(warns), refusal=_refuse(path, sig.error))
    if sig.why:
        if not o.force:
            return Verdict('block', warnings=tuple(warns), refusal=_refuse(
                path, 'the device holds a signature (%s) - a filesystem or partition table would be destroyed;'
                ' --force overrides' % sig.why))
        warns.append('overwriting a device with a signature (%s) because of --force' % sig.why)
    return Verdict('block', warnings=tuple(warns))


def file_rules(what: str, name: str, writes: bool, big: bool, have: str, o: Options
               ) -> tuple[tuple[str, ...], Optional[tuple[int, str]]]:
    """An existing regular file the sweep did not create: written only
    with --destructive; a read-only sweep may read one at least --size
    long (big; fio lays out, i.e. writes, a shorter one) (docs/sweep.md
    "Targets" rule 2). what names it in a refusal, name in the warning,
    have is its size, said. The same rules on fleet hosts:
    target.sh file_rules."""
    if o.destructive:
        if writes or not big:
            return ('overwriting %s, a file the sweep did not create, because of --destructive' % name,), None
    elif writes:
        return (), (EXIT_USAGE, 'refusing %s: an existing file the sweep did not create, and the sweep writes to it'
                    ' (its data would be destroyed); pass --destructive, a new path, or --rw read' % what)
    elif not big:
        return (), (EXIT_USAGE, 'refusing %s: an existing file the sweep did not create, shorter%s than --size %s:'
                    ' fio would write it out to full size; pass --destructive, a new path, or a smaller --size'
                    % (what, have, o.size))
    return (), None


def _file_loops(f: TargetFacts, o: Options) -> tuple[tuple[str, ...], Optional[tuple[int, str]]]:
    """A file the sweep writes, or fills (shorter than --size), that a
    loop device is stacked on is in use: only with --force (docs/sweep.md
    "Targets" rule 3; issue 36 item 1)."""
    if not o.writes and f.size >= o.size_bytes:
        return (), None
    if f.loops.error:
        return (), _refuse(f.path, f.loops.error)
    if not f.loops.why:
        return (), None
    if not o.force:
        return (), _refuse(f.path, 'the file is in use (%s); --force overrides' % f.loops.why)
    return ('writing to an in-use file %s (%s) because of --force' % (f.path, f.loops.why),), None


def check_target(f: TargetFacts, o: Options) -> Verdict:
    """The verdict on one path (docs/sweep.md "Targets"): a block device
    (check_block); anything else that exists but is not a regular file,
    or a path on a kernel pseudo-filesystem, is refused; an existing
    file is the sweep's own (its mark), else the user's (file_rules); a
    new path needs its sidecar name free (scratch.sh)."""
    p = f.path
    if f.kind == 'block':
        return check_block(p, f.block, o)
    if f.kind == 'other':
        return Verdict('file', refusal=_refuse(p, 'not a regular file or a block device'))
    if f.pseudo:
        return Verdict('file', refusal=_refuse(p, 'it is on %s, a kernel pseudo-filesystem, not storage' % f.pseudo))
    if f.kind == 'none':
        if not f.sidecar_free:
            return Verdict('file', 'new', refusal=_refuse(
                p, '%s%s, the name of its mark where the filesystem keeps no xattr (scratch.sh), is taken by'
                ' something that is not a tswap mark; move it away, or give another --target' % (p, SCRATCH_SIDECAR)))
        return Verdict('file', 'new')
    if o.writes and not f.writable:
        return Verdict('file', refusal=_refuse(p, 'the sweep writes to it and it is not writable (a read-only file'
                                               ' system, or no permission)'))
    if f.owned:
        warns, ref = _file_loops(f, o)
        return Verdict('file', 'ours', warns, ref)
    warns = ()
    if o.destructive:
        warns, ref = _file_loops(f, o)
        if ref:
            return Verdict('file', 'theirs', warns, ref)
    more, ref = file_rules('target ' + p, p, o.writes, f.size >= o.size_bytes, ' (%d bytes)' % f.size, o)
    return Verdict('file', 'theirs', warns + more, ref)


def size_refusal(path: str, dev_bytes: Optional[int], o: Options) -> Optional[tuple[int, str]]:
    """A further block target (--target a,b) smaller than --size, or whose
    size cannot be read (the first target's: sweep_host)."""
    if dev_bytes is None:
        return (EXIT_ERROR, 'cannot read the size of %s' % path)
    if dev_bytes < o.size_bytes:
        return (EXIT_USAGE, '--size %s is larger than %s (%d bytes) (see --help)'
                % (bytes_to_size(o.size_bytes), path, dev_bytes))
    return None


def rank_file(target: str, kind: str, rank: int, handle: str) -> str:
    """The path rank's handle uses on target (ranks.sh rank_file): the
    device itself, else TARGET.rankR, or TARGET.rankR.write for
    readwrite's write handle."""
    if kind == 'block':
        return target
    return '%s.rank%d%s' % (target, rank, '.write' if handle == 'write' else '')
