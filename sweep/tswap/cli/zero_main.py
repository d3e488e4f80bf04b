# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero's command line (sweep/tswap-zero runs main(home, argv)): the
options and their usage errors (the inputs they name: zero_inputs), the
--out folder, the plan (tswap.plan.zero_plan) and its fio jobs
(tswap.plan.zero_fiojob), the dry run's table, --emit-jobs, and the
replay (zero_run, fio under zero_fio). docs/zero-infinity.md.

Exit codes: 0 done; 2 usage error, bad ds_config or refused target; 3 run
error (fio or the engine failed, bytes differ from the plan); 130/143/129
interrupted (fio stopped, the run folders removed).
"""

from __future__ import annotations

import os
import tempfile
import signal
import sys
import time
from typing import Any, Optional

from .. import jqjson
from ..plan.deepspeed import ReleaseError
from ..plan.zero_config import PlanError
from ..plan.zero_fiojob import job_text, too_many_jobs
from ..plan.zero_plan import build, path_notes, table
from ..plan.zero_release import ZeroRelease, zero_release
from .files import write_text
from .zero_common import EXIT_ERROR, Exit, find_engine, logical_cwd, say, usage_error
from .zero_inputs import (MAX_TENSORS, check_path, parse_count, read_aio, read_config, read_numels,
                          same_folder_key, split_targets)
from .zero_run import OutClaim, check_target, run_replay

USAGE = """\
Usage: tswap-zero --ds-config FILE --params N --ranks N --target DIR[,DIR...]
                  [--world N] [--param-numel N | --param-numels FILE]
                  [--step steady|first|init]
                  [--dtype fp32|fp16|bf16] [--steps N] [--dry-run] [--out DIR]
                  [--aio FILE] [--scale N] [--keep] [--no-ceiling]
                  [--ds-version X]

Plan the NVMe swap traffic of one DeepSpeed ZeRO-Infinity training step from
a ds_config, and replay it with fio and the tswap engine.

  --ds-config FILE   the job's DeepSpeed config (zero_optimization stage 3,
                     offload_optimizer/offload_param device nvme, aio, ...)
  --params N         model parameters, e.g. 13e9
  --ranks N          GPU ranks on this node (each its own swap folder/handles),
                     1 to 1024
  --world N          data-parallel world size (default: --ranks)
  --param-numel N    elements per model parameter tensor (default 5e7, about
                     one MLP weight of a 7B model); sets the gradient and
                     parameter file sizes (docs/zero-infinity.md)
  --param-numels FILE  the model's own tensors instead: a JSON list of the
                     elements of each parameter in model order, as
                     [p.numel() for p in model.parameters()] prints it
                     (whole numbers >= 1, at most 50000); --params may then
                     be left out (if given, it must be their sum)
  --target DIR,...   folders on the NVMe drives (nvme_path), at most --ranks;
                     ranks are spread over them round-robin; each run uses
                     a fresh DIR/tswap-zero-RUNID/ and removes it at the end
  --step S           what to plan and replay: steady (default: a training step
                     from the second on), first (the first training step: no
                     optimizer state to read yet, every NVMe parameter read
                     again in backward) or init (deepspeed.initialize: the
                     swap files' first writes and reads); the dry run prints
                     the bytes of all three
  --dtype D          parameter dtype fp32, fp16 or bf16, in place of the
                     ds_config's bf16/fp16 "enabled" (needed when it is
                     "auto", as in Hugging Face Trainer configs)
  --steps N          times to replay it (default 1)
  --dry-run          print the plan, write plan.json and the fio jobs; run nothing
                     (exit 2 after them when fio could not run step.fio or
                     layout.fio: more than its 4088 jobs, as the replay refuses)
  --out DIR          where plan.json, step.fio, layout.fio and the results go:
                     a new or empty folder, one run at a time (default:
                     build/zero/RUNID in a checkout, else ./tswap-zero-RUNID)
  --aio FILE         also replay the step with this "aio" block (e.g. the
                     sweep's best-aio.json) and report the seconds saved
  --scale N          divide every tensor size by N (a smaller replay of the
                     same structure; default 1)
  --keep             keep the swap files after the run
  --no-ceiling       skip the device ceiling (by default, once per run: fio's
                     own libaio, one job per rank on its target, 1 MiB
                     sequential, 2 s writing then 2 s reading; iodepth 64,
                     or as many 1 MiB blocks as the aio settings keep in
                     flight (intra_op_parallelism x queue_depth x
                     block_size), at most 4096; 256 MiB per rank, or twice
                     the queue's bytes; each step is reported against it)
  --ds-version X     the DeepSpeed release whose rules to follow,
                     MAJOR.MINOR[.PATCH] from 0.3.15 to 0.19.5 (default
                     0.19.5, the newest tswap knows): the ds_config keys it
                     reads, the buffer_size assert, the pread bound, and
                     from 0.19.4 swap buffers from new_cpu_locked_tensor
                     (the replay uses tswap_alloc=deepspeed: posix_memalign
                     + mlock, so RLIMIT_MEMLOCK must hold them unless
                     CAP_IPC_LOCK); docs/zero-infinity.md
  --emit-jobs FILE   write the step as a job-library profile (engine and folder
                     as ${TSWAP_ENGINE}, ${TSWAP_ZERO_DIR}; used by `make jobs`);
                     refused (as the replay) if it needs more than the 4088
                     jobs fio runs at once
  --version          print the tswap, engine and fio versions and exit
  -h, --help         this help

Exit codes: 0 done; 2 usage error, bad ds_config or refused target; 3 run
error; 130/143/129 interrupted (SIGINT/TERM/HUP: fio stopped, swap files removed);
141 standard output closed during the replay (the same).
"""

# Replay size unit, bytes: the DIO offset alignment the replay rounds each
# tensor up to (4096: NVMe's usual logical block; tswap checks the real one).
DIO_UNIT = 4096
_VALUED = ('--ds-config', '--params', '--ranks', '--world', '--param-numel', '--param-numels', '--target', '--steps',
           '--out', '--aio', '--scale', '--step', '--dtype', '--emit-jobs', '--ds-version')


def make_plan(cfg_path: str, cfg: Any, params: int, world: int, ranks: int, pnumel: int, step: str, dtype: str,
              out: str, numels: Optional[tuple[float, ...]] = None,
              release: Optional[ZeroRelease] = None) -> dict[str, Any]:
    """plan.json written to out (through out.tmp; out "": not written); a
    refused plan: one line naming the option or the ds_config key (as
    cfg_path's), exit 2."""
    try:
        plan = build(cfg, float(params), float(world), float(ranks), float(pnumel), step, dtype, numels, release)
    except PlanError as e:
        m = str(e)
        raise usage_error(m if m.startswith('--') else '%s: %s' % (cfg_path, m[len('ds_config: '):]
                                                                   if m.startswith('ds_config: ') else m))
    if out:
        write_plan(plan, out)
    return plan


def write_plan(plan: dict[str, Any], out: str) -> None:
    """plan.json written to out through out.tmp."""
    write_text(out, jqjson.dumps(plan) + '\n')


def options(argv: list[str]) -> Optional[dict[str, Any]]:
    """The options (None for --help, {'version': True} for --version)."""
    o: dict[str, Any] = {'ds-config': '', 'params': '', 'ranks': '', 'world': '', 'param-numel': '',
                         'param-numels': '',
                         'target': '', 'steps': '1', 'out': '', 'aio': '', 'scale': '1', 'step': 'steady',
                         'dtype': '', 'emit-jobs': '', 'ds-version': None, 'dry': False, 'keep': False,
                         'ceiling': True}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in _VALUED:
            if i + 1 >= len(argv):
                raise usage_error('%s: needs a value' % a)
            if argv[i + 1] == '':
                # an unset shell variable is not the option's default
                if a == '--ds-version':
                    raise usage_error('--ds-version: empty; a DeepSpeed release MAJOR.MINOR[.PATCH] (e.g. 0.16.4)')
                raise usage_error('%s: empty (give a value, or leave the option out for its default)' % a)
            o[a[2:]] = argv[i + 1]
            i += 2
            continue
        if a == '--dry-run':
            o['dry'] = True
        elif a == '--keep':
            o['keep'] = True
        elif a == '--no-ceiling':
            o['ceiling'] = False
        elif a in ('-h', '--help'):
            return None
        elif a == '--version':
            return {'version': True}
        else:
            raise usage_error('%s: unknown option (see --help)' % a)
        i += 1
    return o


# emit_header's second line: what marks a profile tswap-zero wrote
_EMIT_MARK = '; planned by sweep/tswap-zero from '


def _our_profile(path: str) -> bool:
    """path begins as emit_header makes a profile begin (`make jobs`
    replaces its own profiles, never another file)."""
    try:
        with open(path, 'rb') as f:
            head = f.read(4096).decode('utf-8', 'replace').split('\n')
    except OSError:
        return False
    return len(head) > 2 and head[0].startswith('; Workload: ') and head[1].startswith(_EMIT_MARK)


def emit_header(plan: dict[str, Any], params: int, ranks: int, scale: int, cfg: str) -> str:
    """The job-library profile's comment lines."""
    b = cfg.rsplit('/', 1)[-1]
    n = jqjson.number
    return '\n'.join([
        '; Workload: %s: one ZeRO-Infinity training step of a %d-parameter model on %d ranks,' % (b, params, ranks),
        _EMIT_MARK + '%s (DeepSpeed defaults for every key it' % b,
        '; does not set: docs/zero-infinity.md) with every tensor size divided by %d;' % scale,
        '; the %s step (tswap-zero --step).' % plan['step'],
        '; Generated by `make jobs`; do not edit. %s files, %s B read and' % (n(plan['files']),
                                                                           n(plan['read_bytes_per_step'])),
        '; %s B written per step at full size.' % n(plan['write_bytes_per_step']),
        ';',
        '; Environment: TSWAP_ENGINE (tswap.so), TSWAP_ZERO_DIR (an empty folder on the',
        '; NVMe drive: the swap files are created in it; the first run lays them out).',
        '; Run:  TSWAP_ENGINE=$PWD/build/tswap.so TSWAP_ZERO_DIR=/mnt/nvme/zero fio FILE',
        ";   (or `. jobs/env.sh` for defaults: the checkout's build/tswap.so and build/scratch/zero/)"])


def run(home: str, argv: list[str]) -> int:
    o = options(argv)
    if o is None:
        sys.stdout.write(USAGE)
        return 0
    if 'version' in o:
        from .zero_common import print_version
        print_version(home)
        return 0
    for k in ('ds-config', 'params', 'ranks'):
        if not o[k] and not (k == 'params' and o['param-numels']):
            raise usage_error('--%s: required' % k)
    emit = o['emit-jobs']
    targets = 'emit' if emit else o['target']
    if not targets:
        raise usage_error('--target: required')
    o['numels'] = None
    if o['param-numels']:
        if o['param-numel']:
            raise usage_error('--param-numel and --param-numels: give one of them (a size for every tensor, or '
                              'each tensor\'s)')
        o['numels'] = read_numels(o['param-numels'])
        total = int(sum(o['numels']))
        if o['params'] and parse_count('--params', o['params'], 1) != total:
            raise usage_error('--params=%s: not the sum of --param-numels %s (%d elements)'
                              % (o['params'], o['param-numels'], total))
        params = total
    else:
        params = parse_count('--params', o['params'], 1)
    # 1024 ranks: far above any node; fio runs at most 4088 jobs in all
    # (zero_fiojob.FIO_MAX_JOBS, checked once the plan is made).
    ranks = parse_count('--ranks', o['ranks'], 1, 1024)
    world = parse_count('--world', o['world'] or str(ranks), 1)
    if world < ranks:
        raise usage_error('--world=%d: smaller than --ranks=%d' % (world, ranks))
    pnumel = parse_count('--param-numel', o['param-numel'] or '5e7', 1)
    nt = len(o['numels']) if o['numels'] else (params + pnumel - 1) // pnumel
    if nt > MAX_TENSORS:
        raise usage_error('--params=%d --param-numel=%d: %d model tensors, at most %d (raise --param-numel)'
                          % (params, pnumel, nt, MAX_TENSORS))
    steps = parse_count('--steps', o['steps'], 1)
    if o['step'] not in ('steady', 'first', 'init'):
        raise usage_error('--step=%s: one of steady, first, init' % o['step'])
    if o['dtype'] not in ('', 'fp32', 'fp16', 'bf16'):
        raise usage_error('--dtype=%s: one of fp32, fp16, bf16' % o['dtype'])
    scale = parse_count('--scale', o['scale'], 1)
    try:
        o['release'] = zero_release(o['ds-version'] or '')
    except ReleaseError as e:
        raise usage_error(str(e)) from None
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in targets):
        raise usage_error('--target: a control character (newline, tab, ...) in a path cannot be used')
    tlist = split_targets(targets)
    for t in tlist:
        if t == '':
            raise usage_error('--target %s: an empty entry' % targets)
        check_path('--target', t)
        if os.path.exists(t) and not os.path.isdir(t):
            raise usage_error('--target %s: not a directory (tswap-zero lays out swap files in a folder, like '
                              'nvme_path)' % t)
        if not o['dry'] and not emit:
            check_target(t)
    if len(tlist) > ranks:
        raise usage_error('--target: %d folders for %d rank(s): ranks go round-robin over them, so %s would get none'
                          % (len(tlist), ranks, tlist[ranks]))
    cwd = logical_cwd()
    tlist = [t if t.startswith('/') else cwd + '/' + t for t in tlist]
    seen: dict[str, str] = {}
    for t in tlist:
        key = same_folder_key(t)
        if key in seen:
            raise usage_error('--target %s: the same folder as %s (give each target folder once)' % (t, seen[key]))
        seen[key] = t
    aio = o['aio']
    aio_doc = None
    if aio:
        aio_doc = read_aio(aio)
    runid = '%s-%d' % (time.strftime('%Y%m%d-%H%M%S'), os.getpid())
    out = o['out']
    if not out:
        script = os.path.join(home, '..')
        out = '%s/build/zero/%s' % (script, runid) if os.path.isdir(script + '/build') else './tswap-zero-' + runid
    if emit:
        check_path('--emit-jobs', emit)
        if os.path.islink(emit) or (os.path.exists(emit) and not os.path.isfile(emit)):
            raise usage_error('--emit-jobs %s: exists and is not a regular file (a symlink, device or FIFO is never '
                              'replaced)' % emit)
        if os.path.exists(emit) and not _our_profile(emit):
            raise usage_error('--emit-jobs %s: exists and is not a profile tswap-zero wrote: not overwritten (remove '
                              'it, or another name)' % emit)
    with OutClaim(out) as claim:
        return _plan_and_run(home, o, claim, out, params, world, ranks, pnumel, steps, scale, tlist, aio, aio_doc,
                             runid, emit)


def _plan_and_run(home: str, o: dict[str, Any], claim: OutClaim, out: str, params: int, world: int, ranks: int,
                  pnumel: int, steps: int, scale: int, tlist: list[str], aio: str, aio_doc: Any, runid: str,
                  emit: str) -> int:
    cfg_path, step, dtype = o['ds-config'], o['step'], o['dtype']
    cfg = read_config(cfg_path)
    plan = make_plan('--ds-config ' + cfg_path, cfg, params, world, ranks, pnumel, step, dtype, '', o['numels'],
                     o['release'])
    if aio_doc is not None:
        # the --aio block goes into the ds_config (zero_run): checked now, in
        # the dry run too, and named as --aio's
        from .zero_run import merge_aio
        make_plan('--aio ' + aio, merge_aio(cfg, aio_doc), params, world, ranks, pnumel, step, dtype, '',
                  o['numels'], o['release'])
    write_plan(plan, out + '/plan.json')
    engine = find_engine(home)
    if engine is None:
        if not o['dry']:
            raise Exit(EXIT_ERROR, 'tswap.so not found (run make, or set TSWAP_ENGINE)')
        engine = 'tswap.so'
    # rank R -> target R mod (number of targets), its run folder
    tmap = [tlist[r % len(tlist)] for r in range(ranks)]
    if emit:
        # A job-library profile: the engine and the swap folder are fio
        # environment variables, every rank in ${TSWAP_ZERO_DIR}/rankR-less
        # DeepSpeed layout (zero_stage_3/optimizer/rankR/...).
        m = too_many_jobs(plan, 'step')
        if m:
            raise usage_error('--emit-jobs %s: the step needs %s' % (emit, m))
        text = job_text(plan, 'step', ['${TSWAP_ZERO_DIR}'] * ranks, DIO_UNIT, scale, '${TSWAP_ENGINE}',
                        emit_header(plan, params, ranks, scale, cfg_path))
        try:
            fd, tmp = tempfile.mkstemp(prefix=os.path.basename(emit) + '.', dir=os.path.dirname(emit) or '.')
        except OSError:
            raise usage_error('--emit-jobs %s: cannot write next to it' % emit) from None
        try:
            with os.fdopen(fd, 'w', encoding='utf-8') as f:
                f.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, emit)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise Exit(EXIT_ERROR, '--emit-jobs %s: writing the profile failed' % emit) from None
        return 0
    dirs = ['%s/tswap-zero-%s' % (t, runid) for t in tmap]
    based = [d + '/base' for d in dirs]
    with open(out + '/step.fio', 'w', encoding='utf-8') as f:
        f.write(job_text(plan, 'step', based, DIO_UNIT, scale, engine,
                         '; tswap-zero: one ZeRO-Infinity step (plan.json in this folder)'))
    with open(out + '/layout.fio', 'w', encoding='utf-8') as f:
        f.write(job_text(plan, 'layout', based, DIO_UNIT, scale, engine,
                         "; tswap-zero: the swap files' initial write"))
    for line in table(plan) + path_notes(plan, tlist):
        say(line)
    say('')
    say('plan: %s/plan.json  jobs: %s/step.fio, %s/layout.fio' % (out, out, out))
    sys.stdout.flush()
    if o['dry']:
        # the files stay, to read; the status is the replay's refusal
        for mode in ('step', 'layout'):
            m = too_many_jobs(plan, mode)
            if m:
                raise usage_error('%s.fio: needs %s' % (mode, m))
        return 0
    return run_replay(home, o, out, plan, cfg, aio, aio_doc, params, world, ranks, pnumel, steps, scale, tmap, dirs,
                      runid, engine)


def _stop(name: str, code: int) -> Any:
    def h(signum: int, frame: Any) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # the clean-up is not cut short
        raise Exit(code, 'interrupted (SIG%s) before the replay: nothing run' % name)
    return h


def main(home: str, argv: list[str]) -> int:
    """tswap-zero ARGS: home is the folder holding tswap/ and lib/ (sweep/
    in a checkout, PREFIX/share/tswap installed)."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # until the replay takes them over (zero_run): end cleanly, so the
    # --out claim and a folder made for it are given back
    for name, code in (('INT', 130), ('TERM', 143), ('HUP', 129)):
        signal.signal(getattr(signal, 'SIG' + name), _stop(name, code))
    try:
        # the entry starts Python with SIGINT blocked: a ^C from here on
        # (one that came meanwhile, too) is _stop's
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        return run(home, argv)
    except Exit as e:
        if e.message:
            sys.stdout.flush()
            # one line whatever a value it quotes holds: control characters escaped
            msg = ''.join(c if ' ' <= c != '\x7f' else '\\n' if c == '\n' else '\\x%02x' % ord(c)
                          for c in e.message)
            print('tswap-zero: %s' % msg, file=sys.stderr)
        return e.code
