# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero's fio: each run under sweep/lib/fioproc.sh's guard (its own
process group; killed with its job processes if tswap-zero dies,
PR_SET_PDEATHSIG), its job processes found by the TSWAP_FIO_GUARD tag
in their environment, stopped on a forwarded signal within FIO_GRACE
seconds, as tswap-sweep's fio is (fioproc.sh fio_exec, fio_stop)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Optional

from .. import jqjson
from .files import write_text
from .zero_common import EXIT_ERROR, Exit, warn

# seconds from the forwarded signal to SIGKILL (fioproc.sh FIO_GRACE)
FIO_GRACE = 5


def _tagged(tag: str) -> list[int]:
    """The pids whose environment holds TSWAP_FIO_GUARD=tag."""
    want = ('TSWAP_FIO_GUARD=' + tag).encode()
    out = []
    for p in os.listdir('/proc'):
        if not p.isdigit():
            continue
        try:
            with open('/proc/%s/environ' % p, 'rb') as f:
                if want in f.read().split(b'\0'):
                    out.append(int(p))
        except OSError:
            pass
    return out


def _alive(pid: int) -> bool:
    try:
        with open('/proc/%d/stat' % pid, encoding='utf-8', errors='replace') as f:
            st = f.read().rsplit(')', 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return st != 'Z'


def _reap_tagged(tag: str) -> None:
    """SIGKILL the tagged processes until none is left."""
    i = 0
    while True:
        ps = _tagged(tag)
        for p in ps:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        if not _tagged(tag):
            return
        if i == 200:
            warn('processes of fio (TSWAP_FIO_GUARD=%s) still not gone 10 s after SIGKILL: waiting for them' % tag)
        i += 1
        time.sleep(0.05)


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
    """fio runs under fioproc.sh's guard: its own process group, killed
    with its job processes if tswap-zero dies (PR_SET_PDEATHSIG), stopped
    on a forwarded signal."""

    def __init__(self, home: str):
        self.home = home
        self.proc: Optional[subprocess.Popen] = None
        self.tag = ''

    def run(self, job: str, out: str) -> None:
        """fio with JSON output; exit 3 with fio's stderr tail when it
        fails or a job reports an I/O error."""
        self.tag = '%d.%d.%d' % (os.getpid(), time.time_ns() // 1000, int.from_bytes(os.urandom(4), 'little'))
        with open(out + '.stderr', 'wb') as err:
            self.proc = subprocess.Popen(
                ['setsid', 'setpriv', '--pdeathsig', 'USR1', '--', 'bash',
                 os.path.join(self.home, 'lib', 'fioproc.sh'), 'guard', str(os.getpid()), self.tag,
                 'fio', '--output-format=json', '--output=' + out, job], stdin=subprocess.DEVNULL, stderr=err)
            rc = self.proc.wait()
        _reap_tagged(self.tag)
        self.proc = None
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

    def stop(self, name: str) -> None:
        """Forward the signal to fio's group, SIGKILL it and the tagged
        processes after FIO_GRACE seconds; return once none is left."""
        p = self.proc
        if p is None:
            return
        sig = getattr(signal, 'SIG' + name)
        try:
            os.killpg(p.pid, sig)
        except OSError:
            pass
        for _ in range(FIO_GRACE * 10):
            if not (_alive(p.pid) or _tagged(self.tag)):
                break
            time.sleep(0.1)
        if _alive(p.pid) or _tagged(self.tag):
            warn('fio (process group %d) did not stop on SIG%s within %d s: killing it' % (p.pid, name, FIO_GRACE))
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        _reap_tagged(self.tag)
        try:
            p.wait()
        except OSError:
            pass
        self.proc = None
