# SPDX-License-Identifier: GPL-2.0-only
"""A run on this host's targets before its points (tswap.executor.local
Local's part): a target file written in full once so that reads hit the
device, the rank files, a target file that changed checked again, and
the preconditioning before the first write point (SNIA SSS PTS: two
sequential passes). The bash it replaces: target.sh prepare_target;
ranks.sh prepare_targets, target_recheck; precondition.sh."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable

from .. import jqjson
from ..plan.values import EXIT_ERROR, EXIT_USAGE, bytes_to_size
from .base import Exit, Messages, _lines, _remove
from .targets import Held, allocate, identity, scratch_create

if TYPE_CHECKING:
    from .local import Hooks, Settings
    from .point import Targets

PRECOND_BS, PRECOND_BS_BYTES, PRECOND_QD, PRECOND_LOOPS = '1m', 1 << 20, 32, 2
PREPARE_JOB = ('[global]\nioengine=libaio\nfilename=${TSWAP_TARGET}\nsize=${TSWAP_SIZE}\ndirect=1\nbs=1m\n'
               'iodepth=16\n\n[prepare]\nrw=write\nend_fsync=1\n')


class Prepare(Messages):
    """The targets' part of Local (its attributes: the settings s, the
    target of now and its kind and owner, the held targets), and its
    messages: Messages' and note."""
    s: Settings
    hooks: Hooks
    target: str
    kind: str
    owned: str
    held: Held
    tmp: str
    target_lock: Callable[[str], None]

    def note(self, msg: str) -> None:
        """util.sh note: msg, a line of RUN/notes.txt."""
        with open(self.s.run + '/notes.txt', 'a', encoding='utf-8', errors='surrogateescape') as f:
            f.write(msg + '\n')

    def die(self, code: int, msg: str) -> None:
        raise NotImplementedError

    def targets_now(self) -> Targets:
        raise NotImplementedError

    def run_fio(self, d: str, depth: int) -> int:
        raise NotImplementedError

    # targets
    def prepare_target(self, d: str) -> None:
        """target.sh prepare_target."""
        s = self.s
        if self.kind != 'file':
            return
        have = alloc = 0
        need = s.size_bytes
        ident = ''
        if self.owned == 'new':
            scratch_create(self.target, s.run, self.warn)
            ident = 'x'
            self.owned = 'ours'
        if not ident and os.path.isfile(self.target):
            try:
                st = os.stat(self.target)
            except OSError:
                self.die(EXIT_ERROR, 'cannot stat target %s for its lock' % self.target)
            have, alloc = st.st_size, st.st_blocks * 512
        self.target_lock(self.target)
        if self.owned == 'theirs' and not s.destructive:
            if have < need:
                self.die(EXIT_USAGE, 'refusing target %s: an existing file the sweep did not create, shorter'
                         ' than --size %s' % (self.target, s.size))
        elif os.path.isdir(d) and not os.path.isfile(d + '/done'):
            have = 0
        if have >= need:
            if alloc < need:
                self.note('the target file has holes (%d of %d bytes allocated): reads of a hole never'
                          ' reach the device; write the file first' % (alloc, need))
                self.say('note: %s has holes: reads of holes never reach the device' % self.target)
            return
        self.say('preparing %s: writing %s with fio (O_DIRECT) so reads hit the device' % (self.target, s.size))
        if os.path.lexists(d):
            _remove(d)
        os.makedirs(d)
        if not allocate(self.target, need):
            self.die(EXIT_ERROR, 'cannot create %s' % self.target)
        with open(d + '/job.fio', 'w') as f:
            f.write(PREPARE_JOB)
        rc = self.run_fio(d, 1)
        if rc != 0:
            tail = _lines(d + '/fio.stderr')[-3:]
            self.die(EXIT_ERROR, 'could not write %s with O_DIRECT (fio exit %d): %s'
                     % (self.target, rc, ' '.join(tail)))
        open(d + '/done', 'w').close()

    def recheck(self) -> None:
        """ranks.sh target_recheck."""
        self.owned = self.s.owns.get(self.target, '')
        if identity(self.target) == self.s.seen.get(self.target, ''):
            return
        rc, owned = self.hooks.recheck(self.target)
        if rc:
            raise Exit(rc)
        self.owned = owned

    def rank_file(self, r: int, h: str) -> str:
        return self.targets_now().rank_file(r, h)

    def prepare_targets(self) -> None:
        """ranks.sh prepare_targets."""
        s = self.s
        if s.single:
            if self.kind == 'file':
                self.recheck()
            self.prepare_target(s.run + '/prepare')
        for r, h in s.slots:
            if s.kinds[r % len(s.targets)] != 'file':
                continue
            self.target = self.rank_file(r, h)
            self.kind = 'file'
            self.recheck()
            self.prepare_target('%s/prepare.rank%d%s' % (s.run, r, '.write' if h == 'write' else ''))
        self.target, self.kind = s.targets[0], s.kinds[0]
        self.held.keep(self.precondition_targets())

    # preconditioning
    def precondition_wanted(self) -> bool:
        p = self.s.precondition
        return p == 'on' or (p != 'off' and 'block' in self.s.kinds)

    def precondition_targets(self) -> list[str]:
        out = [self.target] if self.s.single else []
        out += [self.rank_file(r, h) for r, h in self.s.slots]
        return list(dict.fromkeys(out))

    def precondition_before(self, rw: str) -> None:
        """precondition.sh precondition_before."""
        s = self.s
        d = s.run + '/precondition'
        if rw not in ('write', 'readwrite') or os.path.isfile(d + '/done') or not self.precondition_wanted():
            return
        paths = self.precondition_targets()
        size = s.size_bytes // PRECOND_BS_BYTES * PRECOND_BS_BYTES
        if size <= 0:
            self.die(EXIT_USAGE, '--precondition: --size %s is smaller than one %s block'
                     % (bytes_to_size(s.size_bytes), PRECOND_BS))
        sz = bytes_to_size(size)
        _remove(d)
        _remove(s.run + '/precondition.json')
        os.makedirs(d)
        main = self.target
        sums = []
        for n, t in enumerate(paths, 1):
            dn = '%s/%d' % (d, n)
            os.makedirs(dn)
            self.say('preconditioning %s: %d sequential passes of %s (fio libaio, bs=%s, iodepth=%d, O_DIRECT)'
                     % (t, PRECOND_LOOPS, sz, PRECOND_BS, PRECOND_QD))
            with open(dn + '/job.fio', 'w') as f:
                f.write('; tswap-sweep preconditioning: %d sequential passes over the target (SNIA SSS PTS)\n'
                        '[global]\nioengine=libaio\nfilename=${TSWAP_TARGET}\nsize=%d\ndirect=1\nbs=%s\n'
                        'iodepth=%d\nloops=%d\nend_fsync=1\n\n[precondition]\nrw=write\n'
                        % (PRECOND_LOOPS, size, PRECOND_BS, PRECOND_QD, PRECOND_LOOPS))
            self.target = t
            try:
                rc = self.run_fio(dn, 2)
            finally:
                self.target = main
            try:
                with open(dn + '/fio.stdout', encoding='utf-8') as f:
                    doc = jqjson.loads(f.read())
                nbytes = jqjson.add([j['write']['io_bytes'] for j in doc['jobs']])
                nbytes = 0 if nbytes is None else nbytes
            except (OSError, ValueError, KeyError, TypeError):
                doc, nbytes = None, 0
            want = size * PRECOND_LOOPS
            if rc != 0 or nbytes != want:
                err = [x for x in _lines(dn + '/fio.stderr') if x.strip()][-2:]
                self.die(EXIT_ERROR, 'preconditioning %s failed (fio exit %d, %s of %d bytes written): %s'
                         % (t, rc, jqjson.text(nbytes), want, ''.join(x + ' ' for x in err)))
            os.replace(dn + '/fio.stdout', dn + '/fio.json')
            secs = jqjson.jmax([j['job_runtime'] for j in doc['jobs']]) / 1000
            summ = {'path': t, 'bytes': nbytes, 'seconds': secs}
            summ['gbs'] = nbytes / secs / 1e9
            with open(dn + '/summary.json', 'w', encoding='utf-8', errors='surrogateescape') as f:
                f.write(jqjson.dumps(summ, compact=True) + '\n')
            sums.append(summ)
            self.say('preconditioned %s: %s bytes in %s s, %s GB/s' % (
                t, jqjson.text(nbytes), jqjson.text(secs), jqjson.text(jqjson.jround(summ['gbs'] * 1000) / 1000)))
        tb = jqjson.add([x['bytes'] for x in sums])
        ts = jqjson.add([x['seconds'] for x in sums])
        doc = {'passes': PRECOND_LOOPS, 'bs': PRECOND_BS, 'iodepth': PRECOND_QD, 'size_bytes': size,
               'targets': sums, 'bytes': tb, 'seconds': ts, 'gbs': tb / ts / 1e9}
        with open(s.run + '/precondition.json.tmp', 'w', encoding='utf-8', errors='surrogateescape') as f:
            f.write(jqjson.dumps(doc) + '\n')
        os.replace(s.run + '/precondition.json.tmp', s.run + '/precondition.json')
        open(d + '/done', 'w').close()

