# SPDX-License-Identifier: GPL-2.0-only
"""The command line layer: the stages the shell sweep hands to Python
(`python3 -m tswap STAGE`), one module each, and what they share: reading
the documents, one-line errors.

A stage module defines HELP (one line), setup(parser) (its arguments)
and run(args) -> exit status. STAGES lists them in --help's order.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

from .. import jqjson

STAGES = ('plan', 'result', 'meta', 'load-done', 'finish', 'fleet-progress', 'point-jobs')

PROG = 'tswap'


class StageError(Exception):
    """A stage cannot go on: its one-line message, exit status 3."""


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


def write_json(doc: Any) -> None:
    """doc on stdout, as jq prints it, with a newline."""
    sys.stdout.write(jqjson.dumps(doc) + '\n')
