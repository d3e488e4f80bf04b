# SPDX-License-Identifier: GPL-2.0-only
"""A point's directory on this host before fio runs: its job.fio
(tswap.plan.jobs point_job, tswap.plan.checkpoint job_file), its run.sh,
fio's environment (the engine, target and rank-file paths as fio sees
them from the point's directory, or the descriptors the sweep checked),
and the sync before a read point. The sweep's bash did this before
(jobs.sh fio_path, write_run_sh; ranks.sh rank_file, rank_var,
rank_env; target.sh target_fds_export); the bytes are the same.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from typing import Mapping

from ..plan.checkpoint import job_file
from ..plan.jobs import JobSettings, point_job

# what bash's printf %q escapes with a backslash in printable ASCII
# (bash 5.2 lib/sh/shquote.c sh_backslash_quote with printf's flags:
# '#' first, '~' first or after ':' or '=')
_Q_ALWAYS = frozenset(' !"$&\'()*,;<>?[\\]^`{|}')
# fio cuts option values at these, and replaces these variables
_FIO_UNSAFE = (';', '#', '$pagesize', '$mb_memory', '$ncpus', '\n')
# bash's [[:space:]] in the C and UTF-8 locales
_SPACE = ' \t\n\v\f\r'

FIO_ARGV = ('fio', '--output-format=json', '--eta=never', 'job.fio')


def bash_q(s: str) -> str:
    """s as bash's printf %q writes it (a word bash reads back as s):
    '' for nothing, backslashes in printable ASCII; anything else (a
    control character, non-ASCII: $'...' or the locale's rules) from bash
    itself."""
    if s == '':
        return "''"
    if not all(' ' <= c <= '~' for c in s):
        out = subprocess.run(['bash', '-c', 'printf %q "$1"', 'q', s], stdout=subprocess.PIPE, check=True)
        return os.fsdecode(out.stdout)
    r = []
    for i, c in enumerate(s):
        if (c in _Q_ALWAYS or (c == '#' and i == 0)
                or (c == '~' and (i == 0 or s[i - 1] in ':='))):
            r.append('\\')
        r.append(c)
    return ''.join(r)


def fio_unsafe(path: str) -> bool:
    """fio cannot take path as an option value (jobs.sh fio_unsafe): it
    cuts values at ';' and '#', strips blanks at both ends, replaces
    $pagesize, $mb_memory and $ncpus, reads job files line by line."""
    return any(u in path for u in _FIO_UNSAFE) or (path != '' and (path[0] in _SPACE or path[-1] in _SPACE))


def fio_path(path: str, link: str, depth: int, run: str) -> str:
    """path as fio sees it from a directory depth levels below the run
    directory (jobs.sh fio_path): a path fio cannot take through the
    relative symlink RUN/LINK (made here, replacing one there, as ln -sfn);
    ':' escaped as '\\:' in a target's filename=."""
    if fio_unsafe(path) or (link == 'engine.so' and ':' in path):
        dst = os.path.join(run, link)
        tmp = '%s.%d.lnk' % (dst, os.getpid())
        os.symlink(path, tmp)
        os.replace(tmp, dst)
        return '../' * depth + link
    if link.startswith('target'):
        return path.replace(':', '\\:')
    return path


@dataclass(frozen=True)
class Targets:
    """The sweep's targets (TARGETS, TARGET_KINDS: file or block), the
    target of now (TARGET: the first, or a rank file while it is
    preconditioned), and the plan's rank slots ((rank, handle): handle
    'io', or 'write' for readwrite's second)."""
    all: tuple[str, ...]
    kinds: tuple[str, ...]
    now: str
    slots: tuple[tuple[int, str], ...] = ()

    def rank_file(self, rank: int, handle: str) -> str:
        """The path rank's handle uses (ranks.sh rank_file): the block
        device itself, else TARGET.rankR[.write], of target R mod N."""
        i = rank % len(self.all)
        kind = self.kinds[i] if i < len(self.kinds) else 'file'
        if kind == 'block':
            return self.all[i]
        return '%s.rank%d%s' % (self.all[i], rank, '.write' if handle == 'write' else '')

    def json_list(self) -> list[str]:
        """result.json's targets (ranks.sh targets_json): TARGETS, or
        TARGET alone when there are none."""
        return list(self.all) if self.all else [self.now]


def rank_var(rank: int, handle: str) -> str:
    """The environment variable fio reads rank's path from (ranks.sh)."""
    return 'TSWAP_RANK%d%s' % (rank, '_WRITE' if handle == 'write' else '')


@dataclass(frozen=True)
class FioEnv:
    """What fio gets: the variables as run.sh sets them (paths), those
    fio runs with (a checked target's /proc/self/fd/N instead), and the
    descriptors it keeps."""
    lines: tuple[tuple[str, str], ...]
    run_env: Mapping[str, str]
    fds: tuple[int, ...]


def fio_env(engine: str, size: str, t: Targets, depth: int, run: str,
            fds: Mapping[str, int]) -> FioEnv:
    """fio's environment from a directory depth levels below run
    (exec-local.sh run_fio, ranks.sh rank_env, target.sh
    target_fds_export); fds: PATH -> the descriptor the sweep opened and
    checked for it (target_fds_open)."""
    lines = [('TSWAP_ENGINE', fio_path(engine, 'engine.so', depth, run)),
             ('TSWAP_TARGET', fio_path(t.now, 'target', depth, run)),
             ('TSWAP_SIZE', size)]
    over = {}
    if t.now in fds:
        over['TSWAP_TARGET'] = '/proc/self/fd/%d' % fds[t.now]
    for r, h in t.slots:
        f = t.rank_file(r, h)
        v = rank_var(r, h)
        lines.append((v, fio_path(f, 'target.rank%d.%s' % (r, h), depth, run)))
        if f in fds:
            over[v] = '/proc/self/fd/%d' % fds[f]
    env = dict(lines)
    env.update(over)
    return FioEnv(tuple(lines), env, tuple(sorted(set(fds.values()))))


def run_sh(grid: str, target: str, env: FioEnv) -> str:
    """The text of run.sh, which reruns the point in its directory
    (jobs.sh write_run_sh)."""
    out = ['#!/usr/bin/env bash\n',
           '# Rerun this point exactly (tswap-sweep %s).\n' % grid,
           'set -euo pipefail\ncd "$(dirname "$0")"\n',
           '# target: %s\n' % bash_q(target)]
    out += ['export %s=%s\n' % (k, bash_q(v)) for k, v in env.lines]
    out.append('exec fio --output-format=json --eta=never job.fio\n')
    return ''.join(out)


def write_exec(path: str, text: str) -> None:
    """path with text, then executable as `chmod +x` makes it (each x bit
    the umask allows)."""
    with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f:
        f.write(text)
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, os.stat(path).st_mode | (0o111 & ~mask))


def job_text(line: str, s: JobSettings) -> str:
    """The point's job file (jobs.sh point_job):
    a checkpoint point's (tswap.plan.checkpoint), else tswap.plan.jobs';
    their errors (CheckpointError, JobError) go to the caller."""
    if line.split('\t', 2)[1:2] == ['checkpoint']:
        return job_file(line, s.size_bytes)
    return point_job(line, s)


def before_read() -> None:
    """What a read point needs before its fio: a sync (the whole host's
    dirty pages written back, the run directory's among them), so that
    no writeback of earlier work runs on the device under the point's
    reads. Nothing more: the page cache is left alone. Every read a
    point does is O_DIRECT (the engine refuses direct=0:
    engine/options.c tswap_check_options; the ceiling's libaio jobs
    have direct=1: tswap.plan.jobs point_job), so no read is served
    from the page cache, and fio invalidates the target's cached pages
    before each job anyway (invalidate, default 1: fio 3.33
    ioengines.c td_io_open_file -> filesetup.c __file_invalidate_cache,
    posix_fadvise DONTNEED for a file, BLKFLSBUF for a block device).
    Dropping the host's whole page cache (drop_caches, as the sweep did
    until issue 36) bought no point anything and evicted every other
    user's cache on the host."""
    os.sync()
