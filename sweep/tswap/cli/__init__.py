# SPDX-License-Identifier: GPL-2.0-only
"""The command line layer: the stages the shell sweep hands to Python
(`python3 -m tswap STAGE`), one module each, and what they share: reading
the documents, one-line errors.

A stage module defines HELP (one line), setup(parser) (its arguments)
and run(args) -> exit status. STAGES lists them in --help's order.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional

from .. import jqjson

STAGES = ('aggregate', 'plan',
          'best-aio', 'ds-release', 'summary', 'verdict',
          'result', 'bwlog', 'meta', 'plot-data', 'plots', 'load-done', 'finish',
          'fleet-checks', 'fleet-progress', 'point-jobs')

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


def write_json(doc: Any, compact: bool = False) -> None:
    """doc on stdout, as jq prints it (compact: as jq -c), with a newline."""
    sys.stdout.write(jqjson.dumps(doc, compact=compact) + '\n')


def json_value(s: str) -> Any:
    """An argument that is a JSON text (as jq's --argjson takes it)."""
    try:
        return jqjson.loads(s)
    except ValueError:
        raise argparse.ArgumentTypeError('not JSON: %r' % s[:80]) from None


def json_args(p: argparse.ArgumentParser, *names: str) -> None:
    """Required options --NAME JSON, one per name (jq's --argjson NAME)."""
    for n in names:
        p.add_argument('--' + n, type=json_value, required=True, metavar='JSON')
