# SPDX-License-Identifier: GPL-2.0-only
"""python3 -m tswap STAGE ...: a stage of the sweep (tswap.cli lists them;
`python3 -m tswap STAGE --help` says what each takes).

Exit status: the stage's; 2 on a usage error; 3 when a document cannot be
read or is not the JSON it should be, or a file cannot be written (one
line on stderr names it). SIGINT and SIGPIPE end it as they end any tool
(their default actions: no traceback), so that a Ctrl-C to the sweep's
process group or a closed pipe reads as the signal.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from typing import Optional

from .cli import PROG, STAGES, StageError


def main(argv: Optional[list[str]] = None) -> int:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    args = sys.argv[1:] if argv is None else argv
    # only the named stage's module is imported (every one for --help)
    names = [args[0]] if args and args[0] in STAGES else list(STAGES)
    ap = argparse.ArgumentParser(prog='python3 -m tswap')
    sub = ap.add_subparsers(dest='stage', required=True)
    for name in names:
        mod = importlib.import_module('.cli.' + name.replace('-', '_'), __package__)
        p = sub.add_parser(name, help=mod.HELP, description=mod.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.setup(p)
        p.set_defaults(run=mod.run)
    a = ap.parse_args(args)
    try:
        return a.run(a)
    except StageError as e:
        print('%s: %s' % (PROG, e), file=sys.stderr)
        return 3
    except OSError as e:
        # a write the stage makes (ENOSPC, EROFS, EACCES): one line
        print('%s: %s: %s' % (PROG, a.stage, e), file=sys.stderr)
        return 3

if __name__ == '__main__':
    sys.exit(main())
