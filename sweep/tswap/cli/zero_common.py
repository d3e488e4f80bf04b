# SPDX-License-Identifier: GPL-2.0-only
"""What tswap-zero's command line modules share: the exit codes, one-line
errors, the checked options (ZeroArgs, from zero_args), the plan they make
(make_plan), the engine's place, --version."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Optional

from .. import jqjson
from ..plan.zero_config import PlanError
from ..plan.zero_plan import build
from ..plan.zero_release import ZeroRelease
from .files import write_text

PROG = 'tswap-zero'
EXIT_USAGE, EXIT_ERROR = 2, 3
# Replay size unit, bytes: the DIO offset alignment the replay rounds each
# tensor up to (4096: NVMe's usual logical block; tswap checks the real one).
DIO_UNIT = 4096


class Exit(Exception):
    """End with status code after printing message (if any) on stderr as
    "tswap-zero: MESSAGE"."""

    def __init__(self, code: int, message: Optional[str] = None):
        super().__init__(message)
        self.code, self.message = code, message


def usage_error(msg: str) -> Exit:
    """A usage error: one line, exit 2 (tswap-zero's carry no "(see
    --help)" suffix, unlike tswap-sweep's)."""
    return Exit(EXIT_USAGE, msg)


@dataclass(frozen=True)
class ZeroArgs:
    """The command line once checked (zero_args.check): what the plan,
    the job files and the replay are made from."""
    cfg_path: str                         # --ds-config FILE
    params: int                           # model parameters (--params, or the sum of --param-numels)
    world: int                            # data-parallel world size (--world, default --ranks)
    ranks: int                            # GPU ranks on this node, 1 to 1024
    pnumel: int                           # elements per parameter tensor (--param-numel, default 5e7)
    numels: Optional[tuple[float, ...]]   # --param-numels' elements per tensor, None without it
    steps: int                            # replays of the step (--steps)
    scale: int                            # every tensor size divided by it (--scale)
    step: str                             # steady, first or init (--step)
    dtype: str                            # fp32, fp16, bf16, or '' (the ds_config's)
    release: ZeroRelease                  # --ds-version's rules
    targets: tuple[str, ...]              # absolute target folders, each once (('CWD/emit',) for --emit-jobs)
    aio: str                              # --aio FILE, or ''
    aio_doc: Any                          # its "aio" block, None without --aio
    out: str                              # --out, or its default (build/zero/RUNID, ./tswap-zero-RUNID)
    runid: str                            # YYYYmmdd-HHMMSS-PID: names --out's default and the run folders
    emit: str                             # --emit-jobs FILE, or ''
    dry: bool                             # --dry-run
    keep: bool                            # --keep
    ceiling: bool                         # not --no-ceiling


def make_plan(label: str, cfg: Any, a: ZeroArgs, out: str) -> dict[str, Any]:
    """The plan of a's step for ds_config cfg, written to out as plan.json
    (through out.tmp; out "": not written); a refused plan: one line naming
    the option or the ds_config key (as label's: "--ds-config FILE",
    "--aio FILE"), exit 2."""
    try:
        plan = build(cfg, float(a.params), float(a.world), float(a.ranks), float(a.pnumel), a.step, a.dtype,
                     a.numels, a.release)
    except PlanError as e:
        m = str(e)
        raise usage_error(m if m.startswith('--') else '%s: %s' % (label, m[len('ds_config: '):]
                                                                   if m.startswith('ds_config: ') else m))
    if out:
        write_plan(plan, out)
    return plan


def write_plan(plan: dict[str, Any], out: str) -> None:
    """plan.json written to out through out.tmp."""
    write_text(out, jqjson.dumps(plan) + '\n')


def say(line: str) -> None:
    sys.stdout.write(line + '\n')


def warn(msg: str) -> None:
    sys.stdout.flush()
    sys.stderr.write('%s: %s\n' % (PROG, msg))
    sys.stderr.flush()


def dirname(p: str) -> str:
    """dirname(1) of p."""
    p = p.rstrip('/') or ('/' if p.startswith('/') else p)
    if '/' not in p:
        return '.'
    return p[:p.rfind('/')].rstrip('/') or '/'


def find_engine(home: str) -> Optional[str]:
    """tswap.so: $TSWAP_ENGINE, build/tswap.so in a checkout, else
    PREFIX/lib/fio/tswap.so next to the installed script; absolute."""
    for c in (os.environ.get('TSWAP_ENGINE', ''), os.path.join(home, '..', 'build', 'tswap.so'),
              os.path.join(home, '..', '..', 'lib', 'fio', 'tswap.so')):
        if c and os.path.isfile(c):
            return os.path.normpath(os.path.join(logical_cwd(), c))
    return None


def logical_cwd() -> str:
    """The working directory as the shell names it ($PWD when it is this
    directory, symlinks kept), else the physical one."""
    pwd = os.environ.get('PWD', '')
    try:
        if pwd.startswith('/') and os.path.samefile(pwd, '.'):
            return pwd
    except OSError:
        pass
    return os.getcwd()


def print_version(home: str) -> None:
    """tswap-sweep --version's shape: the release (the Makefile's
    TSWAP_VERSION and the git commit in a checkout, PREFIX/share/tswap/VERSION
    installed), the engine tswap-zero would use, fio's version."""
    v, c = '', ''
    root = os.path.join(home, '..')
    try:
        if os.path.isfile(os.path.join(root, 'Makefile')) and os.path.isdir(os.path.join(root, 'engine')):
            with open(os.path.join(root, 'Makefile'), encoding='utf-8') as f:
                v = '\n'.join(m.group(1) for m in re.finditer(r'^TSWAP_VERSION[ \t]*:=[ \t]*(.*)$', f.read(), re.M))
            r = subprocess.run(['git', '-C', root, 'describe', '--always', '--dirty', '--tags'], check=False,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            c = r.stdout.decode().strip() if r.returncode == 0 else ''
        elif os.path.isfile(os.path.join(home, 'VERSION')):
            with open(os.path.join(home, 'VERSION'), encoding='utf-8') as f:
                v = f.read().rstrip('\n')
    except OSError:
        pass
    try:
        r = subprocess.run(['fio', '--version'], check=False, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
        fio = r.stdout.decode().strip() if r.returncode == 0 else 'not installed'
    except OSError:
        fio = 'not installed'
    say('%s (tswap) %s%s' % (PROG, v or 'unknown', ' (commit %s)' % c if c else ''))
    e = find_engine(home)
    if e:
        say('engine: %s (built with this tswap version; its stats JSON says tswap_version)' % e)
    else:
        say('engine: none found (TSWAP_ENGINE, build/tswap.so, PREFIX/lib/fio/tswap.so)')
    say('fio: %s' % fio)
