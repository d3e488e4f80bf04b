# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero's fio, run in tswap-zero's own process under
tswap.executor.fioproc, as tswap-sweep's point process runs it: fio in
its own session and process group, dying with tswap-zero
(PR_SET_PDEATHSIG SIGKILL: tswap-zero's jobs are `thread` jobs, so fio's
death ends them too), tagged TSWAP_FIO_GUARD for any process it forks.
While fio runs, INT, TERM, HUP, USR1 and CHLD are blocked and taken
with sigtimedwait: a stop signal goes to fio's group, SIGKILL follows
after fioproc.FIO_GRACE seconds (tswap-zero says so), and the run ends
as Interrupted; USR1, whose default action ends tswap-zero, kills fio at
once and then tswap-zero. fio's stderr, and the notes on it
("tswap fio guard: ..."), go to OUT.stderr."""

from __future__ import annotations

import os
import signal
import sys

from .. import jqjson
from ..executor import fioproc
from .files import write_text
from .zero_common import EXIT_ERROR, Exit, warn


class Interrupted(Exception):
    """SIGINT, SIGTERM or SIGHUP (name) during the replay; code 128 + N."""

    def __init__(self, name: str, code: int):
        super().__init__(name)
        self.name, self.code = name, code


def _note(err: int, msg: str) -> None:
    """A note on fio's run in OUT.stderr (fio's stderr), as its bash
    guard wrote them."""
    try:
        os.write(err, ('tswap fio guard: %s\n' % msg).encode())
    except OSError:
        pass


def run_fio(argv: list[str], err: int) -> int:
    """fio (argv) with stderr on err, waited for; its status as bash's
    wait gives it (128 + N when signal N ended it; 127 when it cannot
    start). Interrupted when a stop signal stopped it (the signals
    ignored from then on: the replay's clean-up is not cut short); dies
    of SIGUSR1 after killing fio."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, fioproc.TAKEN)
    try:
        try:
            fio = fioproc.Fio(argv, '.', dict(os.environ), 1, err, warn=warn)
        except OSError as e:
            _note(err, 'cannot run %s: %s' % (argv[0], e.strerror))
            return 127
        try:
            rc = fio.wait()
        except fioproc.Stopped as s:
            if s.sig == signal.SIGUSR1:
                fioproc.die_of(s.sig)
            for sig in fioproc.STOPS:
                signal.signal(sig, signal.SIG_IGN)
            raise Interrupted(signal.Signals(s.sig).name[3:], 128 + s.sig) from None
        # fio's job processes end before it does; any left would run on
        fio.warn = lambda m: _note(err, m)
        if fio.leftovers():
            _note(err, 'fio exited %d and left job processes running: killed' % rc)
        return rc
    finally:
        # a stop signal that came once fio was done is the handlers'
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _split_notes(out: str, text: str) -> None:
    """fio writes its log (the engine's notes, e.g. tswap_pin=auto running
    unlocked) into --output before the JSON document: move those lines to
    out.stderr, leave the JSON alone in out (from its first line "{", as
    the sweep's sed -n '/^{/,$p'), and say so once on stderr."""
    if text.startswith('{'):
        return
    i = text.find('\n{')
    if i < 0:
        return
    notes = text[:i + 1]
    with open(out + '.stderr', 'a', encoding='utf-8') as f:
        f.write(notes)
    write_text(out, text[i + 1:])
    first = notes.split('\n', 1)[0]
    warn('fio logged %d line(s) before its JSON (see %s.stderr), the first: %s'
         % (notes.count('\n'), out, first[:300]))


class Fio:
    """tswap-zero's fio runs, one at a time (run_fio)."""

    def run(self, job: str, out: str) -> None:
        """fio with JSON output; exit 3 with fio's stderr tail when it
        fails or a job reports an I/O error."""
        with open(out + '.stderr', 'wb') as err:
            rc = run_fio(['fio', '--output-format=json', '--output=' + out, job], err.fileno())
        if rc != 0:
            try:
                with open(out + '.stderr', encoding='utf-8', errors='replace') as f:
                    sys.stderr.write(''.join(f.readlines()[-5:]))
            except OSError:
                pass
            hint = ''
            try:
                with open(out + '.stderr', encoding='utf-8', errors='replace') as f:
                    if 'tswap_alloc=deepspeed: cannot mlock' in f.read():
                        hint = ('; DeepSpeed 0.19.4+ locks its swap buffers (new_cpu_locked_tensor): raise ulimit -l, '
                                'or --ds-version 0.19.3 for pin_memory\'s')
            except OSError:
                pass
            raise Exit(EXIT_ERROR, 'fio failed on %s (see %s.stderr)%s' % (job, out, hint))
        try:
            with open(out, encoding='utf-8', errors='replace') as f:
                text = f.read()
            _split_notes(out, text)
            with open(out, encoding='utf-8') as f:
                doc = jqjson.loads(f.read())
            bad = any(j['error'] != 0 for j in doc['jobs'])
        except (OSError, ValueError, KeyError, TypeError):
            raise Exit(EXIT_ERROR, 'fio wrote no JSON for %s (see %s)' % (job, out)) from None
        if bad:
            raise Exit(EXIT_ERROR, 'a job of %s reported an I/O error (see %s)' % (job, out))
