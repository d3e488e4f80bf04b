#!/usr/bin/env bash
# mk/scratch-target.sh PATH - make run's target, under tswap-sweep's rules
# (tswap.executor.targets scratch_create, docs/sweep.md "Targets"): a new
# PATH is created and marked as the sweep's scratch file (so `make sweep`
# on it needs no flag, and `make run` again finds it ours); an existing
# file is used only if it carries the mark. Exit 2, one line, otherwise.
set -euo pipefail
SWEEP_HOME=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../sweep" && pwd)
exec /usr/bin/python3 -I -B -c '
import os, sys
sys.path.insert(0, sys.argv.pop(1))
from tswap.executor.target_facts import SCRATCH_XATTR, scratch_owned
from tswap.executor.targets import scratch_create
from tswap.plan.values import EXIT_USAGE, Refusal

def say(msg):
    sys.stderr.write("tswap-sweep: %s\n" % msg)

try:
    if len(sys.argv) != 2 or not sys.argv[1]:
        raise Refusal(EXIT_USAGE, "usage: mk/scratch-target.sh PATH")
    t = sys.argv[1]
    if os.path.lexists(t):
        if not os.path.isfile(t) or not scratch_owned(t):
            raise Refusal(EXIT_USAGE, "refusing target %s: it exists and is not a scratch file tswap created"
                          " (no %s mark); remove it, or set TSWAP_TARGET to a new path" % (t, SCRATCH_XATTR))
    else:
        scratch_create(t, "", say)
except Refusal as r:
    say(r.message)
    sys.exit(r.code)
' "$SWEEP_HOME" "$@"
