# SPDX-License-Identifier: GPL-2.0-only
"""The fio job files the fleet sends to its hosts besides the points'
(docs/fleet.md): the target probe (one ioengine=null job per question,
each with an exec_prerun test on the host: fio runs it with system(3)
on the server and skips the job when it fails, so a job that reads its
4 KiB says "yes"), the job that creates and marks a new target there as
this host's scratch files are marked (tswap.executor.targets), the
metadata job that runs lib/meta-collect.sh on the host, a point's
run.sh, and the preflight's header. Text only. The bash they replace:
fleet-target.sh fleet_probe_job, fleet_create_job, fleet_mark_cmd,
fleet_ours_test, fleet_probe_one, fleet_prerun; fleet-meta.sh
fleet_meta_name, fleet_meta_code, fleet_meta_job; exec-fleet.sh
fleet_run_sh."""

from __future__ import annotations

import base64
import re
import subprocess

from .point import bash_q
from .target_rules import SCRATCH_SIDECAR

SCRATCH_XATTR = 'user.tswap.scratch'
# kernel pseudo-filesystems (stat -f -c %T) a host's target must not be on
# (this host's: tswap.executor.target_facts PSEUDO_FS)
PSEUDO_FS_TYPES = ('proc sysfs debugfs tracefs securityfs configfs cgroupfs cgroup2fs devpts bpf_fs pstorefs'
                   ' efivarfs fusectl mqueue')
PROBES = ('ctl', 'exists', 'block', 'file', 'big', 'ours', 'pseudo')
GLOBAL = '[global]\nioengine=null\nfilename=tswap-probe\nsize=4k\nbs=4k\nrw=read\n'


def sh_q(path: str) -> str:
    """path in single quotes for the host's sh."""
    return "'%s'" % path.replace("'", "'\\''")


def prerun(name: str, test: str) -> str:
    """The exec_prerun line of probe job name: fio appends "> JOB.prerun.txt
    2>&1" to the last command, which removes that file and keeps the
    test's status."""
    return ('exec_prerun=(%s) 2>/dev/null && rm -f tswap-probe-%s.prerun.txt || ! rm -f tswap-probe-%s.prerun.txt\n'
            % (test, name, name))


def probe_one(name: str, test: str) -> str:
    """Probe job name: "yes" when test succeeds on the host."""
    return '[tswap-probe-%s]\n%s' % (name, prerun(name, test))


def mark_cmd(q: str) -> str:
    """The host's command that prints the mark of the file q (quoted):
    DEV:INODE:BIRTH, or DEV:INODE without a birth time."""
    return "stat -L -c %%d:%%i:%%.9W -- %s | sed -e 's/:0[.0]*$//'" % q


def ours_test(q: str) -> str:
    """The host's test that the file q (quoted) carries the sweep's mark:
    its xattr, or a sidecar that is a regular file (with a birth time)."""
    side = q + SCRATCH_SIDECAR
    return ('test "$(getfattr --only-values -n %s -- %s)" = "$(%s)" || (test -f %s && test ! -L %s && test'
            ' "$(head -n 1 -- %s)" = "$(stat -L -c %%d:%%i:%%.9W -- %s)")'
            % (SCRATCH_XATTR, q, mark_cmd(q), side, side, side, q))


def probe_job(path: str, size_bytes: int, meta: str = '') -> str:
    """The probe's job file for target path; meta: the metadata job
    (meta_job) appended."""
    q = sh_q(path)
    tests = {
        'ctl': 'true',
        'exists': 'test -e %s' % q,
        'block': 'test -b %s' % q,
        'file': 'test -f %s' % q,
        'big': 'test "$(stat -L -c %%s -- %s)" -ge %d' % (q, size_bytes),
        'ours': ours_test(q),
        'pseudo': ('t=$(stat -L -f -c %%T -- %s || stat -L -f -c %%T -- "$(dirname -- %s)") && test -n "$t" &&'
                   ' echo \' %s \' | grep -qF " $t "' % (q, q, PSEUDO_FS_TYPES)),
    }
    return ('; tswap-sweep: what the target is on this host (exec_prerun tests; no I/O)\n' + GLOBAL
            + ''.join(probe_one(n, tests[n]) for n in PROBES) + meta)


def create_job(path: str, size_bytes: int) -> str:
    """The job that makes the new target path on its host: "new" creates
    it (O_EXCL), sizes it (fio never lays it out again: that would lose
    the mark) and marks it; "fill" (stonewall, create_serialize=0: opened
    after "new") writes it in full if it carries the mark. No ';' or '${'
    in a command: fio's job syntax."""
    q = sh_q(path)
    side = q + SCRATCH_SIDECAR
    new = ('test ! -e %s && (set -C && : >%s) && truncate -s %d -- %s && m=$(%s) && (setfattr -n %s -v "$m" -- %s'
           ' || (echo "$m" | grep -q \':.*:\' && test ! -L %s && set -C && echo "$m" >%s))'
           % (q, q, size_bytes, q, mark_cmd(q), SCRATCH_XATTR, q, side, side))
    return ("; tswap-sweep: create the new target on this host, mark it the sweep's, write it\n" + GLOBAL
            + probe_one('new', new)
            + '[tswap-probe-fill]\nstonewall\ncreate_serialize=0\nioengine=libaio\ndirect=1\nbs=1m\niodepth=16\n'
              'rw=write\nend_fsync=1\nfilename=%s\nsize=%d\n' % (path.replace(':', '\\:'), size_bytes)
            + prerun('fill', ours_test(q)))


def meta_name(pid: int, index: int) -> str:
    """The metadata job's name for host index (unique per run and host:
    two hosts-file lines may name one server)."""
    return 'tswap-meta-%d-h%02d' % (pid, index + 1)


def meta_code(collector: bytes) -> bytes:
    """meta-collect.sh without its comment lines (half its size: fio reads
    a job line up to 8 KiB, OPT_LEN_MAX in fio's parse.h), each line
    ending in a newline, NUL bytes dropped (bash's read)."""
    lines = collector.replace(b'\0', b'').split(b'\n')
    if lines[-1] == b'':
        lines.pop()
    return b''.join(ln + b'\n' for ln in lines if not re.match(rb'^[ \t\n\v\f\r]*#', ln))


def meta_job(path: str, name: str, collector: bytes) -> str:
    """The probe's metadata job: meta-collect.sh, gzip'd (gzip -9 -n) and
    base64'd into one exec_prerun line, run in --fio-job mode; fio saves
    its output as NAME.prerun.txt in the server's directory."""
    gz = subprocess.run(['gzip', '-9', '-n'], input=meta_code(collector), stdout=subprocess.PIPE,
                        check=True).stdout
    code = base64.b64encode(gz).decode('ascii')
    return ('[%s]\nexec_prerun=sh -c "$(echo %s | base64 -d | gunzip)" meta-collect.sh --fio-job %s %s\n'
            % (name, code, name, sh_q(path)))


def run_sh(label: str, grid: str, addr: str) -> str:
    """A point's run.sh: it reruns the point on the host."""
    return ('#!/usr/bin/env bash\n'
            "# Rerun this point on %s through fio's client mode (tswap-sweep %s).\n"
            'set -euo pipefail\ncd "$(dirname "$0")"\n'
            'exec fio --client=%s --output-format=json job.fio\n' % (label, grid, bash_q(addr)))


def preflight_head(label: str) -> str:
    """The preflight job's first lines (its job: the first tswap point's)."""
    return ('; tswap-sweep preflight of %s: parsed only (fio --client --parse-only):\n'
            "; fio's probe answer (hostname, fio version), and the engine loads.\n" % label)
