# SPDX-License-Identifier: GPL-2.0-only
"""The executor that runs each point on the hosts of --hosts at once, one
`fio --client=HOST,PORT` per host (tswap.executor.fleet_clients), after
a preflight: each host parses a job (its fio version, the engine), its
target is judged there and its metadata read
(tswap.executor.fleet_probe). A host that fails is left out of the rest
of the run, and its results say why (docs/fleet.md). It answers the
hooks of tswap.executor.loop.Executor. The bash it replaces:
exec-fleet.sh, pipeline.sh's fleet parts.

Writes RUN/preflight/ID/ and RUN/points/RUNKEY/ID/ (job.fio, run.sh,
fio.client.out, fio.text, fio.client.json, fio.json, fio.stderr,
result.json, progress.txt), each point's through .tmp-ID.PID and a
rename."""

from __future__ import annotations

import glob
import os
import signal
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

from .. import jqjson
from ..plan.checkpoint import CheckpointError, job_file
from ..plan.jobs import Host, JobError, JobSettings, point_job
from . import fioproc
from . import fleet_jobs as jobs
from . import fleet_rules as rules
from .fleet_clients import Clients
from .point import write_exec
from .base import (PROG, Exit, Interrupted, Messages, _remove, _write, ignore_signals, read_bytes,
                   wall_text)


@dataclass(frozen=True)
class FleetHost:
    """A host of the hosts file: its index, directory name (hNN-LABEL),
    name in reports, fio --client address, target and engine paths there,
    its own fio options (one a line)."""
    index: int
    id: str
    label: str
    addr: str
    target: str
    engine: str
    opts: str

    def job_host(self) -> Host:
        return Host(self.label, self.addr, self.engine, self.target, self.opts)

    def tag(self) -> rules.Tag:
        return rules.Tag(self.index, self.label, self.id, self.addr, self.target)


@dataclass(frozen=True)
class FleetSettings:
    """What a fleet run takes from the front end's state (state.sh names):
    the run directory, the grid, the job settings, the hosts and the
    fleet options (timeouts in whole seconds, as text); first: the plan
    line of the first tswap point (the preflight's job); collector:
    lib/meta-collect.sh's path; tswap: the sweep's version."""
    run: str
    grid: str
    hosts_file: str
    hosts: tuple[FleetHost, ...]
    jobs: JobSettings
    size: str
    repeat: int
    targets: tuple[str, ...]
    writes: bool
    destructive: bool
    force: bool
    connect_timeout: str
    host_timeout: str
    fio_want: str
    outlier_pct: str
    junit_out: str
    first: str
    collector: str
    tswap: str


@dataclass(frozen=True)
class FleetHooks:
    """What the fleet asks of the layers after it (tswap.cli):
    result(dir, line, runkey, repeat, rc, wall, targets) writes a run's
    result.json and progress.txt; progress(results) a point's hosts'
    progress text; meta(target, engine, tswap, kv) the metadata object
    from the collector's lines (None: not its output)."""
    result: Callable[[str, str, str, str, str, str, list], None]
    progress: Callable[[list], str]
    meta: Callable[[str, str, str, str], Optional[dict]]


def text_of(data: bytes) -> str:
    return data.decode('utf-8', 'surrogateescape')


def write(path: str, text: str) -> None:
    with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f:
        f.write(text)


def job_dir(d: str, name: str) -> str:
    """d made anew and empty (whatever was there removed) for a job file
    name: that file's path, for the caller to write (the preflight's and
    the probe's directories, a point's .tmp-ID.PID)."""
    _remove(d)
    os.makedirs(d)
    return d + '/' + name


def job_or_exit(line: str, s: JobSettings, h: FleetHost) -> tuple[str, Optional[tuple[int, str]]]:
    """The point's job for host h, and its error ((status, line) when the
    point has none: jobs.sh point_job printed the text up to it, then the
    line, and exited with the status)."""
    if line.split('\t', 2)[1:2] == ['checkpoint']:
        try:
            return job_file(line, s.size_bytes), None
        except (CheckpointError, IndexError, ValueError) as e:
            return '', (3, 'tswap: checkpoint-job: %s' % e)
    try:
        return point_job(line, s, h.job_host()), None
    except JobError as e:
        return e.text, (2, '%s: %s' % (PROG, e))


class Fleet(Messages):
    """One fleet run: its settings, the hosts lost so far (why, or ""),
    the runs done earlier (RUNKEY/HOSTID -> GB/s), the clients and point
    directories of now; its messages are Messages'."""

    def __init__(self, s: FleetSettings, hooks: FleetHooks, progress: int, finished: dict[str, str]) -> None:
        self.s, self.hooks, self.progress, self.finished = s, hooks, progress, finished
        self.lost = [''] * len(s.hosts)
        self.clients = Clients(self.warn)
        self.tmps: list[str] = []
        self.ran: list[int] = []
        self.warned: set[str] = set()

    def write_job(self, path: str, line: str, h: FleetHost, head: str = '') -> None:
        """path: the point's job for host h (after head); a point without
        one exits as jobs.sh point_job did."""
        text, err = job_or_exit(line, self.s.jobs, h)
        write(path, head + text)
        if err:
            _write(2, err[1] + '\n')
            raise Exit(err[0])

    def launch(self, d: str, h: FleetHost, limit: int, grace: int, *args: str) -> None:
        """fleet_launch: h's fio client in d, stopped after limit seconds."""
        self.clients.start(d, h.addr, args, limit, grace)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Clients started and waited for (wait) inside: the stop signals
        are blocked from the first start on and wait for the wait, and
        whatever ends the block, no client is left running."""
        fioproc.block_signals()
        try:
            yield
        finally:
            if self.clients.running:
                self.clients.stop(signal.SIGTERM)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, fioproc.TAKEN)

    def wait(self) -> list[Optional[int]]:
        """Every client's status, in the order they started; a stop signal
        stops them (Interrupted)."""
        started = list(self.clients.running)
        try:
            self.clients.wait()
        except fioproc.Stopped as st:
            ignore_signals()
            raise Interrupted(st.sig) from None
        return [c.rc for c in started]

    def split(self, d: str) -> None:
        """fleet_split: fio.text, and when fio's client JSON has
        client_stats, fio.client.json and fio.stdout (the single-host
        shape) of d."""
        out = d + '/fio.client.out'
        if not os.path.isfile(out):
            write(d + '/fio.text', '')
            return
        text, js = rules.split_client_out(read_bytes(out, OSError))
        with open(d + '/fio.text', 'wb') as f:
            f.write(text)
        shaped = rules.single_shape(text_of(js)) if js is not None else None
        if shaped is not None:
            with open(d + '/fio.client.json', 'wb') as f:
                f.write(js or b'')
            write(d + '/fio.stdout', shaped)

    def classify(self, d: str, rc: int, limit: str, h: FleetHost) -> str:
        text = text_of(read_bytes(d + '/fio.text', OSError) + read_bytes(d + '/fio.stderr', OSError))
        return rules.classify(rules.messages(text), rc, limit, h.addr, h.engine)

    # the executor interface (tswap.executor.loop)
    def head(self) -> str:
        return '%s: grid %s on %d host(s) from %s; run directory %s' % (
            PROG, self.s.grid, len(self.s.hosts), self.s.hosts_file, self.s.run)

    def begin(self, total: int) -> None:
        """exec_begin: the preflight of the hosts with runs left."""
        from . import fleet_probe
        s = self.s
        os.makedirs(s.run + '/preflight', exist_ok=True)
        for t in glob.glob(glob.escape(s.run) + '/points/*/.tmp-*'):
            _remove(t)
        per: dict[str, int] = {}
        for k in self.finished:
            hid = k.rsplit('/', 1)[-1]
            per[hid] = per.get(hid, 0) + 1
        self.lost = [''] * len(s.hosts)
        need = [h for h in s.hosts if per.get(h.id, 0) < total]
        if not need:
            return
        self.say('preflight: probing %d host(s) (fio --client, %s s at most)' % (len(need), s.connect_timeout))
        self.preflight(need)
        probe = [h for h in need if not self.lost[h.index]]
        if probe:
            fleet_probe.probe_targets(self, probe)
        for h in need:
            if self.lost[h.index]:
                why = self.lost[h.index]
                self.say('  %s: ERROR %s' % (h.label, why[len('preflight: '):] if why.startswith('preflight: ')
                                             else why))
            else:
                with open('%s/preflight/%s/result.json' % (s.run, h.id), encoding='utf-8') as f:
                    doc = jqjson.loads(f.read())
                self.say('  %s: %s, %s' % (h.label, jqjson.text(doc.get('hostname')),
                                           jqjson.text(doc.get('fio_version'))))

    def preflight(self, hosts: list[FleetHost]) -> None:
        """fleet_preflight: every host parses the first tswap point's job
        (fio --client --parse-only: the probe answer gives its hostname
        and fio version, the parse loads the engine), all at once within
        --connect-timeout; one that fails is lost for this run."""
        from .fleet_probe import meta_lost
        s = self.s
        with self.batch():
            for h in hosts:
                d = '%s/preflight/%s' % (s.run, h.id)
                self.write_job(job_dir(d, 'job.fio'), s.first, h, jobs.preflight_head(h.label))
                self.launch(d, h, int(s.connect_timeout), 2, '--parse-only', 'job.fio')
            rcs = self.wait()
        for h, rc in zip(hosts, rcs):
            assert rc is not None
            d = '%s/preflight/%s' % (s.run, h.id)
            line = next((ln for ln in text_of(read_bytes(d + '/fio.client.out', OSError)).split('\n')
                         if ln.startswith('hostname=') and ', fio=' in ln), '')
            name, ver = rules.probe_answer(line)
            self.split(d)
            why = self.classify(d, rc, s.connect_timeout, h)
            reason = rules.preflight_reason(line, ver, s.fio_want, why,
                                            text_of(read_bytes(d + '/fio.text', OSError)).rstrip('\n'),
                                            rc, name, h.addr, h.id)
            if reason:
                self.lost[h.index] = 'preflight: ' + reason
                meta_lost(self, h, 'the host failed the preflight')
            write(d + '/result.json', rules.preflight_doc(h.index, h.label, h.addr, name, ver, reason, rc))

    def todo(self, runkey: str) -> list[int]:
        return [h.index for h in self.s.hosts if '%s/%s' % (runkey, h.id) not in self.finished]

    def done_text(self, runkey: str) -> str:
        return 'done earlier on all %d hosts' % len(self.s.hosts)

    def run(self, line: str, runkey: str, rep: int, label: str, places: Sequence[object]) -> str:
        """exec_run: the point on the hosts places at once; a host lost
        earlier gets a result that says why, unrun. A host may take the
        point's own time plus --host-timeout (fio start-up, laying out a
        new file, stats)."""
        s = self.s
        js = s.jobs
        limit = int(s.host_timeout) + int(js.runtime or 0) + int(js.ramp or 0)
        pd = '%s/points/%s' % (s.run, runkey)
        os.makedirs(pd, exist_ok=True)
        self.tmps, self.ran = [], []
        hosts = [s.hosts[i] for i in places if isinstance(i, int)]
        t0 = time.monotonic_ns()
        with self.batch():
            for h in hosts:
                tmp = '%s/.tmp-%s.%d' % (pd, h.id, os.getpid())
                job = job_dir(tmp, 'job.fio')
                self.tmps.append(tmp)
                self.write_job(job, line, h)
                write_exec(tmp + '/run.sh', jobs.run_sh(h.label, s.grid, h.addr))
                if self.lost[h.index]:
                    continue
                self.launch(tmp, h, limit, 5, '--output-format=json', 'job.fio')
                self.ran.append(h.index)
            rcs = dict(zip(self.ran, self.wait()))
        wall = wall_text(time.monotonic_ns() - t0)
        for h in hosts:
            tmp = '%s/.tmp-%s.%d' % (pd, h.id, os.getpid())
            if h.index in rcs:
                rc = rcs[h.index]
                assert rc is not None
                why = self.result(tmp, runkey, rep, rc, wall, line, h, str(limit))
                if why.startswith('lost '):
                    self.lost[h.index] = '%s (at %s)' % (why[len('lost '):], runkey)
            else:
                self.hooks.result(tmp, line, runkey, str(rep), '0', '0', list(s.targets))
                self.tag(tmp + '/result.json', h, 'not run: ' + self.lost[h.index])
            _remove('%s/%s' % (pd, h.id))
            os.rename(tmp, '%s/%s' % (pd, h.id))
        self.tmps = []
        return wall

    def result(self, d: str, runkey: str, rep: int, rc: int, wall: str, line: str, h: FleetHost,
               limit: str) -> str:
        """fleet_result: d/result.json for host h; classify's line when the
        run failed, else ""."""
        self.split(d)
        self.hooks.result(d, line, runkey, str(rep), str(rc), wall, list(self.s.targets))
        why = ''
        if text_of(read_bytes(d + '/progress.txt', OSError)).split('\n', 1)[0].startswith('ERROR: '):
            why = self.classify(d, rc, limit, h)
        self.tag(d + '/result.json', h, rules.reason_of(why) if why else '')
        return why

    def tag(self, path: str, h: FleetHost, reason: str) -> None:
        """fleet_tag_result: the host (and reason as its error) in path."""
        with open(path, encoding='utf-8', errors='surrogateescape') as f:
            doc = jqjson.loads(f.read())
        write(path + '.tmp', jqjson.dumps(rules.tag_result(doc, h.tag(), reason)) + '\n')
        os.replace(path + '.tmp', path)

    def result_text(self, runkey: str, label: str, eta: str, places: Sequence[object]) -> str:
        """exec_result_text: the hosts' figures, then the error of each
        host that ran it and failed."""
        s = self.s
        pd = '%s/points/%s' % (s.run, runkey)
        docs: list[Any] = []
        for f in sorted(glob.glob(glob.escape(pd) + '/*/result.json')):
            with open(f, encoding='utf-8', errors='replace') as r:
                docs.append(jqjson.loads(r.read()))
        res = self.hooks.progress(docs)
        if len(places) < len(s.hosts):
            res += ' (%d run now, %d done earlier)' % (len(places), len(s.hosts) - len(places))
        out = ['%s  %s  (eta %s)\n' % (label, res, eta)]
        for i in self.ran:
            h = s.hosts[i]
            first = text_of(read_bytes('%s/%s/progress.txt' % (pd, h.id), OSError)).split('\n', 1)[0]
            if not first.startswith('ERROR: '):
                continue
            with open('%s/%s/result.json' % (pd, h.id), encoding='utf-8', errors='surrogateescape') as f:
                err = jqjson.loads(f.read()).get('error')
            out.append('    %s: ERROR %s\n' % (h.label, jqjson.text(err)))
        return ''.join(out)

    def stop(self, sig: int) -> None:
        """exec_stop: the clients stopped (fioproc stopped them already when
        the signal came while they ran) and the point's directories gone."""
        self.clients.stop(signal.SIGTERM)
        for t in self.tmps:
            _remove(t)
        self.tmps = []

    def full_exit(self, free: int) -> None:
        """space.sh run_dir_full_exit: half-written files removed, exit 3."""
        from ..plan.values import EXIT_ERROR, Refusal
        from .base import q
        r = glob.escape(self.s.run)
        for f in glob.glob(r + '/*.tmp') + glob.glob(r + '/points/*.tmp'):
            _remove(f)
        raise Refusal(EXIT_ERROR, 'run directory full: %d bytes free in %s (free space, then: %s --resume %s)'
                      % (free, self.s.run, PROG, q(self.s.run)))

    def finish_args(self) -> list[str]:
        return ['--fleet', '--outlier-pct', self.s.outlier_pct, '--junit-out', self.s.junit_out]
