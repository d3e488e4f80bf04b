# SPDX-License-Identifier: GPL-2.0-only
"""Fake fios for the process-control units (test_point.py: fioproc.Fio;
test_zero_fio.py: tswap-zero's run_fio): bash scripts that stand in for
fio, the "PID START" record of their processes, and the checks on those
processes by pid and start time (a pid alone may be reused). Every wait
is a bounded poll on what the fake wrote, never the clock."""
import time

import pytest

# Before every fake's body: d, the fake's folder; `record PID...` writes
# "PID START" (START: /proc/PID/stat field 22) of each into d/procs at
# once (through d/procs.tmp: a reader never sees half of it).
PRELUDE = '''d=$(dirname "$0")
record() {
	local p s
	for p; do read -r s </proc/"$p"/stat; s=${s##*) }; set -- $s; echo "$p ${20}"; done >"$d/procs.tmp"
	mv "$d/procs.tmp" "$d/procs"
}
'''

# Forks a child that runs `setsid sleep` ignoring INT, TERM and HUP (as
# fio's job processes call setsid: fio backend.c thread_main), records
# itself and the child, exits FAKE_RC (default 0) with the child running.
SETSID_CHILD = '''(trap '' INT TERM HUP; exec setsid sleep 1000) &
job=$!
# until the child runs sleep: mid-exec its environment reads empty, and
# fio's job processes (forked, never exec'd) have no such window
until IFS= read -r -d '' c </proc/$job/cmdline && [ "$c" = sleep ]; do :; done
record $$ $job
exit ${FAKE_RC:-0}
'''


def fake(where, body):
    """A fake fio where/fio: bash running PRELUDE, then body."""
    p = where / 'fio'
    p.write_text('#!/bin/bash\n' + PRELUDE + body)
    p.chmod(0o755)
    return str(p)


def start_time(pid):
    """pid's start time (stat field 22), None when gone or a zombie."""
    try:
        with open('/proc/%d/stat' % pid, 'rb') as f:
            st = f.read().rsplit(b')', 1)[1].split()
    except OSError:
        return None
    return None if st[0] == b'Z' else st[19]


def wait_for(pred, what, rounds=600):
    """Until pred() holds, polled every 0.05 s; fails after rounds polls."""
    for _ in range(rounds):
        if pred():
            return
        time.sleep(0.05)
    pytest.fail('not within %d polls: %s' % (rounds, what))


def recorded(where):
    """The fake's record: [(pid, start time bytes)], in record's order
    (waited for until it is there)."""
    f = where / 'procs'
    wait_for(f.exists, 'the fake fio recorded its processes')
    return [(int(p), s.encode()) for p, s in (x.split() for x in f.read_text().split('\n') if x)]


def gone(procs):
    """Every (pid, start time) of procs has ended (or is a zombie)."""
    return all(start_time(p) != s for p, s in procs)
