# SPDX-License-Identifier: GPL-2.0-only
"""Check the sweep's targets before anything is written (docs/sweep.md
"Targets: what the sweep writes to"; issue 36 item 4): every target, then
every rank file of a file target (--slot R:HANDLE, the plan's
multi-handle points: ranks.sh rank_slots), in that order, each a new
path's checks (tswap.executor.target_rules new_path_refusal), then its
verdict (check_target), a further block target's size.

Warnings are said on stderr as they come ("PROG: ...", each once); the
first refusal is said in one line and is the exit status (2, or 3 when a
tool is missing or a size cannot be read). Otherwise stdout has the bash
`declare` lines of what the executor keeps: TARGETS, TARGET_KINDS (file
or block per target), TARGET_OWNS[PATH] (each file's owner: new, ours,
theirs), TARGET_SEEN[PATH] (what each file path named when checked, as
target.sh target_identity says it: prepare_targets checks it again),
TARGET and TARGET_KIND (the first target's).

--recheck PATH: check that one path again (a file that changed between
the check and its preparation: prepare_targets) and declare its
TARGET_KIND and TARGET_OWNED.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Union

from ..executor import target_facts as facts
from ..executor.target_rules import Options, check_target, new_path_refusal, rank_file, size_refusal

HELP = "check the sweep's targets before anything is written (ranks.sh check_targets)"


def setup(p: argparse.ArgumentParser) -> None:
    p.add_argument('--writes', type=int, choices=(0, 1), required=True, help='1: a point writes')
    p.add_argument('--destructive', type=int, choices=(0, 1), default=0)
    p.add_argument('--force', type=int, choices=(0, 1), default=0)
    p.add_argument('--size', required=True, help='--size as given (said in messages)')
    p.add_argument('--size-bytes', type=int, required=True)
    p.add_argument('--default-dir', default='', help="the default target's directory (the sweep creates it)")
    p.add_argument('--prog', default='tswap-sweep', help='the name messages start with')
    p.add_argument('--slot', action='append', default=[], metavar='R:HANDLE',
                   help='a rank handle of the plan (HANDLE io or write)')
    p.add_argument('--recheck', action='store_true', help='check the one path again (prepare_targets)')
    p.add_argument('targets', nargs='+')


def _arr(name: str, vals: list[str]) -> str:
    return 'declare -ga %s=(%s)\n' % (name, ' '.join(shlex.quote(v) for v in vals))


def _assoc(name: str, kv: dict[str, str]) -> str:
    return 'declare -gA %s=(%s)\n' % (name, ' '.join('[%s]=%s' % (shlex.quote(k), shlex.quote(v))
                                                      for k, v in kv.items()))


class _Says:
    """stderr lines "PROG: ...", each warning once (util.sh warn_once)."""

    def __init__(self, prog: str) -> None:
        self.prog = prog
        self.said: set[str] = set()

    def warn(self, msg: str) -> None:
        if msg not in self.said:
            self.said.add(msg)
            sys.stderr.write('%s: %s\n' % (self.prog, msg))
            sys.stderr.flush()

    def refuse(self, code: int, msg: str) -> int:
        sys.stderr.write('%s: %s\n' % (self.prog, msg))
        return code


def check(targets: tuple[str, ...], slots: list[tuple[int, str]], writes: bool, destructive: bool,
          force: bool, size: str, size_bytes: int, default_dir: str, prog: str
          ) -> Union[int, dict[str, Union[str, tuple[str, ...], dict[str, str]]]]:
    """Every target, then the file of each slot (rank, handle) on a file
    target, checked (warnings said on stderr): the first refusal's exit
    status (said), else the executor's state: TARGETS, TARGET_KINDS,
    TARGET_OWNS, TARGET_SEEN, TARGET, TARGET_KIND (the first target's)."""
    o = Options(writes, destructive, force, size_bytes, size)
    say = _Says(prog)
    owns: dict[str, str] = {}
    seen: dict[str, str] = {}
    kinds: list[str] = []
    for i, t in enumerate(targets):
        rc, kind, _ = _one(t, True, o, say, default_dir, owns, seen)
        if rc:
            return rc
        kinds.append(kind)
        if kind == 'block' and i > 0:
            ref = size_refusal(t, facts.dev_size(t), o)
            if ref:
                return say.refuse(*ref)
    for r, h in slots:
        i = r % len(targets)
        if kinds[i] != 'file':
            continue
        rc, _, _ = _one(rank_file(targets[i], kinds[i], r, h), True, o, say, default_dir, owns, seen)
        if rc:
            return rc
    return {'TARGETS': tuple(targets), 'TARGET_KINDS': tuple(kinds), 'TARGET_OWNS': owns,
            'TARGET_SEEN': seen, 'TARGET': targets[0], 'TARGET_KIND': kinds[0]}


def _one(path: str, new_check: bool, o: Options, say: _Says, default_dir: str,
         owns: dict[str, str], seen: dict[str, str]) -> tuple[int, str, str]:
    """path's verdict said: (exit status, kind, owner); status 0 passes."""
    if new_check and not os.path.exists(path):
        why = new_path_refusal(path, facts.new_path(path), default_dir)
        if why:
            return say.refuse(2, why), '', ''
    v = check_target(facts.target_facts(path, o), o)
    for w in v.warnings:
        say.warn(w)
    if v.refusal:
        return say.refuse(*v.refusal), v.kind, v.owned
    if v.kind == 'file':
        owns[path] = v.owned
        seen[path] = facts.identity(path)
    return 0, v.kind, v.owned


def run(a: argparse.Namespace) -> int:
    if a.recheck:
        o = Options(bool(a.writes), bool(a.destructive), bool(a.force), a.size_bytes, a.size)
        rc, kind, owned = _one(a.targets[0], False, o, _Says(a.prog), a.default_dir, {}, {})
        if rc:
            return rc
        sys.stdout.write('declare -g -- TARGET_KIND=%s TARGET_OWNED=%s\n' % (kind, owned))
        return 0
    slots = []
    for slot in a.slot:
        r, _, h = slot.partition(':')
        slots.append((int(r), h))
    c = check(tuple(a.targets), slots, bool(a.writes), bool(a.destructive), bool(a.force), a.size,
              a.size_bytes, a.default_dir, a.prog)
    if isinstance(c, int):
        return c
    sys.stdout.write(_arr('TARGETS', list(a.targets)) + _arr('TARGET_KINDS', list(c['TARGET_KINDS']))
                     + _assoc('TARGET_OWNS', dict(c['TARGET_OWNS']))
                     + _assoc('TARGET_SEEN', dict(c['TARGET_SEEN']))
                     + 'declare -g -- TARGET=%s TARGET_KIND=%s\n'
                     % (shlex.quote(a.targets[0]), c['TARGET_KIND']))
    return 0
