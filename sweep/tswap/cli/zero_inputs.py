# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero's inputs: the counts, paths and files its options name (the
ds_config, --aio, --param-numels, --target), each checked with a
one-line usage error naming the option and the rule."""

from __future__ import annotations

import json
import math
import os
import re
import stat
from types import MappingProxyType
from typing import Any, Optional

from .. import jqjson
from .zero_common import usage_error

# At most this many model tensors (--params / --param-numel, or
# --param-numels) in a plan: the plan's time grows with them.
MAX_TENSORS = 50000
_COUNT = re.compile(r'[0-9]+(\.[0-9]+)?([eE][+]?[0-9]+)?')


def parse_count(opt: str, val: str, lo: int, hi: Optional[int] = None) -> int:
    """An element count written as an integer or in e notation (13e9,
    1.3e9); usage error unless a whole number in [lo, hi] (hi default
    below 9e15)."""
    if not _COUNT.fullmatch(val):
        raise usage_error('%s=%s: not a number (an element count, e.g. 13e9)' % (opt, val))
    if re.fullmatch(r'[0-9]{1,15}', val):
        n = int(val)
    else:
        x = float(val)
        if not (x == x // 1 and x < 9e15):
            raise usage_error('%s=%s: must be a whole number below 9e15' % (opt, val))
        n = int(x)
    if n < lo:
        raise usage_error('%s=%s: must be at least %d' % (opt, val, lo))
    if hi is not None and n > hi:
        raise usage_error('%s=%s: must be at most %d' % (opt, val, hi))
    return n


def check_path(opt: str, p: str) -> None:
    """Refuse a path fio's job-file parser would change or split: '${'
    (fio expands environment variables), ':' (its file name separator),
    control characters (a newline ends the line)."""
    if '${' in p:
        raise usage_error("%s %s: '${' cannot be used (fio expands ${VAR} in job files)" % (opt, p))
    if ':' in p:
        raise usage_error("%s %s: ':' cannot be used (fio's file name separator)" % (opt, p))
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in p):
        raise usage_error('%s: a control character (newline, tab, ...) in a path cannot be used' % opt)


# The most bytes an input file may have: a ds_config is a few KiB, a
# --param-numels list of MAX_TENSORS entries well below 1 MiB.
MAX_INPUT_BYTES = 16 * 1024 * 1024
_KIND = ((stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO'), (stat.S_ISCHR, 'a character device'),
         (stat.S_ISBLK, 'a block device'), (stat.S_ISSOCK, 'a socket'))


def read_text(opt: str, path: str, what: str) -> str:
    """The UTF-8 text of the regular file path that option opt names (what
    it should hold, for the messages); usage error, one line, otherwise:
    missing or unreadable, not a regular file (a directory, FIFO or device
    is never read: a FIFO would block, /dev/zero never ends), over
    MAX_INPUT_BYTES, a UTF-8 byte-order mark, not UTF-8."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as e:
        raise usage_error('%s %s: cannot open it (%s; %s)' % (opt, path, os.strerror(e.errno or 0), what)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = next((k for f, k in _KIND if f(st.st_mode)), 'not a regular file')
            raise usage_error('%s %s: %s, not a regular file (%s)' % (opt, path, kind, what))
        chunks, n = [], 0
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            n += len(b)
            if n > MAX_INPUT_BYTES:
                raise usage_error('%s %s: larger than %d bytes (%s)' % (opt, path, MAX_INPUT_BYTES, what))
            chunks.append(b)
    except OSError as e:
        raise usage_error('%s %s: cannot read it (%s; %s)' % (opt, path, os.strerror(e.errno or 0), what)) from None
    finally:
        os.close(fd)
    raw = b''.join(chunks)
    if raw.startswith(b'\xef\xbb\xbf'):
        raise usage_error('%s %s: starts with a UTF-8 byte-order mark, which Python\'s json refuses: '
                          'save it without one' % (opt, path))
    try:
        return raw.decode('utf-8')
    except UnicodeDecodeError as e:
        raise usage_error('%s %s: not UTF-8 text (byte %d; %s)' % (opt, path, e.start, what)) from None


def parse_json(opt: str, path: str, text: str, what: str, **kw: Any) -> Any:
    """json.loads(text, **kw); a usage error for JSON nested deeper than
    Python's reader recurses (RecursionError), ValueError otherwise."""
    try:
        return json.loads(text, **kw)
    except RecursionError:
        raise usage_error('%s %s: nested too deeply to read (%s)' % (opt, path, what)) from None


# NaN stays NaN (not null, which a ds_config key takes as unset: its default)
_CONST = MappingProxyType({'Infinity': math.inf, '-Infinity': -math.inf, 'NaN': math.nan})


class _Pairs(list):
    """A JSON object's (key, value) pairs as parsed, duplicates kept."""


def _plain(v: Any) -> Any:
    """The parsed tree as plain JSON values (a key given twice: the last)."""
    if isinstance(v, _Pairs):
        return {k: _plain(x) for k, x in v}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def _dups(v: Any, path: tuple) -> Any:
    """The keys given twice in one object (what DeepSpeed's
    object_pairs_hook dict_raise_error_on_duplicate_keys refuses), each as
    its path joined with '.': {"aio": {...}, "aio": {...}} is one, "x.y"
    beside {"x": {"y": ...}} none."""
    if isinstance(v, _Pairs):
        seen: set[str] = set()
        for k, x in v:
            if k in seen:
                yield '.'.join(path + (k,))
            seen.add(k)
            yield from _dups(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from _dups(x, path + (str(i),))


def read_config(path: str) -> Any:
    """The ds_config as one JSON object; usage error (one line naming the
    file and the rule) otherwise: an empty file, hjson that DeepSpeed reads
    and JSON does not (comments, trailing commas: runtime/config.py
    DeepSpeedConfig reads the file with hjson.load), several values; a key
    given twice, which DeepSpeed refuses (runtime/config.py
    dict_raise_error_on_duplicate_keys)."""
    what = 'a DeepSpeed ds_config, JSON'
    if not os.path.lexists(path):
        raise usage_error('--ds-config %s: no such readable file' % path)
    raw = read_text('--ds-config', path, what)
    try:
        # numbers as doubles; Infinity and 3e400 as infinity, NaN as NaN (refused where the plan reads it)
        tree = parse_json('--ds-config', path, raw, what, parse_int=float, parse_constant=_CONST.get,
                          object_pairs_hook=_Pairs)
        doc = _plain(tree)
        dups = set(_dups(tree, ()))
    except RecursionError:
        raise usage_error('--ds-config %s: nested too deeply to read (%s)' % (path, what)) from None
    except ValueError:
        if not raw.strip():
            raise usage_error('--ds-config %s: not a JSON object (the file is empty)' % path) from None
        if re.search(r'(?m)^[ \t]*(#|//)|/\*', raw) or re.search(r',\s*[\]}]', raw):
            raise usage_error('--ds-config %s: not a JSON object: comments or trailing commas (hjson, which '
                              'DeepSpeed also reads); tswap-zero reads JSON only: remove them' % path) from None
        raise usage_error('--ds-config %s: not a JSON object (a DeepSpeed ds_config)' % path) from None
    if not isinstance(doc, dict):
        raise usage_error('--ds-config %s: not a JSON object (a DeepSpeed ds_config)' % path)
    if dups:
        raise usage_error('--ds-config %s: key %s given twice (DeepSpeed refuses duplicate keys: runtime/config.py '
                          'dict_raise_error_on_duplicate_keys)' % (path, min(dups)))
    return doc


def _Pairs_check(opt: str, path: str, tree: Any) -> Any:
    """A parsed tree (object_pairs_hook=_Pairs) as plain JSON values; a
    usage error for a key given twice (DeepSpeed refuses it in the
    ds_config the block goes into: runtime/config.py
    dict_raise_error_on_duplicate_keys)."""
    try:
        dups = set(_dups(tree, ()))
        doc = _plain(tree)
    except RecursionError:
        raise usage_error('%s %s: nested too deeply to read' % (opt, path)) from None
    if dups:
        raise usage_error('%s %s: key %s given twice (DeepSpeed refuses duplicate keys: runtime/config.py '
                          'dict_raise_error_on_duplicate_keys)' % (opt, path, min(dups)))
    return doc


def same_folder_key(t: str) -> str:
    """A key equal for two paths of one folder: its device and inode when
    it exists, else the normalised path."""
    try:
        st = os.stat(t)
        return '%d:%d' % (st.st_dev, st.st_ino)
    except OSError:
        return os.path.normpath(t)


def read_aio(path: str) -> Any:
    """--aio's file: a JSON object with a non-empty "aio" object (the
    sweep's best-aio.json); usage error otherwise."""
    what = 'a JSON file with an "aio" object, best-aio.json'
    try:
        doc = _Pairs_check('--aio', path, parse_json('--aio', path, read_text('--aio', path, what), what,
                                                     parse_int=float, parse_constant=lambda c: None,
                                                     object_pairs_hook=_Pairs))
    except ValueError:
        raise usage_error('--aio %s: not a JSON file with an "aio" object (best-aio.json)' % path) from None
    blk = doc.get('aio') if isinstance(doc, dict) else None
    if not isinstance(blk, dict):
        raise usage_error('--aio %s: no "aio" object in it (best-aio.json has one when the sweep picked settings; '
                          'nothing to replay)' % path)
    if not blk:
        raise usage_error('--aio %s: its "aio" object is empty (nothing to replay)' % path)
    return doc


def read_numels(path: str) -> tuple[float, ...]:
    """--param-numels FILE: a JSON list of whole numbers >= 1 (each below
    9e15, at most MAX_TENSORS of them, their sum below 9e15); usage error
    naming the file and the rule otherwise."""
    what = 'a JSON list such as [4194304, 2048]'
    try:
        doc = parse_json('--param-numels', path, read_text('--param-numels', path, what), what, parse_int=float,
                         parse_constant=float)
    except ValueError:
        raise usage_error('--param-numels %s: not a readable JSON file (a list such as [4194304, 2048])' % path) from None
    if not isinstance(doc, list) or not doc:
        raise usage_error('--param-numels %s: not a non-empty JSON list of element counts '
                          '([p.numel() for p in model.parameters()])' % path)
    if len(doc) > MAX_TENSORS:
        raise usage_error('--param-numels %s: %d tensors, at most %d' % (path, len(doc), MAX_TENSORS))
    for i, v in enumerate(doc):
        if isinstance(v, bool) or not isinstance(v, float) or not (1 <= v < 9e15) or v != math.floor(v):
            shown = (('NaN' if v != v else 'Infinity' if v > 0 else '-Infinity')
                     if isinstance(v, float) and not math.isfinite(v) else jqjson.dumps(v, compact=True))
            raise usage_error('--param-numels %s: entry %d = %s: not a whole number from 1 to below 9e15'
                              % (path, i, shown))
    if sum(doc) >= 9e15:
        raise usage_error('--param-numels %s: %s elements in all, at most below 9e15' % (path, jqjson.number(sum(doc))))
    return tuple(doc)


def split_targets(targets: str) -> list[str]:
    """--target's list, split at ',' as bash's read -a does (one trailing
    comma ends the last entry)."""
    t = targets.split(',')
    return t[:-1] if len(t) > 1 and t[-1] == '' else t
