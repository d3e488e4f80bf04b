# SPDX-License-Identifier: GPL-2.0-only
"""The fleet's pure rules (docs/fleet.md): fio's client output split into
the servers' messages and the JSON, why a host gave no result, a host's
tags on its result.json, the preflight's verdict, and the judgement of a
host's target from the probe's answers. No process, no file: the
executor (tswap.executor.fleet) reads and writes. The bash they replace:
exec-fleet.sh fleet_split, first_match, fleet_classify, fleet_tag_result,
fleet_preflight; fleet-target.sh fleet_probe_targets,
fleet_create_targets; fleet.sh fleet_check_targets; target.sh
file_rules; fleet-meta.sh fleet_meta_read."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from .. import jqjson

# fleet_classify's patterns (grep -i BRE alternatives), in its order
TIMEOUT = 'timeout on cmd|timed out'
UNREACHABLE = 'connection refused|failed to connect|no route to host|network is unreachable|failed to resolve'
MISMATCH = 'version mismatch'
NO_ENGINE = 'invalid external ioengine path|not loadable|failed to load engine'
BUILT_FOR = 'was built for .* but is loaded by'
LOST_LINK = 'disconnected|connection reset|broken pipe'
JOB_FAILED = 'tswap:|fio:|error'
REJECTED = 'bad option|failed parsing|dropped'
META_WHY = 'error|fail|no such|refused|timeout'


def split_lines(data: bytes) -> list[bytes]:
    """data's lines as sed reads them (at each newline, kept; a last one
    may have none)."""
    parts = data.split(b'\n')
    out = [p + b'\n' for p in parts[:-1]]
    return out + [parts[-1]] if parts[-1] else out


def split_client_out(data: bytes) -> tuple[bytes, Optional[bytes]]:
    """fio --client's output as fleet_split cuts it: the lines before the
    first one starting with '{' ("<hostname> " removed: fio.text), and
    from that line on (fio.client.json), None when no line starts with
    '{' (sed -n '/^{/q; s/^<[^>]*> //; p', sed -n '/^{/,$p')."""
    lines = split_lines(data)
    text: list[bytes] = []
    for i, ln in enumerate(lines):
        if ln.startswith(b'{'):
            return b''.join(text), b''.join(lines[i:])
        text.append(re.sub(rb'^<[^>\n]*> ', b'', ln))
    return b''.join(text), None


def single_shape(json_text: str) -> Optional[str]:
    """fio's client JSON in the single-host shape result_json reads
    ({"fio version", timestamp, time, jobs: client_stats but "All
    clients"}), as jq prints it with its newline; None when it does not
    parse or has no client_stats array (fleet_split's jq)."""
    try:
        doc = jqjson.loads(json_text)
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get('client_stats'), list):
        return None
    jobs = []
    for j in doc['client_stats']:
        if j is not None and not isinstance(j, dict):
            return None
        if (j or {}).get('jobname') != 'All clients':
            jobs.append(j)
    return jqjson.dumps({'fio version': doc.get('fio version'), 'timestamp': doc.get('timestamp'),
                         'time': doc.get('time'), 'jobs': jobs}) + '\n'


def first_match(pattern: str, text: str) -> str:
    """The first line of text that matches pattern, ignoring case (grep -i
    -m 1), or ""."""
    rx = re.compile(pattern, re.I)
    for ln in text.split('\n'):
        if rx.search(ln):
            return ln
    return ''


def messages(text: str) -> str:
    """fio.text and fio.stderr as fleet_classify reads them: CRs dropped,
    blank lines dropped, no last newline."""
    lines = [ln for ln in text.replace('\r', '').split('\n') if ln.strip(' \t\n\v\f\r')]
    return '\n'.join(lines)


def classify(text: str, rc: int, limit: str, addr: str, engine: str) -> str:
    """Why a host gave no result, from its fio client's exit status rc and
    its messages (messages()): "lost REASON" when the host itself is the
    problem (it is then left out of the rest of the run), else "job
    REASON", REASON empty when the messages say no more (fleet_classify).
    limit: the time limit (s) said; addr: HOST,PORT; engine: the host's."""
    line = first_match(TIMEOUT, text)
    if rc in (124, 137) or line:
        line = '(%s)' % line if line else 'within %s s (timeout)' % limit
        return ('lost no answer %s: the host is down, a firewall drops port %s, or fio --server hangs; a job it'
                ' started may still be running there' % (line, addr.rsplit(',', 1)[-1]))
    line = first_match(UNREACHABLE, text)
    if line:
        return 'lost unreachable: %s (is fio --server running on %s, and the port open?)' % (line, addr)
    line = first_match(MISMATCH, text)
    if line:
        return "lost fio version differs from this machine's: %s" % line
    line = first_match(NO_ENGINE, text)
    if line:
        return ('lost engine missing or not loadable on the host: %s (%s); install it there (make install) or'
                ' give engine= in the hosts file' % (engine, line))
    line = first_match(BUILT_FOR, text)
    if line:
        if line.startswith('tswap: '):
            line = line[len('tswap: '):]
        return "lost fio version differs from the engine's: %s" % line.split(': ', 1)[-1]
    line = first_match(LOST_LINK, text)
    if line:
        return 'lost connection lost mid-run (fio --server or the host died): %s' % line
    return 'job %s' % first_match(JOB_FAILED, text)


def reason_of(why: str) -> str:
    """classify's REASON (bash's ${why#* }: up to the first blank dropped)."""
    return why.split(' ', 1)[1] if ' ' in why else why


@dataclass(frozen=True)
class Tag:
    """What fleet_tag_result adds to a host's result.json."""
    index: int
    label: str
    id: str
    addr: str
    target: str


def tag_result(doc: dict[str, Any], t: Tag, reason: str = '') -> dict[str, Any]:
    """doc with the host's fields, and reason (its first 600 characters)
    as its error and status "error" when given (fleet_tag_result)."""
    out = dict(doc)
    out.update(host_index=t.index, host=t.label, host_id=t.id, address=t.addr, target=t.target)
    if reason:
        out['error'] = reason[:600]
        out['status'] = 'error'
    return out


def probe_answer(line: str) -> tuple[str, str]:
    """The hostname and fio version of fio's probe answer line
    ("hostname=NAME, ... fio=VER, ...": sed's captures), "" for either
    that is not there."""
    m = re.match(r'^hostname=([^,]*),', line)
    v = re.match(r'.*, fio=([^,]*),', line)
    return (m.group(1) if m else ''), (v.group(1) if v else '')


def preflight_reason(line: str, ver: str, want: str, why: str, text: str, rc: int, name: str,
                     addr: str, hid: str) -> str:
    """Why a host fails the preflight, "" when it passes (fleet_preflight):
    line the probe answer ("" none), ver its fio version, want the run's,
    why classify's verdict, text fio.text, rc the client's status."""
    if not line:
        return reason_of(why) or 'no probe answer from fio --client=%s (exit %d)' % (addr, rc)
    if ver != want:
        return ('fio version differs: the host runs %s, this run wants %s (this machine\'s fio, or'
                ' --fio-version); the engine is built for one fio version, and hosts are compared on one'
                % (ver, want or 'unknown'))
    bad = first_match(REJECTED, text)
    if why.startswith('lost '):
        return why[len('lost '):]
    if bad:
        return "the host's fio rejects the job: %s (preflight/%s/job.fio)" % (bad, hid)
    if rc != 0:
        return 'the host answered (hostname %s, %s) but fio --client exited %d parsing the job' % (name, ver, rc)
    return ''


def preflight_doc(i: int, label: str, addr: str, name: str, ver: str, reason: str, rc: int) -> str:
    """preflight/ID/result.json's text (fleet_preflight's jq -n)."""
    return jqjson.dumps({'host_index': i, 'host': label, 'address': addr, 'ok': not reason, 'reason': reason,
                         'fio_rc': rc, 'hostname': name or None, 'fio_version': ver or None}) + '\n'


def probe_yes(json_text: str) -> dict[str, str]:
    """The probe's answers: question -> "1" (its job read its 4 KiB: the
    test passed on the host) or "0", from fio's client JSON; {} when there
    is none (fleet_probe_targets' jq)."""
    try:
        doc = jqjson.loads(json_text)
        stats = doc['client_stats']
    except (ValueError, TypeError, KeyError):
        return {}
    yes: dict[str, str] = {}
    if not isinstance(stats, list):
        return yes
    for j in stats:
        name = j.get('jobname') if isinstance(j, dict) else None
        if not isinstance(name, str) or not name.startswith('tswap-probe-'):
            continue
        n = jqjson.get(j, 'read', 'io_bytes')
        yes[name[len('tswap-probe-'):]] = '1' if isinstance(n, float) and n > 0 else '0'
    return yes


@dataclass(frozen=True)
class Verdict:
    """The judgement of a host's target: refuse (a usage error's line),
    else the warnings (once: warn_once) and whether it is new (to be
    created once every host passed)."""
    refuse: str = ''
    warn: str = ''
    warn_once: str = ''
    new: bool = False


def file_rules(what: str, name: str, writes: bool, big: bool, destructive: bool, size: str,
               have: str = '') -> Verdict:
    """An existing regular file the sweep did not create on a fleet host
    (target.sh file_rules): written only with --destructive; a read-only
    sweep reads one at least --size long."""
    if destructive:
        if writes or not big:
            return Verdict(warn_once='overwriting %s, a file the sweep did not create, because of --destructive'
                           % name)
        return Verdict()
    if writes:
        return Verdict(refuse='refusing %s: an existing file the sweep did not create, and the sweep writes to'
                       ' it (its data would be destroyed); pass --destructive, a new path, or --rw read' % what)
    if not big:
        return Verdict(refuse='refusing %s: an existing file the sweep did not create, shorter%s than --size %s:'
                       ' fio would write it out to full size; pass --destructive, a new path, or a smaller --size'
                       % (what, have, size))
    return Verdict()


def judge(yes: dict[str, str], where: str, hid: str, writes: bool, destructive: bool, force: bool,
          size: str) -> Verdict:
    """A host's target from the probe's answers (fleet_probe_targets, docs/
    fleet.md "Safety"); where: "target PATH on HOST"."""
    if yes.get('ctl', '0') != '1':
        return Verdict(refuse="refusing %s: the check of what it is cannot run there (fio's exec_prerun fails on"
                       ' the host; preflight/%s/target/)' % (where, hid))
    if yes.get('pseudo', '0') != '0':
        return Verdict(refuse='refusing %s: it is on a kernel pseudo-filesystem there, not storage' % where)
    if yes.get('block', '0') == '1':
        if not writes:
            return Verdict()
        if not (destructive and force):
            return Verdict(refuse='refusing %s: it is a block device on the host, and the sweep writes to it'
                           ' (destroying its data); the sweep cannot check it there for mounts or signatures,'
                           ' so pass --destructive --force, or --rw read' % where)
        return Verdict(warn='writing to %s (a block device) because of --destructive --force' % where)
    if yes.get('exists', '0') == '0':
        return Verdict(new=True)
    if yes.get('file', '0') == '0':
        return Verdict(refuse='refusing %s: not a regular file or a block device there' % where)
    if yes.get('ours', '0') == '0':
        return file_rules(where, where, writes, yes.get('big', '0') == '1', destructive, size)
    return Verdict()


def device_check(target: str, label: str, writes: bool, destructive: bool, force: bool) -> Verdict:
    """fleet.sh fleet_check_targets for one host: a target under /dev/ is
    taken for a block device, written only with --destructive --force."""
    if not writes or not target.startswith('/dev/'):
        return Verdict()
    if not (destructive and force):
        return Verdict(refuse='refusing target %s on %s: a device on a host, and the sweep writes to it (destroying'
                       ' its data); the sweep cannot check it there for mounts or signatures, so pass'
                       ' --destructive --force, or --rw read' % (target, label))
    return Verdict(warn='writing to %s on %s because of --destructive --force' % (target, label))


def created(json_text: str, size_bytes: int) -> str:
    """The create job's answer as fleet_create_targets' jq gives it: "N M"
    (N new jobs that ran, M fill jobs that wrote size_bytes), "" without
    client JSON."""
    try:
        stats = jqjson.loads(json_text)['client_stats']
        new = sum(1 for j in stats if j.get('jobname') == 'tswap-probe-new'
                  and _gt(jqjson.get(j, 'read', 'io_bytes'), 0))
        fill = sum(1 for j in stats if j.get('jobname') == 'tswap-probe-fill'
                   and _ge(jqjson.get(j, 'write', 'io_bytes'), size_bytes))
    except (ValueError, TypeError, KeyError, AttributeError):
        return ''
    return '%d %d' % (new, fill)


def _gt(v: Any, n: float) -> bool:
    return isinstance(v, float) and v > n


def _ge(v: Any, n: float) -> bool:
    return isinstance(v, float) and v >= n


def create_warning(ans: str, target: str, label: str, hid: str) -> str:
    """fleet_create_targets' warning for its answer, "" when the target was
    created, marked and written in full."""
    if ans == '1 1':
        return ''
    if ans.startswith('1 '):
        return ('target %s on %s: created and marked, but not written in full (preflight/%s/target/create/):'
                ' reads of its holes never reach the device' % (target, label, hid))
    return ("target %s on %s: not created and marked as the sweep's (no xattr, no birth time, or no directory;"
            ' preflight/%s/target/create/): fio creates it, unmarked: a later run on it needs --destructive'
            % (target, label, hid))


def meta_desc(json_text: str, name: str) -> Optional[str]:
    """The metadata jobs' descriptions joined in job-name order (the
    collector's base64 output), None when there is none
    (fleet_meta_read's jq)."""
    try:
        doc = jqjson.loads(json_text)
    except ValueError:
        return None
    stats = doc.get('client_stats') if isinstance(doc, dict) else None
    if not isinstance(stats, (list, dict)):
        stats = []
    jobs = []
    for j in (stats if isinstance(stats, list) else list(stats.values())):
        n = j.get('jobname') if isinstance(j, dict) else None
        if not isinstance(n, str):
            return None
        if n.startswith(name + '-'):
            jobs.append(j)
    if not jobs:
        return None
    descs = [j.get('desc') or '' for j in sorted(jobs, key=lambda j: j['jobname'])]
    if not all(isinstance(d, str) for d in descs):
        return None
    return ''.join(descs)


def meta_why(lines: list[str]) -> str:
    """Why the metadata answer failed: the first non-blank line (each
    "FILE:line", grep's prefix) that says error, fail, no such, refused or
    timeout, its first 200 characters; "" when none does."""
    rx = re.compile(META_WHY, re.I)
    for ln in lines:
        if rx.search(ln):
            return ln[:200]
    return ''
