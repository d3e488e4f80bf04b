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
from typing import Optional

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


def run(a: argparse.Namespace) -> int:
    o = Options(bool(a.writes), bool(a.destructive), bool(a.force), a.size_bytes, a.size)
    say = _Says(a.prog)
    owns: dict[str, str] = {}
    seen: dict[str, str] = {}

    def one(path: str, new_check: bool) -> Optional[tuple[int, str, str]]:
        """path's verdict said: (exit status, kind, owner); status 0 passes."""
        if new_check and not os.path.exists(path):
            why = new_path_refusal(path, facts.new_path(path), a.default_dir)
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

    if a.recheck:
        rc, kind, owned = one(a.targets[0], False)
        if rc:
            return rc
        sys.stdout.write('declare -g -- TARGET_KIND=%s TARGET_OWNED=%s\n' % (kind, owned))
        return 0
    kinds: list[str] = []
    for i, t in enumerate(a.targets):
        rc, kind, _ = one(t, True)
        if rc:
            return rc
        kinds.append(kind)
        if kind == 'block' and i > 0:
            ref = size_refusal(t, facts.dev_size(t), o)
            if ref:
                return say.refuse(*ref)
    for slot in a.slot:
        r, _, h = slot.partition(':')
        i = int(r) % len(a.targets)
        if kinds[i] != 'file':
            continue
        rc, _, _ = one(rank_file(a.targets[i], kinds[i], int(r), h), True)
        if rc:
            return rc
    sys.stdout.write(_arr('TARGETS', a.targets) + _arr('TARGET_KINDS', kinds) + _assoc('TARGET_OWNS', owns)
                     + _assoc('TARGET_SEEN', seen)
                     + 'declare -g -- TARGET=%s TARGET_KIND=%s\n' % (shlex.quote(a.targets[0]), kinds[0]))
    return 0
