# SPDX-License-Identifier: GPL-2.0-only
"""Fleet mode's hosts file (--hosts, docs/fleet.md "The hosts file"): its
lines as hosts, the paths fio on a host can take, and the fleet part of
sweep.json (what --resume reads back: tswap.cli.sweep_resume).

One host per line: HOST[,PORT] [target=PATH] [engine=PATH] [name=LABEL]
[FIO_OPTION[=VALUE]...]. Blanks separate words; "..." keeps blanks in a
word (\\" and \\\\ inside quotes); a '#' at the start of a word starts a
comment. Each point runs as one `fio --client=HOST,PORT job.fio` per host.

Text is str as the shell reads it: in a UTF-8 locale the file's bytes
decoded with surrogateescape (a character a step), else one character a
byte (latin-1); the caller turns the results back into the shell's text
(tswap.cli.sweep_fleet)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from .values import shown, undecodable, usage

# fio --server's default port (docs/fleet.md)
FLEET_PORT = 8765

# [[:space:]] as bash tests it: ASCII's blanks, and in a UTF-8 locale
# glibc's other spaces (iswspace: not the no-break ones)
_ASCII_SPACE = frozenset(' \t\n\v\f\r')
_UTF8_SPACE = _ASCII_SPACE | frozenset('\u1680\u2028\u2029\u205f\u3000') | frozenset(
    chr(c) for c in range(0x2000, 0x200b) if c != 0x2007)

# fio options the sweep sets itself in each host's job file
_RESERVED = frozenset(('ioengine', 'filename', 'directory', 'filename_format', 'opendir',
                       'tswap_stats'))


@dataclass(frozen=True)
class Host:
    """One host of the file: addr "HOST,PORT" for fio --client; label its
    name in reports ("HOST", "HOST:PORT" or name=); id "hNN-LABEL" (its
    directory: characters other than A-Z a-z 0-9 _ - as '_'); target and
    engine paths on the host; opts its own fio options (KEY or KEY=VALUE);
    where "FILE:LINE"."""
    addr: str
    label: str
    id: str
    target: str
    engine: str
    opts: tuple[str, ...]
    where: str


def tokens(line: str, utf8: bool = True) -> Optional[list[str]]:
    """The words of a hosts-file line, None for an open quote (once fleet.sh
    hosts_tokens)."""
    space = _UTF8_SPACE if utf8 else _ASCII_SPACE
    words: list[str] = []
    word, inword, quoted, i, n = '', False, False, 0, len(line)
    while i < n:
        c = line[i]
        if quoted:
            if c == '\\' and i + 1 < n:
                i += 1
                word += line[i]
            elif c == '"':
                quoted = False
            else:
                word += c
        elif c == '"':
            quoted = inword = True
        elif c in space:
            if inword:
                words.append(word)
            word, inword = '', False
        elif c == '#' and not inword:
            break
        else:
            word += c
            inword = True
        i += 1
    if quoted:
        return None
    if inword:
        words.append(word)
    return words


def shell_int(digits: str) -> int:
    """bash's $((10#DIGITS)): the decimal digits as a 64-bit signed
    integer, wrapping as bash's arithmetic does."""
    v = int(digits) & (2 ** 64 - 1)
    return v - 2 ** 64 if v >= 2 ** 63 else v


def fio_unsafe(path: str, utf8: bool = True) -> bool:
    """True when fio cannot take path as an option value: it cuts values
    at ';' and '#', strips blanks at both ends, replaces $pagesize,
    $mb_memory and $ncpus, and reads job files line by line (jobs.sh
    fio_unsafe)."""
    space = _UTF8_SPACE if utf8 else _ASCII_SPACE
    return (any(s in path for s in (';', '#', '$pagesize', '$mb_memory', '$ncpus', '\n'))
            or (path != '' and (path[0] in space or path[-1] in space)))


def path_problem(path: str, kind: str, utf8: bool = True) -> Optional[str]:
    """Why fio on a host cannot take path (kind target or engine) in a
    job file, or None when it can (docs/fleet.md)."""
    if not path.startswith('/'):
        return 'not an absolute path (it names a file on the host, where fio --server runs)'
    if fio_unsafe(path, utf8) or '${' in path:
        return ("fio cannot take it in a job file (';', '#', '${', a newline, or blanks at"
                " either end): use a symlink on the host")
    if kind == 'engine' and ':' in path:
        return "fio cannot load an engine whose path has ':': use a symlink on the host"
    return None


_HOST = re.compile(r'(((ip|ip4|ip6):)?[^,=%s]+)(,([0-9]+))?')
_KEY = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
_ID_BAD = re.compile(r'[^A-Za-z0-9_-]')


def _host_re(utf8: bool) -> re.Pattern[str]:
    space = re.escape(''.join(sorted(_UTF8_SPACE if utf8 else _ASCII_SPACE)))
    # in a UTF-8 locale a byte that is not UTF-8 (surrogateescape's
    # U+DC80..U+DCFF) matches no bracket expression of bash's =~
    return re.compile(_HOST.pattern % (space + ('\udc80-\udcff' if utf8 else '')))


def parse(lines: list[str], file: str, target: str, engine: str, utf8: bool = True
          ) -> tuple[Host, ...]:
    """The hosts of the file's lines (file: its path, for FILE:LINE); a
    host without target= or engine= gets --target's and the engine's
    path. Refusal (a usage error, exit 2) on the first line that is not
    a host, a name used twice, no host, or a path fio on a host cannot
    take (once fleet.sh load_hosts)."""
    hosts: list[Host] = []
    seen: set[str] = set()
    host_re = _host_re(utf8)
    for n, line in enumerate(lines, 1):
        where = '%s:%d' % (file, n)
        toks = tokens(line, utf8)
        if toks is None:
            raise usage('%s: unterminated quote' % where)
        if not toks:
            continue
        for tok in toks:
            if undecodable(tok):
                raise usage("%s: '%s' is not UTF-8 text; the run's JSON documents keep the"
                            " hosts' paths and names as UTF-8" % (where, shown(tok)))
        m = host_re.fullmatch(toks[0])
        if not m:
            raise usage("%s: '%s' is not HOST[,PORT] (a host name or address, then optionally a"
                        " comma and the port)" % (where, toks[0]))
        addr, port = m.group(1), m.group(5)
        if port:
            p = shell_int(port)
            if p < 1 or p > 65535:
                raise usage('%s: port %s is out of range' % (where, port))
            port, label = str(p), '%s:%d' % (addr, p)
        else:
            port, label = str(FLEET_PORT), addr
        tgt, eng, opts = '', '', []
        for tok in toks[1:]:
            key = tok.split('=', 1)[0]
            if key in ('target', 'engine', 'name'):
                # bash's [[ $tok == *=?* ]]: a '=' with something after it
                if not re.search('=.', tok, re.S):
                    raise usage('%s: %s needs a value (%s=...)' % (where, key, key))
                val = tok.split('=', 1)[1]
                if key == 'target':
                    tgt = val
                elif key == 'engine':
                    eng = val
                else:
                    label = val
            elif key in _RESERVED:
                raise usage('%s: %s is set by the sweep (use target= and engine= for the host\'s'
                            ' paths)' % (where, key))
            else:
                if not _KEY.fullmatch(key):
                    raise usage("%s: '%s' is neither target=, engine=, name= nor a fio option"
                                " (KEY or KEY=VALUE)" % (where, tok))
                if ';' in tok:
                    raise usage("%s: '%s': fio cuts option values at ';'" % (where, tok))
                opts.append(tok)
        if label in seen:
            raise usage("%s: host name '%s' is used twice (give one of them name=LABEL)"
                        % (where, label))
        seen.add(label)
        hosts.append(Host('%s,%s' % (addr, port), label,
                          'h%02d-%s' % (len(hosts) + 1, _ID_BAD.sub('_', label)),
                          tgt or target, eng or engine, tuple(o for o in opts if o), where))
    if not hosts:
        raise usage('--hosts: %s names no host' % file)
    for h in hosts:
        if not h.target:
            raise usage('%s: no target for %s: give target=PATH there, or --target PATH (a path'
                        ' on the hosts)' % (h.where, h.label))
        for kind, path in (('target', h.target), ('engine', h.engine)):
            why = path_problem(path, kind, utf8)
            if why:
                raise usage('%s: %s %s: %s' % (h.where, kind, path, why))
    return tuple(hosts)


def fleet_config(hosts: tuple[Host, ...], hosts_file: str, outlier_pct: float,
                 connect_timeout: int, host_timeout: int, fio_version: str) -> dict[str, Any]:
    """sweep.json's "fleet": the hosts file, each host (index, id, label,
    address, target, engine, options, where), the outlier limit (%), the
    timeouts (s) and the fio version the hosts must run (once fleet.sh
    fleet_config_json; --resume reads it back)."""
    return {'hosts_file': hosts_file,
            'hosts': [{'index': i, 'id': h.id, 'label': h.label, 'address': h.addr,
                       'target': h.target, 'engine': h.engine, 'options': list(h.opts),
                       'where': h.where} for i, h in enumerate(hosts)],
            'outlier_pct': outlier_pct, 'connect_timeout': connect_timeout,
            'host_timeout': host_timeout, 'fio_version': fio_version}
