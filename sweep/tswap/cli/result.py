# SPDX-License-Identifier: GPL-2.0-only
"""One run's DIR/result.json and DIR/progress.txt (tswap.results.result),
from the files fio and the engine left in DIR (write_result; the executor
on this host calls it per run):

- fio.stdout: fio's JSON, all of it or from its first line that opens an
  object (fio printed notes first); when that is fio's JSON (an object with
  a jobs array) it becomes fio.json (fio.stdout is renamed when it was all
  JSON; the notes stay in it otherwise). Without fio.stdout, fio.json.
- stats.job*.json (several handles): merged into stats.json first;
  stats.json: tswap_stats.
- fio.stderr: its last two lines that are not blank go into an error.
- bw_bw.*.log: the bandwidth logs (tswap.results.bwlog).

The plan line: the point's (tswap.plan.expand, tab-separated: KEY kind rw
backend tensor block qd submit window threads iodepth [ranks]); the
targets: a list of the targets; the bwlog limits are the run's (state.sh)."""

from __future__ import annotations

import json
import os

from .. import jqjson
from ..executor.base import read_bytes
from ..results.bwlog import read_lines, summary
from ..results.result import (Run, error_tail, fio_json_text, fio_used, merge_stats,
                              parse_object, progress_line, result)
from . import StageError
from .files import shell_glob, write_text


def _json(name: str, text: str) -> object:
    try:
        return jqjson.loads(text)
    except ValueError:
        raise StageError('%s: not JSON: %s' % (name, text)) from None


def _values(text: str) -> list:
    """The JSON values one after another in text (jq -s); ValueError when
    it is not such a stream."""
    dec = json.JSONDecoder(parse_int=float, parse_constant=lambda c: None)
    out, i = [], 0
    while True:
        while i < len(text) and text[i] in ' \t\n\r':
            i += 1
        if i == len(text):
            return out
        v, i = dec.raw_decode(text, i)
        out.append(v)


def merge_rank_stats(d: str) -> None:
    """d/stats.json from the per-job stats files of a multi-handle point
    (stats.job*.json), when there are any and they read."""
    files = shell_glob(os.path.join(d, 'stats.job*.json'))
    if not files:
        return
    try:
        docs = _values(b''.join(read_bytes(f) for f in files).decode('utf-8', 'replace'))
        text = jqjson.dumps(merge_stats(docs)) + '\n'
    except (ValueError, TypeError, AttributeError):
        return
    write_text(os.path.join(d, 'stats.json'), text)


def write_result(d: str, line: str, runkey: str, repeat: str, rc: str, wall: str, targets: object,
                 ms: object, least: object, lim: object) -> None:
    """d/result.json and d/progress.txt (and fio.json) of one run: line
    the plan line; repeat, rc and wall JSON numbers as text (wall:
    seconds, 3 decimals); targets the list of the targets; ms, least,
    lim the bwlog limits. The executor on this host (tswap.cli.run_local)
    calls this in its own process; StageError when a number is not JSON."""
    f = [x for x in line.split('\t') if x]
    f += [''] * (12 - len(f))
    num = {k: _json('--' + k, v) for k, v in (('repeat', repeat), ('rc', rc), ('wall', wall))}
    plan = {k: _json('plan line ' + k, v) for k, v in
            (('tensor', f[4]), ('block', f[5]), ('qd', f[6]), ('threads', f[9]), ('iodepth', f[10]),
             ('ranks', '\t'.join(f[11:]).strip('\t') or '1'))}
    merge_rank_stats(d)
    out = read_bytes(os.path.join(d, 'fio.stdout'))
    fio_path = os.path.join(d, 'fio.json')
    if out:
        ftext = fio_json_text(out.decode('utf-8', 'replace'))
        fbytes = out if out.startswith(b'{') else fio_json_text(out.decode('latin-1')).encode('latin-1')
    else:
        ftext = read_bytes(fio_path).decode('utf-8', 'replace')
        fbytes = None
    fio = parse_object(ftext)
    if fio is not None and not isinstance(fio.get('jobs'), list):
        fio = None
    stats = parse_object(read_bytes(os.path.join(d, 'stats.json')).decode('utf-8', 'replace'))
    tail = error_tail(read_bytes(os.path.join(d, 'fio.stderr')).decode('utf-8', 'replace'),
                      out.decode('utf-8', 'replace'))
    logs = read_lines(shell_glob(os.path.join(d, 'bw_bw.*.log')))
    bw = summary([x for x, _ in logs], ms, least, lim)
    run_ = Run(runkey=runkey, point=f[0], repeat=num['repeat'], kind=f[1], rw=f[2], backend=f[3],
               tensor=plan['tensor'], block=plan['block'], qd=plan['qd'], submit=f[7], window=f[8],
               threads=plan['threads'], iodepth=plan['iodepth'], rc=num['rc'], wall=num['wall'],
               ranks=plan['ranks'], targets=targets)
    doc = result(run_, fio, stats, tail, bw)
    res = os.path.join(d, 'result.json')
    with open(res + '.tmp', 'w', encoding='utf-8') as w:
        w.write(jqjson.dumps(doc) + '\n')
    write_text(os.path.join(d, 'progress.txt'), progress_line(doc) + '\n')
    if fio_used(doc) and fbytes is not None:
        if fbytes is out:
            os.replace(os.path.join(d, 'fio.stdout'), fio_path)
        else:
            with open(fio_path, 'wb') as w:
                w.write(fbytes)
    os.replace(res + '.tmp', res)
