# SPDX-License-Identifier: GPL-2.0-only
"""One run of a point: fio's JSON, the engine's tswap_stats and the
bandwidth logs into result.json and its progress line (docs/sweep.md
"Files"; results.sh result_json).

A point of several handles (ranks, readwrite: one fio job each, job name
KEY.rankR[.read|.write]) is summed over its jobs; handles lists each job,
targets the GB/s per target (rank R uses target R mod their number).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Optional

from .. import jqjson
from .steady import steady_fields, steady_window_mean

_RANK = re.compile(r'\.rank([0-9]+)(\.(read|write))?$')
_BLANK = re.compile(r'[ \t\n\v\f\r]*')


@dataclass(frozen=True)
class Run:
    """What the sweep knows of the run: the plan line's fields (tswap.plan.expand:
    point KEY, kind, rw, backend, tensor/block bytes, qd, submit, window,
    threads, iodepth, ranks), its runkey (KEY.rN) and repeat, fio's exit
    status (rc), wall seconds, and the targets (paths, rank order)."""
    runkey: str
    point: str
    repeat: Any
    kind: str
    rw: str
    backend: str
    tensor: Any
    block: Any
    qd: Any
    submit: str
    window: str
    threads: Any
    iodepth: Any
    rc: Any
    wall: Any
    ranks: Any
    targets: list


def _or(x: Any, d: Any) -> Any:
    """jq's x // d: null and false fall through."""
    return d if x is None or x is False else x


def fio_json_text(stdout: str) -> str:
    """fio's JSON within its stdout: all of it when the first line opens an
    object, else from the first line that does (fio printed notes first);
    "" when no line does."""
    lines = stdout.split('\n')
    if lines[0].startswith('{'):
        return stdout
    for i, line in enumerate(lines):
        if line.startswith('{'):
            return '\n'.join(lines[i:])
    return ''


def error_tail(stderr: str, stdout: str) -> str:
    """What fio last said, for an error: ": " and the last two lines of
    stderr that are not blank, else of fio's notes before its JSON on
    stdout ("err=30 ... Read-only file system"), each followed by a space,
    cut to 300 characters; "" when there are none."""
    last = [x for x in _lines(stderr) if not _BLANK.fullmatch(x)]
    if not last:
        for x in _lines(stdout):
            if x.startswith('{'):
                break
            if not _BLANK.fullmatch(x):
                last.append(x)
    if not last:
        return ''
    return ': ' + ''.join(x + ' ' for x in last[-2:])[:300]


def _lines(text: str) -> list[str]:
    """text's lines as a shell reads them (a last line without a newline
    counts)."""
    out = text.split('\n')
    if out and out[-1] == '':
        out.pop()
    return out


def parse_object(text: Optional[str]) -> Optional[dict]:
    """text as a JSON object (jq's fromjson), or None when it is not one."""
    if text is None:
        return None
    try:
        v = jqjson.loads(text)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


def merge_stats(docs: list[Any]) -> dict:
    """One tswap_stats object from those of a multi-handle point's jobs
    (stats.job*.json): counts summed, elapsed_s the longest, handles the
    number merged, tswap_version the first's. ValueError when one is not
    an object (or null)."""
    if any(d is not None and not isinstance(d, dict) for d in docs):
        raise ValueError('not a stats object')
    ds = [d or {} for d in docs]

    def total(k: str) -> Any:
        return jqjson.add([_or(d.get(k), 0) for d in ds])
    return {'tswap_version': ds[0].get('tswap_version') if ds else None, 'handles': len(ds),
            'io_contexts': total('io_contexts'), 'bytes': total('bytes'),
            'submit_calls': total('submit_calls'), 'worker_cpu_usr_s': total('worker_cpu_usr_s'),
            'worker_cpu_sys_s': total('worker_cpu_sys_s'),
            'elapsed_s': jqjson.jmax([_or(d.get('elapsed_s'), 0) for d in ds])}


def _jrw(job: dict, rw: str) -> str:
    """The job's own direction (a readwrite point has read and write jobs)."""
    r = _or((job.get('job options') or {}).get('rw'), rw)
    return r if r in ('read', 'write') else rw


def _sum(xs: list, k: str) -> Any:
    """jq's reduce .[] as $x (0; . + ($x.k // 0))."""
    acc: Any = 0.0
    for x in xs:
        acc = acc + _or((x or {}).get(k), 0)
    return acc


def error_text(fio: Optional[dict], rc: Any, tail: str, joberr: Any, io_bytes: Any) -> str:
    """Why the run is an error, "" when it is not: no fio JSON ("fio gave
    no JSON (exit RC)"), else fio's exit status ("fio exited RC"), each
    followed by fio's last words (tail: error_tail); else a job's error
    ("fio job error N": the largest of the jobs'), else no bytes moved
    ("no I/O was done"). fio: its JSON object, or None; io_bytes: the
    jobs' bytes in their directions."""
    if fio is None:
        return 'fio gave no JSON (exit %s)' % jqjson.text(rc) + tail
    if rc != 0:
        return 'fio exited %s' % jqjson.text(rc) + tail
    if _or(joberr, 0) != 0:
        return 'fio job error %s' % jqjson.text(joberr)
    return '' if io_bytes > 0 else 'no I/O was done'


def handles(jobs: list[dict], rw: str, targets: list) -> list[dict]:
    """Each fio job as a handle: job, rank (from KEY.rankR[.read|.write],
    else 0), rw, gbs (1e9 B/s), bytes, runtime_ms, target."""
    out = []
    for j in jobs:
        jr = _jrw(j, rw)
        name = j.get('jobname')
        m = _RANK.search(name) if isinstance(name, str) else None
        rank = float(m.group(1)) if m else 0
        d = j.get(jr)
        out.append({'job': name, 'rank': rank, 'rw': jr, 'gbs': d.get('bw_bytes') / 1e9,
                    'bytes': d.get('io_bytes'), 'runtime_ms': j.get('job_runtime'),
                    'target': targets[int(rank) % len(targets)]})
    return out


def handle_sums(h: list[dict]) -> dict:
    """slowest_rank_gbs (the least of the ranks' summed GB/s), read_gbs,
    write_gbs (0 without such a handle) and targets (GB/s per target, by
    target path) of a run's handles."""
    def gsum(xs: list) -> Any:
        return jqjson.add([x['gbs'] for x in xs])
    return {'slowest_rank_gbs': jqjson.jmin([gsum(g) for g in jqjson.group_by(h, lambda x: x['rank'])]),
            'read_gbs': _or(gsum([x for x in h if x['rw'] == 'read']), 0),
            'write_gbs': _or(gsum([x for x in h if x['rw'] == 'write']), 0),
            'targets': [{'target': g[0]['target'], 'gbs': gsum(g)}
                        for g in jqjson.group_by(h, lambda x: x['target'])]}


# what jq raised where these are raised: arithmetic on null or a string,
# indexing a number, division by zero
_JQ_ERRORS = (TypeError, AttributeError, KeyError, IndexError, ZeroDivisionError)


def result(run: Run, fio: Optional[dict], stats: Optional[dict], tail: str,
           bwlog: Optional[dict]) -> dict:
    """result.json of one run: the plan's fields, then status "ok" with
    the figures (GB/s is the steady window's when fio ended every job on
    one, else the run's; CPU % adds the engine's workers from tswap_stats
    to fio's job thread), or status "error" with the error text. fio: its
    JSON object with a jobs array, or None; stats: tswap_stats, or None;
    tail: error_tail; bwlog: bwlog.summary.

    Figures that cannot be computed (tswap_stats with bytes but no
    submit_calls; a job without its direction's figures) make the run as
    result.jq under jq 1.6 made it, whose try/catch also caught errors
    raised after it: computed again without tswap_stats, then, failing
    that too, as if fio gave no JSON."""
    try:
        return _result(run, fio, stats, tail, bwlog)
    except _JQ_ERRORS:
        pass
    try:
        return _result(run, fio, None, tail, bwlog)
    except _JQ_ERRORS:
        return _result(run, None, None, tail, bwlog)


def fio_used(doc: dict) -> bool:
    """Whether result doc was made from fio's JSON (then it is kept as
    fio.json)."""
    return not (doc['status'] == 'error' and doc['error'].startswith('fio gave no JSON'))


_PLAN_KEYS = frozenset(('runkey', 'point', 'repeat', 'kind', 'rw', 'backend', 'tensor', 'block', 'qd', 'submit',
                        'window', 'threads', 'iodepth', 'fio_rc', 'wall_s'))


def _result(run: Run, fio: Optional[dict], stats: Optional[dict], tail: str,
            bwlog: Optional[dict]) -> dict:
    doc: dict = {'runkey': run.runkey, 'point': run.point, 'repeat': run.repeat, 'kind': run.kind,
                 'rw': run.rw, 'backend': run.backend, 'tensor': run.tensor, 'block': run.block,
                 'qd': run.qd, 'submit': run.submit, 'window': run.window, 'threads': run.threads,
                 'iodepth': run.iodepth, 'fio_rc': run.rc, 'wall_s': run.wall}
    jobs = fio['jobs'] if fio is not None else []
    d = [j.get(_jrw(j, run.rw)) for j in jobs]
    joberr = jqjson.jmax([j.get('error') for j in jobs]) if fio is not None else None
    err = error_text(fio, run.rc, tail, joberr, _sum(d, 'io_bytes'))
    if err or fio is None:
        doc.update(status='error', error=err)
        return doc
    st = stats or {}
    win = steady_window_mean(jobs)

    def pct(p: str) -> float:
        return jqjson.jmax([_or((((x or {}).get('clat_ns') or {}).get('percentile') or {}).get(p), 0)
                            for x in d]) / 1000

    def wcpu(k: str) -> Any:
        el = _or(st.get('elapsed_s'), 0)
        return 100 * _or(st.get('worker_cpu_%s_s' % k), 0) / el if stats is not None and el > 0 else 0

    def cpu(k: str) -> Any:
        return jqjson.add([j.get(k) for j in jobs]) / len(jobs) + wcpu(k.split('_')[0])
    sb = _or(st.get('bytes'), 0)
    doc.update(status='ok', error='',
               gbs=(win if win is not None else _sum(d, 'bw_bytes')) / 1e9,
               ops_per_s=_sum(d, 'iops'),
               clat_p50_us=pct('50.000000'), clat_p99_us=pct('99.000000'),
               clat_p999_us=pct('99.900000'),
               usr_cpu=cpu('usr_cpu'), sys_cpu=cpu('sys_cpu'),
               submit_calls=_or(st.get('submit_calls'), None),
               stats_bytes=_or(st.get('bytes'), None),
               submit_per_gb=(st.get('submit_calls') / (st['bytes'] / 1e9)
                              if stats is not None and sb > 0 else None),
               tswap_version=_or(st.get('tswap_version'), None),
               fio_version=_or(fio.get('fio version'), None))
    g = doc['gbs']
    if not (isinstance(g, (int, float)) and math.isfinite(g) and g >= 0):
        # a number no device gives (a damaged or foreign fio JSON): no figure
        doc = {k: v for k, v in doc.items() if k in _PLAN_KEYS}
        shown = jqjson.text(g) if isinstance(g, (int, float)) and math.isfinite(g) else str(g)
        doc.update(status='error', error='fio gave an impossible bandwidth: %s GB/s' % shown)
        return doc
    doc.update(steady_fields(jobs))
    doc.update(bw_log=bwlog, drops=bwlog['drops'] if bwlog else None,
               drop_pct=bwlog['drop_pct'] if bwlog else None)
    h = handles(jobs, run.rw, run.targets)
    if run.kind == 'checkpoint':
        h = checkpoint_gbs(doc, h, d)
    doc.update(ranks=run.ranks, handles=h)
    doc.update(handle_sums(h))
    return doc


def checkpoint_gbs(doc: dict, h: list[dict], d: list) -> list[dict]:
    """A checkpoint point (tswap.plan.checkpoint.job_file): its sections
    ran one after the other, so its GB/s is the whole file's: the bytes
    over the sum of the sections' write runtimes (d: the jobs' write
    objects; fio's runtime of a direction includes the end_fsync: backend.c
    do_io, then update_runtime). Its one handle is the file; doc's gbs is
    set to it. Returns the handles."""
    ms = _sum(d, 'runtime')
    b = _sum(d, 'io_bytes')
    if ms <= 0:
        doc.update(status='error', error='fio accounted no time to the checkpoint file'
                   ' (too small to time: give a larger --size)', gbs=None)
        return []
    doc['gbs'] = b / (ms / 1000) / 1e9
    return [{'job': 'checkpoint', 'rank': 0, 'rw': 'write', 'gbs': doc['gbs'], 'bytes': b,
             'runtime_ms': ms, 'target': h[0]['target']}]


def progress_line(doc: dict) -> str:
    """A result's progress line: "GB/s<TAB>op/s  p99 MS ms" (3, 1 and 2
    decimals) or "ERROR: error" (tabs and newlines as spaces)."""
    if doc['status'] == 'ok':
        return '%s GB/s\t%s op/s  p99 %s ms' % (
            jqjson.number(jqjson.jround(doc['gbs'] * 1000) / 1000),
            jqjson.number(jqjson.jround(doc['ops_per_s'] * 10) / 10),
            jqjson.number(jqjson.jround(doc['clat_p99_us'] / 1000 * 100) / 100))
    return re.sub('[\n\t]', ' ', 'ERROR: ' + jqjson.text(doc['error']))


def done_entry(doc: Any) -> Optional[tuple[str, str]]:
    """(RUNKEY or RUNKEY/HOSTID, GB/s to 3 decimals) of a result that says
    ok with a positive, finite GB/s: the run --resume does not redo
    (pipeline.sh load_done); None for any other."""
    if not isinstance(doc, dict) or doc.get('status') != 'ok':
        return None
    # a figure that cannot be a measurement (a damaged or hand-edited
    # file: negative, NaN, not a number) is not done: the run is redone
    g = doc.get('gbs')
    if isinstance(g, bool) or not isinstance(g, (int, float)) or not 0 < g < float('inf'):
        return None
    host = doc.get('host_id')
    key = jqjson.text(doc.get('runkey')) + ('/' + jqjson.text(host) if host not in (None, False) else '')
    return key, jqjson.number(jqjson.jround(g * 1000) / 1000)
