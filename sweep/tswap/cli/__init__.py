# SPDX-License-Identifier: GPL-2.0-only
"""The command line layer: the tools' front ends (tswap-sweep, tswap-zero,
tswap-check), the run on this host and on a fleet, the finish, and what
they share: reading the documents, one-line errors."""

from __future__ import annotations

import sys
from typing import Any, Optional

from .. import jqjson

PROG = 'tswap'


class StageError(Exception):
    """A step of the run cannot go on: its one-line message, exit status 3."""


def read_json(path: str, what: str) -> Any:
    """The JSON document at path ("-": stdin), as jq reads it; StageError
    naming what and the path when it cannot be read or parsed."""
    try:
        if path == '-':
            data = sys.stdin.read()
        else:
            with open(path, encoding='utf-8') as f:
                data = f.read()
        return jqjson.loads(data)
    except (OSError, ValueError) as e:
        raise StageError('%s %s: %s' % (what, path, e)) from None


def read_json_opt(path: Optional[str], what: str) -> Optional[Any]:
    """As read_json, but a missing or empty file (or no path) is None, as
    jq's --slurpfile of an empty file is no document."""
    if not path:
        return None
    try:
        with open(path, encoding='utf-8') as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise StageError('%s %s: %s' % (what, path, e)) from None
    if not data.strip():
        return None
    try:
        return jqjson.loads(data)
    except ValueError as e:
        raise StageError('%s %s: %s' % (what, path, e)) from None

