# SPDX-License-Identifier: GPL-2.0-only
"""tswap-sweep's command line: --help's text and the options (docs/sweep.md
"Options"); each value's syntax and which options go together are
tswap.cli.sweep_checks'. A bad option is a Refusal (exit 2) naming the
option and the rule, as the shell sweep said it (args.sh before the
port)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, fields, replace
from types import MappingProxyType

from ..plan.values import shown, undecodable, usage
from .sweep_checks import checked

USAGE = """Usage: tswap-sweep [OPTIONS]

Run a grid of tswap fio jobs against a file or block device and report the
best tensor-swap settings, as a table, plots and a DeepSpeed "aio" config.

Target and sizes
  --target PATH        file or block device (default: build/scratch/tswap.swap
                       in the checkout, ./tswap-scratch.swap when installed);
                       several, comma separated: ranks go round-robin over them
  --size SIZE          bytes of the target to use (default: the grid's size,
                       else 1g; capped at a block device's size)
  --engine PATH        tswap.so (default: $TSWAP_ENGINE, build/tswap.so in
                       the checkout, or PREFIX/lib/fio/tswap.so)

Grid
  --grid NAME|FILE     quick (default), deepspeed, deepspeed-0.17,
                       deepspeed-full, full, or a grid file (format:
                       docs/sweep.md)
  --list-grids         print the built-in grids and exit
  --workload NAME      tensor (default: tensor swaps, the grid's rw), or
                       checkpoint: one file of --size bytes written per
                       point as DeepSpeed's FastFileWriter (>= 0.17.1)
                       writes a checkpoint, sweeping io_buffer_size x
                       io_buffer_double x the aio block (default grid
                       checkpoint); writes best-checkpoint.json (the
                       checkpoint.writer and aio blocks). Not with --rw
                       other than write, --ranks, --backend, --tensor-size,
                       --io-size, --budget, --hosts (docs/sweep.md)
  --rw LIST            directions, comma separated: read,write,readwrite
                       (readwrite: a read and a write handle at once)
  --ranks LIST         swappers at once, each its own handle and file, e.g.
                       1,2,4 (default 1)
  --backend LIST       libaio,io_uring
  --tensor-size LIST   tensor sizes (fio bs), e.g. 64m,400m
  --runtime SEC        seconds per point, time based (default: the grid's)
  --ramp SEC           ramp seconds before each point is measured
  --io-size SIZE       bytes per point and handle instead of a runtime (no
                       ramp); at least the largest tensor size
  --repeat N           run every point N times, 1-100 (median and CV in the report)
  --no-ceiling         skip the fio libaio device-ceiling runs
  --fixed-runtime      run every point for the whole runtime: no fio
                       steady-state detection (default: steadystate=bw_slope:2%,
                       ss_dur=5 s, capped by the runtime, when the runtime is
                       at least ramp + 7 s; a point that never attains it is
                       flagged "not steady")
  --precondition       before the first write point, write the target
                       sequentially twice (fio libaio, direct, 1m blocks);
                       default for write points on a block device
  --no-precondition    do not precondition
  --budget SEC         end within SEC seconds of wall time (whole seconds):
                       successive halving: every point short, the faster
                       half of each direction goes on, measured twice as
                       long, until 2 are left, measured with 3 repeats
                       (docs/sweep.md "Budget"); refused when SEC cannot
                       run every point once (the minimum is said). Default
                       for a grid whose exhaustive run would take more
                       than an hour (said on stderr)
  --exhaustive         every point, every repeat, never a default budget

Run directory
  --out DIR            run directory (default: build/sweep/DATE-TIME in the
                       checkout, ./tswap-sweep-DATE-TIME when installed)
  --resume DIR         finish an interrupted run in DIR without redoing
                       finished points (the run's own settings are used)
  --compare DIR        also write compare.md: this run against run DIR, per
                       point, with the ratio (--resume NEW --compare OLD
                       compares two finished runs)
  --dry-run            print the points and their job files; run nothing

Pass/fail
  --min-read-gbs X     exit 1 unless the best read reaches X GB/s (1e9 B/s,
                       X > 0)
  --min-write-gbs X    exit 1 unless the best write reaches X GB/s

DeepSpeed
  --ds-version X       best-aio.json with the aio keys DeepSpeed X reads
                       (MAJOR.MINOR[.PATCH], 0.3.15 to 0.19.5): thread_count
                       before 0.16.4, intra_op_parallelism from it; use_gds
                       from 0.15.0 (default: 0.19.5)

Safety
  --destructive        allow writes to a block device (destroys its data)
  --force              with --destructive: write even to a device that is
                       mounted, in use (held, claimed, a loop device on
                       it), or holds a filesystem or partition table
                       signature, or to a file a loop device is on

Fleet (docs/fleet.md)
  --hosts FILE         run every point on all hosts of FILE at once through
                       fio's client mode (`fio --server` on each host); one
                       host per line: HOST[,PORT] [target=PATH] [engine=PATH]
                       [name=LABEL] [FIO_OPTION=VALUE...]
                       --target is the default target path on the hosts;
                       --engine defaults to PREFIX/lib/fio/tswap.so
                       (/usr/local/lib/fio/tswap.so from a checkout)
  --outlier-pct N      flag hosts more than N% below the fleet median
                       (default 20)
  --connect-timeout S  seconds for a host to answer the probe (default 10)
  --host-timeout S     seconds a host may take for a point beyond its ramp
                       and runtime (default 120)
  --fio-version VER    fio version every host must run (default: this
                       machine's `fio --version`)
  --junit FILE         also copy the JUnit XML (RUN/junit.xml) to FILE

  --emit-jobs DIR      write the grid as fio job files DIR/GRID-DIR.fio
                       (used by `make jobs`) and exit
  -q, --quiet          no progress lines on stderr (results still on stdout)
  --version            print the tswap, engine and fio versions and exit
  -h, --help           this help

Exit codes: 0 pass; 1 threshold missed (fleet: a host below the bar or an
outlier); 2 usage error or refused target; 3 run error (a point failed, a
host failed or was unreachable, fio or the engine missing); 4 no trustworthy
point (every point with a result is flagged: above the ceiling, failed, CV,
not steady; best-aio.json then has no aio block); 128 + the signal when
stopped by one (130 SIGINT, 143 SIGTERM, 129 SIGHUP; finished points are
kept: --resume DIR).

Every run records what it measured (device, firmware, hashed serial, PCIe
link, NUMA node, I/O scheduler and queue limits, filesystem, host and
versions) in RUN/meta.json, sweep.json, aggregate.json and report.md.
"""

# options that take a value; those marked change the run's settings (not
# allowed with --resume, which uses the run's own)
_VALUED = ('--target', '--size', '--grid', '--rw', '--ranks', '--backend', '--tensor-size',
           '--runtime', '--ramp', '--io-size', '--repeat', '--out', '--resume',
           '--min-read-gbs', '--min-write-gbs', '--compare', '--engine', '--emit-jobs',
           '--hosts', '--outlier-pct', '--connect-timeout', '--host-timeout', '--junit',
           '--fio-version', '--ds-version', '--budget', '--workload')
_SETTINGS = frozenset(('--target', '--size', '--grid', '--rw', '--ranks', '--backend',
                       '--tensor-size', '--runtime', '--ramp', '--io-size', '--repeat', '--out',
                       '--engine', '--hosts', '--budget', '--workload'))
_FIELD = MappingProxyType({'--target': 'target', '--size': 'size', '--grid': 'grid', '--rw': 'rw_opt',
          '--ranks': 'ranks_opt', '--backend': 'backend_opt', '--tensor-size': 'tensor_opt',
          '--runtime': 'runtime', '--ramp': 'ramp', '--io-size': 'io_size',
          '--repeat': 'repeat', '--out': 'out', '--resume': 'resume',
          '--min-read-gbs': 'min_read', '--min-write-gbs': 'min_write', '--compare': 'compare',
          '--engine': 'engine', '--emit-jobs': 'emit_dir', '--hosts': 'hosts_file',
          '--outlier-pct': 'outlier_pct', '--connect-timeout': 'connect_timeout',
          '--host-timeout': 'host_timeout', '--junit': 'junit_out', '--fio-version': 'fio_want',
          '--ds-version': 'ds_version', '--budget': 'budget', '--workload': 'workload'}).get
_FLAGS = MappingProxyType({'--dry-run': ('dry_run', 0), '--exhaustive': ('exhaustive', 1), '-q': ('quiet', 0),
          '--quiet': ('quiet', 0), '--destructive': ('destructive', 0),
          '--force': ('force', 0), '--fixed-runtime': ('fixed_runtime', 1)}).get
_EMPTY = MappingProxyType({'--target': '--target: an empty path', '--out': '--out: an empty path',
          '--emit-jobs': '--emit-jobs: an empty path',
          '--min-read-gbs': '--min-read-gbs: empty; a positive number of GB/s (1e9 B/s, e.g. 2.5)',
          '--min-write-gbs': '--min-write-gbs: empty; a positive number of GB/s (1e9 B/s, e.g. 2.5)',
          '--ds-version': '--ds-version: empty; a DeepSpeed release MAJOR.MINOR[.PATCH]'
                          ' (e.g. 0.16.4)',
          '--budget': "--budget: not a positive whole number of seconds: ''"}).get


# values that are paths or lists: no newline (the run reads them by lines)
_LISTS = frozenset(('--rw', '--ranks', '--backend', '--tensor-size'))
_ONE_LINE = _LISTS | frozenset(('--target', '--out', '--resume', '--compare', '--engine',
                                '--emit-jobs', '--hosts', '--junit', '--grid'))


@dataclass(frozen=True)
class Options:
    """The command line, values as given (strings; "" when not given; the
    numbers normalised as the shell did: --runtime 007 is "7"); flags
    are bools. action: "" for a sweep, else "help", "version" or
    "list-grids" (met before anything else was refused: it runs and exits
    0). settings_seen: an option that changes the run's settings was given
    (refused with --resume)."""
    action: str = ''
    target: str = ''
    size: str = ''
    grid: str = 'quick'
    rw_opt: str = ''
    backend_opt: str = ''
    tensor_opt: str = ''
    ranks_opt: str = ''
    runtime: str = ''
    ramp: str = ''
    io_size: str = ''
    repeat: str = ''
    out: str = ''
    resume: str = ''
    dry_run: bool = False
    min_read: str = ''
    min_write: str = ''
    compare: str = ''
    destructive: bool = False
    force: bool = False
    engine: str = ''
    ceiling: bool = True
    emit_dir: str = ''
    settings_seen: bool = False
    fixed_runtime: bool = False
    precondition: str = 'auto'
    quiet: bool = False
    ds_version: str = ''
    budget: str = ''
    exhaustive: bool = False
    hosts_file: str = ''
    outlier_pct: str = ''
    connect_timeout: str = ''
    host_timeout: str = ''
    junit_out: str = ''
    fio_want: str = ''
    workload: str = 'tensor'


def _out_dir(val: str) -> str:
    """--out: a symlink stands for the directory it names (readlink -m:
    its canonical path, loops and missing parts as that tool has them),
    under the same rule (new or empty)."""
    v = val.rstrip('/')
    if not (v and os.path.islink(v)):
        return val
    r = subprocess.run(['readlink', '-m', '--', v], stdout=subprocess.PIPE, check=False)
    if r.returncode:
        raise usage('--out %s: a symlink that does not resolve' % v)
    return os.fsdecode(r.stdout).rstrip('\n')


def parse(argv: list[str]) -> Options:
    """The options of argv, refused (Refusal) as the shell sweep refused
    them: in order of the command line, then the rules between options
    (args.sh parse_args); --help, --version and --list-grids end the
    parse where they stand. --out's symlink is resolved here."""
    o = Options()
    args = list(argv)
    i = 0
    grid_seen = False
    while i < len(args):
        opt = args[i]
        if opt.startswith('--') and '=' in opt:
            opt, val = opt.split('=', 1)
            args[i:i + 1] = [opt, val]
        flag = _FLAGS(opt)
        if opt in ('-h', '--help', '--version', '--list-grids'):
            return replace(o, action={'--version': 'version',
                                      '--list-grids': 'list-grids'}.get(opt, 'help'))
        elif flag:
            o = replace(o, **{flag[0]: True}, settings_seen=o.settings_seen or bool(flag[1]))
        elif opt == '--no-ceiling':
            o = replace(o, ceiling=False, settings_seen=True)
        elif opt in ('--precondition', '--no-precondition'):
            v = 'on' if opt == '--precondition' else 'off'
            if o.precondition not in ('auto', v):
                raise usage('--precondition and --no-precondition exclude each other')
            o = replace(o, precondition=v, settings_seen=True)
        elif opt in _VALUED:
            if i + 1 >= len(args):
                raise usage('%s needs a value' % opt)
            i += 1
            val = args[i]
            if not val:
                # a CI's unset variable: --resume "" would start a new run,
                # --hosts "" run here, --compare "" compare nothing
                raise usage(_EMPTY(opt) or '%s: empty; give a value or leave the option out'
                            % opt)
            if '\n' in val and opt in _ONE_LINE:
                # the shell read such a path or list up to its newline: another one
                raise usage('%s: a newline in %s: %s' % (opt, 'the list' if opt in _LISTS
                                                         else 'the path', val))
            if opt in _ONE_LINE and opt not in _LISTS and undecodable(val):
                raise usage("%s %s: not UTF-8 text; the run's JSON documents keep paths as"
                            " UTF-8: rename it" % (opt, shown(val)))
            if opt == '--out':
                val = _out_dir(val)
            o = replace(o, **{_FIELD(opt): val},
                        settings_seen=o.settings_seen or opt in _SETTINGS)
            grid_seen = grid_seen or opt == '--grid'
        else:
            raise usage("unknown argument '%s'" % opt)
        i += 1
    if o.workload == 'checkpoint' and not grid_seen:
        o = replace(o, grid='checkpoint')
    return checked(o)


# the options the run reads (their state.sh names: the field's, upper case)
_HANDED_NOT = frozenset(('action', 'grid', 'rw_opt', 'backend_opt', 'tensor_opt', 'ranks_opt',
                         'emit_dir', 'settings_seen'))


def declared(o: Options) -> tuple[tuple[str, str], ...]:
    """The options the run reads as the shell's globals (state.sh),
    NAME and text, for the hand-over (flags "1"/"0")."""
    return tuple((f.name.upper(), ('1' if v else '0') if isinstance(v, bool) else v)
                 for f in fields(o) if f.name not in _HANDED_NOT
                 for v in (getattr(o, f.name),))
