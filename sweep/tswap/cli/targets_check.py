# SPDX-License-Identifier: GPL-2.0-only
"""Check the sweep's targets before anything is written (docs/sweep.md
"Targets: what the sweep writes to"; issue 36 item 4): every target, then
every rank file of a file target (--slot R:HANDLE, the plan's
multi-handle points: ranks.sh rank_slots), in that order, each a new
path's checks (tswap.executor.target_rules new_path_refusal), then its
verdict (check_target), a further block target's size.

Warnings are said on stderr as they come ("PROG: ...", each once); the
first refusal is said in one line and is the result (2, or 3 when a
tool is missing or a size cannot be read). check's answer otherwise:
TARGET_KINDS (file or block per target), TARGET_OWNS[PATH] (each
file's owner: new, ours, theirs), TARGET_SEEN[PATH] (what each file
path named when checked, as target.sh target_identity says it), and
TARGET_KIND (the first target's). _one checks one path again (a file
that changed between the check and its preparation: tswap.cli.run_local).
"""

from __future__ import annotations

import os
import sys
from typing import Union

from ..executor import target_facts as facts
from ..executor.target_rules import Options, check_target, new_path_refusal, rank_file, size_refusal


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

