# SPDX-License-Identifier: GPL-2.0-only
"""Each fleet host's target, judged on that host by this host's rules,
and its metadata, read there, through fio's own client/server channel
(no SSH; docs/fleet.md "Safety", "Metadata").

The probe (tswap.executor.fleet_jobs probe_job) asks its questions with
exec_prerun tests; its answers are judged by
tswap.executor.fleet_rules judge. A new path is created and marked on
its host once every host has passed (create_job). The same probe
carries the metadata job: lib/meta-collect.sh runs on the host in
--fio-job mode and leaves NAME.prerun.txt in fio --server's directory, a
job file of null jobs whose descriptions are its output in base64
chunks; a second client run (`fio --client --remote-config
NAME.prerun.txt`, whose first job removes the file) brings them back,
and RUN/preflight/ID/meta.json is made from them. A host whose metadata
cannot be read keeps its place in the run: its meta.json says "not
collected" and why. The bash it replaces: fleet-target.sh
fleet_probe_targets, fleet_create_targets; fleet-meta.sh
fleet_meta_fetch, fleet_meta_read, fleet_meta_lost."""

from __future__ import annotations

import base64
import binascii
import gzip
import os
import zlib
from typing import TYPE_CHECKING

from .. import jqjson
from ..plan.values import EXIT_USAGE, Refusal
from . import fleet_jobs as jobs
from . import fleet_rules as rules
from .base import _remove, read_bytes

if TYPE_CHECKING:
    from .fleet import Fleet, FleetHost


def json_part(path: str) -> bytes:
    """The lines of path from the first one starting with '{' on (sed -n
    '/^{/,$p'); b'' without one."""
    _, js = rules.split_client_out(read_bytes(path, OSError))
    return js or b''


def probe_targets(x: Fleet, hosts: list[FleetHost]) -> None:
    """Probe each host's target (all at once, within --connect-timeout),
    then read its metadata, and apply the rules: a refusal exits 2 with
    one line naming the host and the target; a host whose probe gives no
    answer is lost for this run. New paths are created once every host
    passed."""
    from .fleet import job_dir, text_of, write
    s = x.s
    names = {h.index: jobs.meta_name(os.getpid(), h.index) for h in hosts}
    with open(s.collector, 'rb') as f:
        collector = f.read()
    with x.batch():
        for h in hosts:
            d = '%s/preflight/%s/target' % (s.run, h.id)
            job = job_dir(d, 'probe.fio')
            meta = jobs.meta_job(h.target, names[h.index], collector)
            write(job, jobs.probe_job(h.target, s.jobs.size_bytes, meta))
            x.launch(d, h, int(s.connect_timeout), 2, '--output-format=json', 'probe.fio')
        rcs = x.wait()
    # the metadata the probe left on the hosts that answered in time
    with x.batch():
        for h, rc in zip(hosts, rcs):
            if rc not in (124, 137):
                x.clients.start('%s/preflight/%s/target' % (s.run, h.id), h.addr,
                                ('--output-format=json', '--remote-config', names[h.index] + '.prerun.txt'),
                                int(s.connect_timeout), 2, 'meta.client.out', 'meta.stderr')
        x.wait()
    fresh = []
    for h, rc in zip(hosts, rcs):
        d = '%s/preflight/%s/target' % (s.run, h.id)
        with open(d + '/fio.json', 'wb') as f:
            f.write(json_part(d + '/fio.client.out'))
        yes = rules.probe_yes(text_of(json_part(d + '/fio.client.out')))
        if not yes:
            x.lost[h.index] = ('preflight: no answer to the target check (fio --client exit %d; preflight/%s/target/)'
                               % (rc, h.id))
            meta_lost(x, h, 'no answer to the probe')
            continue
        meta_read(x, h, names[h.index])
        v = rules.judge(yes, 'target %s on %s' % (h.target, h.label), h.id, s.writes, s.destructive, s.force,
                        s.size)
        if v.refuse:
            raise Refusal(EXIT_USAGE, v.refuse)
        if v.warn:
            x.warn(v.warn)
        if v.warn_once:
            x.warn_once(v.warn_once)
        if v.new:
            fresh.append(h)
    if fresh:
        create_targets(x, fresh)


def create_targets(x: Fleet, hosts: list[FleetHost]) -> None:
    """The new target of each host made there (all at once, within
    --connect-timeout plus --host-timeout); one that could not be marked
    is created by fio, unmarked, and said."""
    from .fleet import job_dir, text_of, write
    s = x.s
    with x.batch():
        for h in hosts:
            d = '%s/preflight/%s/target/create' % (s.run, h.id)
            write(job_dir(d, 'create.fio'), jobs.create_job(h.target, s.jobs.size_bytes))
            x.launch(d, h, int(s.connect_timeout) + int(s.host_timeout), 2, '--output-format=json', 'create.fio')
        x.wait()
    for h in hosts:
        d = '%s/preflight/%s/target/create' % (s.run, h.id)
        js = json_part(d + '/fio.client.out')
        with open(d + '/fio.json', 'wb') as f:
            f.write(js)
        w = rules.create_warning(rules.created(text_of(js), s.jobs.size_bytes), h.target, h.label, h.id)
        if w:
            x.warn(w)


def meta_lost(x: Fleet, h: FleetHost, why: str) -> None:
    """RUN/preflight/ID/meta.json: the metadata of host h was not
    collected, and why."""
    d = '%s/preflight/%s' % (x.s.run, h.id)
    os.makedirs(d, exist_ok=True)
    doc = {'collected': False, 'note': 'metadata: not collected (%s)' % why}
    with open(d + '/meta.json.tmp', 'w', encoding='utf-8', errors='surrogateescape') as f:
        f.write(jqjson.dumps(doc) + '\n')
    os.replace(d + '/meta.json.tmp', d + '/meta.json')


def _decoded(desc: str) -> bytes:
    """The collector's output from its base64 chunks (base64 -d | gunzip);
    ValueError when it does not decode."""
    try:
        data = base64.b64decode(desc + '\n', validate=False)
        return gzip.decompress(data)
    except (binascii.Error, OSError, EOFError, zlib.error) as e:
        raise ValueError(str(e)) from None


def meta_read(x: Fleet, h: FleetHost, name: str) -> None:
    """RUN/preflight/ID/meta.json from the metadata answer (in
    RUN/preflight/ID/target/), or why not."""
    from .fleet import text_of
    d = '%s/preflight/%s' % (x.s.run, h.id)
    t = d + '/target'
    kv = None
    out = t + '/meta.client.out'
    if os.path.isfile(out):
        js = json_part(out)
        # jq reads no document from nothing: gunzip gets nothing and fails
        desc = rules.meta_desc(text_of(js), name) if js.strip() else ''
        if desc is not None:
            try:
                kv = _decoded(desc)
            except ValueError:
                kv = None
            with open(t + '/meta.kv', 'wb') as f:
                f.write(kv or b'')
    if kv is None:
        lines = []
        for f in (t + '/meta.stderr', out):
            for ln in text_of(read_bytes(f, OSError)).split('\n'):
                if ln.strip(' \t\n\v\f\r'):
                    lines.append('%s:%s' % (f, ln))
        why = rules.meta_why(lines)
        meta_lost(x, h, "the host's answer to fio --remote-config %s.prerun.txt has no metadata%s; preflight/%s/target/"
                  % (name, ': ' + why if why else '', h.id))
        return
    doc = x.hooks.meta(h.target, h.engine, "%s (the sweep's, on this controller)" % x.s.tswap,
                       kv.decode('utf-8', 'replace'))
    if doc is None:
        _remove(d + '/meta.json.tmp')
        meta_lost(x, h, "the collector's output does not parse (preflight/%s/target/meta.kv)" % h.id)
        return
    doc = jqjson.loads(jqjson.dumps(doc))
    doc['collected'] = True
    with open(d + '/meta.json.tmp', 'w', encoding='utf-8', errors='surrogateescape') as f:
        f.write(jqjson.dumps(doc) + '\n')
    os.replace(d + '/meta.json.tmp', d + '/meta.json')

