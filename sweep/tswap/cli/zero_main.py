# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero's command line (sweep/tswap-zero runs main(home, argv)): the
options and their refusals (zero_args; the inputs they name: zero_inputs),
the --out folder, the plan (tswap.plan.zero_plan) and its fio jobs
(tswap.plan.zero_fiojob), the dry run's table, --emit-jobs (zero_emit),
and the replay (zero_run, fio under zero_fio). docs/zero-infinity.md.

Exit codes: 0 done; 2 usage error, bad ds_config or refused target; 3 run
error (fio or the engine failed, bytes differ from the plan); 130/143/129
interrupted (fio stopped, the run folders removed).
"""

from __future__ import annotations

import signal
import sys
from typing import Any

from ..plan.zero_fiojob import job_text, too_many_jobs
from ..plan.zero_plan import path_notes, table
from .zero_args import USAGE, check, options
from .zero_common import (DIO_UNIT, EXIT_ERROR, Exit, ZeroArgs, find_engine, make_plan, print_version, say,
                          usage_error, write_plan)
from .zero_emit import write_profile
from .zero_inputs import read_config
from .zero_run import OutClaim, merge_aio, run_replay


def run(home: str, argv: list[str]) -> int:
    """tswap-zero ARGS once main has the signals: --help, --version, or
    the checked options' plan and its dry run, profile or replay."""
    o = options(argv)
    if o is None:
        sys.stdout.write(USAGE)
        return 0
    if 'version' in o:
        print_version(home)
        return 0
    a = check(home, o)
    with OutClaim(a.out):
        return _plan_and_run(home, a)


def _plan_and_run(home: str, a: ZeroArgs) -> int:
    """The plan in a.out (plan.json, step.fio, layout.fio; the table on
    stdout), then the --emit-jobs profile, the dry run's refusal or the
    replay."""
    cfg = read_config(a.cfg_path)
    plan = make_plan('--ds-config ' + a.cfg_path, cfg, a, '')
    if a.aio_doc is not None:
        # the --aio block goes into the ds_config (zero_run): checked now, in
        # the dry run too, and named as --aio's
        make_plan('--aio ' + a.aio, merge_aio(cfg, a.aio_doc), a, '')
    out = a.out
    write_plan(plan, out + '/plan.json')
    engine = find_engine(home)
    if engine is None:
        if not a.dry:
            raise Exit(EXIT_ERROR, 'tswap.so not found (run make, or set TSWAP_ENGINE)')
        engine = 'tswap.so'
    # rank R -> target R mod (number of targets), its run folder
    tmap = [a.targets[r % len(a.targets)] for r in range(a.ranks)]
    if a.emit:
        write_profile(a, plan)
        return 0
    dirs = ['%s/tswap-zero-%s' % (t, a.runid) for t in tmap]
    based = [d + '/base' for d in dirs]
    with open(out + '/step.fio', 'w', encoding='utf-8') as f:
        f.write(job_text(plan, 'step', based, DIO_UNIT, a.scale, engine,
                         '; tswap-zero: one ZeRO-Infinity step (plan.json in this folder)'))
    with open(out + '/layout.fio', 'w', encoding='utf-8') as f:
        f.write(job_text(plan, 'layout', based, DIO_UNIT, a.scale, engine,
                         "; tswap-zero: the swap files' initial write"))
    for line in table(plan) + path_notes(plan, list(a.targets)):
        say(line)
    say('')
    say('plan: %s/plan.json  jobs: %s/step.fio, %s/layout.fio' % (out, out, out))
    sys.stdout.flush()
    if a.dry:
        # the files stay, to read; the status is the replay's refusal
        for mode in ('step', 'layout'):
            m = too_many_jobs(plan, mode)
            if m:
                raise usage_error('%s.fio: needs %s' % (mode, m))
        return 0
    return run_replay(home, a, plan, cfg, tmap, dirs, engine)


def _stop(name: str, code: int) -> Any:
    def h(signum: int, frame: Any) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # the clean-up is not cut short
        raise Exit(code, 'interrupted (SIG%s) before the replay: nothing run' % name)
    return h


def main(home: str, argv: list[str]) -> int:
    """tswap-zero ARGS: home is the folder holding tswap/ and lib/ (sweep/
    in a checkout, PREFIX/share/tswap installed)."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # until the replay takes them over (zero_run): end cleanly, so the
    # --out claim and a folder made for it are given back
    for name, code in (('INT', 130), ('TERM', 143), ('HUP', 129)):
        signal.signal(getattr(signal, 'SIG' + name), _stop(name, code))
    try:
        # the entry starts Python with SIGINT blocked: a ^C from here on
        # (one that came meanwhile, too) is _stop's
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        return run(home, argv)
    except Exit as e:
        if e.message:
            sys.stdout.flush()
            # one line whatever a value it quotes holds: control characters escaped
            msg = ''.join(c if ' ' <= c != '\x7f' else '\\n' if c == '\n' else '\\x%02x' % ord(c)
                          for c in e.message)
            print('tswap-zero: %s' % msg, file=sys.stderr)
        return e.code
