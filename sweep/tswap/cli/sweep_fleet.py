# SPDX-License-Identifier: GPL-2.0-only
"""A new fleet run's hosts and settings, before anything runs
(docs/fleet.md): the hosts file read and checked (tswap.plan.hosts), each
host's own fio options parsed by fio here, and the fleet defaults
(--outlier-pct, --connect-timeout, --host-timeout, --fio-version)."""

from __future__ import annotations

import locale
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Optional

from ..plan import hosts as hostsfile
from ..plan.values import Refusal, abspath, usage
from .sweep_host import Home
from .sweep_setup import warn

# the fleet options' defaults (docs/fleet.md)
OUTLIER_PCT_DEFAULT = '20'
CONNECT_TIMEOUT_DEFAULT = '10'
HOST_TIMEOUT_DEFAULT = '120'


@dataclass(frozen=True)
class Fleet:
    """A fleet run's settings as the shell's globals have them: the hosts
    file (absolute), the hosts, outlier_pct as given (a percentage),
    the timeouts (s, whole) and the fio version the hosts must run."""
    hosts_file: str
    hosts: tuple[hostsfile.Host, ...]
    outlier_pct: str
    connect_timeout: str
    host_timeout: str
    fio_want: str

    def config(self) -> dict[str, object]:
        """sweep.json's "fleet" (tswap.plan.hosts.fleet_config)."""
        return hostsfile.fleet_config(self.hosts, self.hosts_file, float(self.outlier_pct),
                                      int(self.connect_timeout), int(self.host_timeout),
                                      self.fio_want)


def fio_version() -> Optional[str]:
    """`fio --version`'s output, trailing newlines dropped; None when fio
    is missing or fails."""
    try:
        r = subprocess.run(['fio', '--version'], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, check=False)
    except OSError:
        return None
    text = r.stdout.decode('utf-8', 'surrogateescape').rstrip('\n')
    return text if r.returncode == 0 else None


def _utf8() -> bool:
    try:
        return locale.nl_langinfo(locale.CODESET) == 'UTF-8'
    except (AttributeError, ValueError):
        return True


def _lines(data: bytes) -> list[bytes]:
    """The lines as bash's `while read -r line || [ -n "$line" ]` reads
    them: NUL bytes dropped, a last line without a newline kept."""
    parts = data.replace(b'\0', b'').split(b'\n')
    if parts[-1] == b'':
        parts.pop()
    return parts


def _shell_text(s: str, utf8: bool) -> str:
    return s if utf8 else s.encode('latin-1').decode('utf-8', 'surrogateescape')


def load_hosts(path: str, target: str, engine: str) -> tuple[hostsfile.Host, ...]:
    """The hosts of the hosts file at path (absolute): Refusal (exit 2)
    when it cannot be read or a line is wrong (fleet.sh load_hosts)."""
    if not (os.path.isfile(path) and os.access(path, os.R_OK)):
        raise usage('--hosts: cannot read %s' % path)
    with open(path, 'rb') as f:
        data = f.read()
    utf8 = _utf8()
    enc = (lambda s: s.encode('utf-8', 'surrogateescape').decode('latin-1')) if not utf8 \
        else (lambda s: s)
    lines = [b.decode('utf-8', 'surrogateescape') if utf8 else b.decode('latin-1')
             for b in _lines(data)]
    try:
        hosts = hostsfile.parse(lines, enc(path), enc(target), enc(engine), utf8)
    except Refusal as r:
        raise Refusal(r.code, _shell_text(r.message, utf8), r.prog) from None
    if utf8:
        return hosts
    return tuple(hostsfile.Host(*(_shell_text(x, False) if isinstance(x, str)
                                  else tuple(_shell_text(y, False) for y in x)
                                  for x in (h.addr, h.label, h.id, h.target, h.engine, h.opts,
                                            h.where))) for h in hosts)


def _why(out: str) -> str:
    lines = [ln for ln in out.rstrip('\n').split('\n') if ln.strip(' \t\n\v\f\r')][:2]
    return ' '.join(lines) + ' ' if lines else ''


def check_options(hosts: tuple[hostsfile.Host, ...]) -> None:
    """Each host's own fio options parse (fio --parse-only here: the
    hosts must run this fio version), so that a typo stops the run before
    anything starts: an unknown option ("Bad option") is a usage error,
    a value this machine rejects (e.g. cpus_allowed beyond its CPUs) only
    a warning, since fio checks some values against the machine it
    parses on (fleet.sh fleet_check_options). Nothing without fio."""
    if shutil.which('fio') is None:
        return
    d = tempfile.mkdtemp(prefix='tswap-sweep.', dir=os.environ.get('TMPDIR') or '/tmp')
    try:
        for h in hosts:
            if not h.opts:
                continue
            with open(d + '/check.fio', 'wb') as f:
                f.write(('[global]\nioengine=null\nsize=1m\n%s\n[check]\nrw=read\n'
                         % '\n'.join(h.opts)).encode('utf-8', 'surrogateescape'))
            r = subprocess.run(['fio', '--parse-only', 'check.fio'], cwd=d, stdin=None,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
            if r.returncode == 0:
                continue
            out = r.stdout.decode('utf-8', 'surrogateescape')
            why = _why(out)
            if re.search('^Bad option', out, re.M):
                raise usage('%s: fio rejects the options of %s: %s' % (h.where, h.label, why))
            warn('%s: fio here rejects the options of %s (%s); going on: the host checks them'
                 ' itself' % (h.where, h.label, why))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def setup(h: Home, hosts_file: str, target: str, engine: str, outlier_pct: str,
          connect_timeout: str, host_timeout: str, fio_want: str,
          fio: Optional[str]) -> Fleet:
    """A new fleet run's settings (fleet.sh fleet_setup): the options'
    defaults, fio's version here for --fio-version's (fio: fio --version,
    None without it), the hosts and their options checked."""
    connect = str(hostsfile.shell_int(connect_timeout or CONNECT_TIMEOUT_DEFAULT))
    hostt = str(hostsfile.shell_int(host_timeout or HOST_TIMEOUT_DEFAULT))
    path = abspath(hosts_file, h.pwd)
    hosts = load_hosts(path, target, engine)
    check_options(hosts)
    return Fleet(path, hosts, outlier_pct or OUTLIER_PCT_DEFAULT, connect, hostt,
                 fio_want or fio or '')
