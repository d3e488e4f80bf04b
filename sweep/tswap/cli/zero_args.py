# SPDX-License-Identifier: GPL-2.0-only
"""tswap-zero's command line before the run: --help's text, the options
(options) and every refusal they meet before --out is claimed (check:
one-line usage errors, exit 2, each naming the option and the rule; the
inputs they name are read and checked by zero_inputs, --emit-jobs's file
by zero_emit). The run: zero_main. docs/zero-infinity.md."""

from __future__ import annotations

import os
import time
from typing import Any, Optional

from ..plan.deepspeed import ReleaseError
from ..plan.zero_release import zero_release
from .zero_common import ZeroArgs, logical_cwd, usage_error
from .zero_emit import check_emit
from .zero_inputs import MAX_TENSORS, check_path, parse_count, read_aio, read_numels, same_folder_key, split_targets
from .zero_run import check_target

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

_VALUED = ('--ds-config', '--params', '--ranks', '--world', '--param-numel', '--param-numels', '--target', '--steps',
           '--out', '--aio', '--scale', '--step', '--dtype', '--emit-jobs', '--ds-version')


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


def check(home: str, o: dict[str, Any]) -> ZeroArgs:
    """options' o checked, in the order the refusals are reported (the
    required options, the numbers, --step, --dtype, --ds-version, the
    targets, --aio's file, --emit-jobs's), with --out's default (home's
    ../build/zero/RUNID in a checkout, else ./tswap-zero-RUNID)."""
    for k in ('ds-config', 'params', 'ranks'):
        if not o[k] and not (k == 'params' and o['param-numels']):
            raise usage_error('--%s: required' % k)
    emit = o['emit-jobs']
    targets = 'emit' if emit else o['target']
    if not targets:
        raise usage_error('--target: required')
    numels = None
    if o['param-numels']:
        if o['param-numel']:
            raise usage_error('--param-numel and --param-numels: give one of them (a size for every tensor, or '
                              'each tensor\'s)')
        numels = read_numels(o['param-numels'])
        total = int(sum(numels))
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
    nt = len(numels) if numels else (params + pnumel - 1) // pnumel
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
        release = zero_release(o['ds-version'] or '')
    except ReleaseError as e:
        raise usage_error(str(e)) from None
    tlist = _targets(targets, ranks, o['dry'] or bool(emit))
    aio = o['aio']
    aio_doc = read_aio(aio) if aio else None
    runid = '%s-%d' % (time.strftime('%Y%m%d-%H%M%S'), os.getpid())
    out = o['out']
    if not out:
        script = os.path.join(home, '..')
        out = '%s/build/zero/%s' % (script, runid) if os.path.isdir(script + '/build') else './tswap-zero-' + runid
    if emit:
        check_emit(emit)
    return ZeroArgs(cfg_path=o['ds-config'], params=params, world=world, ranks=ranks, pnumel=pnumel, numels=numels,
                    steps=steps, scale=scale, step=o['step'], dtype=o['dtype'], release=release, targets=tlist,
                    aio=aio, aio_doc=aio_doc, out=out, runid=runid, emit=emit, dry=o['dry'], keep=o['keep'],
                    ceiling=o['ceiling'])


def _targets(targets: str, ranks: int, no_run: bool) -> tuple[str, ...]:
    """--target's comma-separated folders, absolute (from the logical
    working directory), each once and at most ranks of them; each one
    checked as a place for a run folder unless no_run (--dry-run,
    --emit-jobs)."""
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
        if not no_run:
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
    return tuple(tlist)
