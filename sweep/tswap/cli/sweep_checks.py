# SPDX-License-Identifier: GPL-2.0-only
"""tswap-sweep's option values: each value's syntax and which options go
together, in parse_args' order after its loop (docs/sweep.md "Options";
tswap.cli.sweep_args parses the command line into Options, then
checked). A bad value or combination is a Refusal (exit 2) naming the
option and the rule, as the shell sweep said it (args.sh before the
port)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from ..plan.deepspeed import ReleaseError, release
from ..plan.values import REPEAT_MAX, SECS_MAX, is_number, is_uint, size_to_bytes, usage

if TYPE_CHECKING:
    from .sweep_args import Options


def checked(o: Options) -> Options:
    """o's values and the rules between options checked (_check), then
    --workload's (_workload): o with the numbers normalised."""
    return _workload(_check(o))


def _gbs(opt: str, v: str) -> None:
    if v and not (is_number(v) and re.search('[1-9]', v)):
        raise usage('%s: not a positive number of GB/s (1e9 B/s, e.g. 2.5): %s' % (opt, v))


def _secs_max(opt: str, v: str) -> None:
    if re.fullmatch('[0-9]+', v) and (not re.fullmatch('0*[0-9]{1,6}', v) or int(v) > SECS_MAX):
        raise usage('%s: at most %d s (a week): %s' % (opt, SECS_MAX, v))


def _positive(v: str) -> bool:
    return is_uint(v) and int(v) >= 1


def _ds_version(v: str) -> None:
    part = '(0|[1-9][0-9]{0,3})'
    if not re.fullmatch(r'%s\.%s(\.%s)?' % (part, part, part), v):
        raise usage('--ds-version: not a DeepSpeed release MAJOR.MINOR[.PATCH] (e.g. 0.16.4): %s'
                    % v.replace('\n', '\\n'))
    # from 0.3.15 (the aio section) to the newest known: tswap.plan.deepspeed
    try:
        release(v)
    except ReleaseError as e:
        raise usage(str(e)) from None


def _workload(o: Options) -> Options:
    """--workload: tensor or checkpoint, and what checkpoint excludes
    (one file, written through one aio handle, once per repeat)."""
    if o.workload not in ('tensor', 'checkpoint'):
        raise usage("--workload: tensor or checkpoint, not '%s'" % o.workload.replace('\n', '\\n'))
    if o.workload != 'checkpoint':
        return o
    if o.rw_opt and set(re.split('[, ]+', o.rw_opt.strip(', '))) != {'write'}:
        raise usage('--workload checkpoint writes a file: --rw %s (only write)' % o.rw_opt)
    for opt, v in (('--ranks', o.ranks_opt), ('--backend', o.backend_opt),
                   ('--tensor-size', o.tensor_opt), ('--io-size', o.io_size),
                   ('--budget', o.budget), ('--hosts', o.hosts_file),
                   ('--emit-jobs', o.emit_dir)):
        if v:
            raise usage('--workload checkpoint: no %s (one file of --size bytes, libaio,'
                        ' once per repeat)' % opt)
    try:
        if not release(o.ds_version).checkpoint_writer:
            raise usage('--workload checkpoint: DeepSpeed %s has no FastFileWriter (from 0.17.1)'
                        % o.ds_version)
    except ReleaseError as e:
        raise usage(str(e)) from None
    return o


def _check(o: Options) -> Options:
    """The values' syntax and the rules between options (parse_args'
    checks after the loop, in its order)."""
    _gbs('--min-read-gbs', o.min_read)
    _gbs('--min-write-gbs', o.min_write)
    for opt, v in (('--runtime', o.runtime), ('--budget', o.budget), ('--ramp', o.ramp)):
        _secs_max(opt, v)
    if o.runtime and not _positive(o.runtime):
        raise usage('--runtime: not a positive integer: %s' % o.runtime)
    if o.budget and not _positive(o.budget):
        raise usage('--budget: not a positive whole number of seconds: %s' % o.budget)
    o = replace(o, budget=str(int(o.budget)) if o.budget else '',
                runtime=str(int(o.runtime)) if o.runtime else '')
    if o.budget and o.exhaustive:
        raise usage('--budget and --exhaustive exclude each other')
    if o.ramp and not is_uint(o.ramp):
        raise usage('--ramp: not an integer: %s' % o.ramp)
    o = replace(o, ramp=str(int(o.ramp)) if o.ramp else '')
    if o.repeat:
        if not re.fullmatch('[0-9]+', o.repeat):
            raise usage('--repeat: not a positive integer: %s' % o.repeat)
        if not re.fullmatch('0*[0-9]{1,3}', o.repeat) or int(o.repeat) > REPEAT_MAX:
            raise usage('--repeat: at most %d passes over the grid: %s' % (REPEAT_MAX, o.repeat))
        if int(o.repeat) < 1:
            raise usage('--repeat: not a positive integer: %s' % o.repeat)
    if o.io_size:
        b = size_to_bytes(o.io_size)
        if b is None:
            raise usage('--io-size: not a size: %s' % o.io_size)
        if b == 0:
            raise usage('--io-size: must not be 0')
    if o.ds_version:
        _ds_version(o.ds_version)
    if o.size and size_to_bytes(o.size) is None:
        raise usage('--size: not a size: %s' % o.size)
    if o.io_size and o.runtime:
        raise usage('--runtime and --io-size exclude each other')
    if o.outlier_pct and not (is_number(o.outlier_pct) and re.fullmatch(
            r'0*([0-9]{0,2}([.][0-9]+)?|100([.]0+)?)', o.outlier_pct)):
        raise usage('--outlier-pct: not a percentage from 0 to 100: %s' % o.outlier_pct)
    for opt, v in (('--connect-timeout', o.connect_timeout), ('--host-timeout', o.host_timeout)):
        if v and not _positive(v):
            raise usage('%s: not a positive integer: %s' % (opt, v))
    if o.resume and o.settings_seen:
        raise usage('--resume uses the run\'s own settings (and hosts); only --min-read-gbs,'
                    ' --min-write-gbs, --ds-version, --compare, --dry-run, --destructive, --force'
                    ' and the fleet options --outlier-pct, --connect-timeout, --host-timeout,'
                    ' --fio-version, --junit go with it')
    if o.precondition == 'on' and o.hosts_file:
        raise usage('--precondition: not in fleet mode (--hosts): precondition each host\'s'
                    ' target before the sweep')
    if o.emit_dir and o.hosts_file:
        raise usage("--emit-jobs writes the grid's job files; it takes no --hosts")
    if not o.hosts_file and not o.resume and any(
            (o.outlier_pct, o.connect_timeout, o.host_timeout, o.junit_out, o.fio_want)):
        raise usage('--outlier-pct, --connect-timeout, --host-timeout, --fio-version and --junit'
                    ' need --hosts (fleet mode)')
    if o.force and not o.destructive:
        raise usage('--force only means something with --destructive')
    return o
