# SPDX-License-Identifier: GPL-2.0-only
"""tswap-check's command line (sweep/tswap-check runs main(home, argv)):
the options and their usage errors, the collector run
(lib/meta-collect.sh, a POSIX sh script, waited for), the table on
stdout and the --json and --junit files (tswap.stats.check,
tswap.report.check). docs/sweep.md "Checking a host: tswap-check".

Exit codes: 0 no check failed (ok, warn, n/a); 1 a check failed; 2 usage
error; 3 the stack could not be read, or a file not written.
"""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
from types import MappingProxyType
from typing import Optional

from .. import jqjson
from ..report.check import esc, junit, table
from ..stats.check import Settings, checks

PROG = 'tswap-check'

USAGE = """\
Usage: tswap-check --target PATH [OPTIONS]

Check the storage stack of a DeepSpeed NVMe swap target (its filesystem,
block device queue, NVMe controller, PCIe link or NVMe-oF paths, and the
host's aio, io_uring and memlock limits) against the aio settings a job
uses. Prints one line per check: ok, warn, fail or n/a (does not apply),
with advice and its source for each warn and fail. Reads sysfs and procfs
only: no I/O, no root needed.

  --target PATH        the swap folder or file (nvme_path; need not exist
                       yet) or a block device
  --block-size SIZE    DeepSpeed aio block_size (default 1m, DeepSpeed's)
  --queue-depth N      aio queue_depth, 1 to 999999999 (default 8)
  --threads N          aio intra_op_parallelism, 1 to 1024 (default 1)
  --backend B          libaio (default) or io_uring: io_uring adds the
                       kernel.io_uring_disabled check
  --json FILE          also write the checks as JSON: {target, settings,
                       stack, verdict, counts, checks: [{id, verdict, value,
                       expected, advice, source}]}
  --junit FILE         also write JUnit XML: one testcase per check (fail:
                       <failure>, n/a: <skipped>, warn: passes, its advice
                       in <system-out>)
                       (FILE: replaced through FILE.tmp, through a symlink
                       the file it names; a FIFO or /dev/stdout written
                       into; --json and --junit each their own)
  -h, --help           this help
  --version            the tswap version

Checks (ok unless):
  pcie.link_width           fail: current below (or above) max_link_width
  pcie.link_speed           warn: current below max_link_speed (a slot,
                            riser or firmware limit as often as a fault)
  numa.node                 warn: allowed CPUs off the device's NUMA node
  queue.scheduler           warn: an NVMe queue's scheduler is not none
  queue.max_sectors_kb      warn: a block is split into several requests
  queue.nr_requests         warn: below queue depth x threads x pieces
  fs.type                   fail: ramfs; warn: tmpfs, FUSE, overlay, NFS,
                            ZFS, any whose O_DIRECT is not known good
  fs.mount_options          fail: ro; warn: sync, ext4 data=journal
  sysctl.aio_max_nr         fail: below queue depth x (threads + 1), one
                            handle's io_setup; warn: fewer events free
  sysctl.io_uring_disabled  --backend io_uring only: warn 1, fail 2
  limits.memlock            fail: below queue depth x block x threads,
                            without CAP_IPC_LOCK
  nvmf.transport            n/a unless NVMe over Fabrics
  nvmf.path.CTRL            warn: ANA non-optimized or change; fail:
                            inaccessible, persistent-loss, or not live
  nvmf.iopolicy             warn: numa over several ANA-optimized paths
A value read as garbage or out of its range (a link width above x32, a
CPU list that is not one) makes its check n/a, the advice naming it.

Environment: TSWAP_SYSROOT=DIR reads DIR/sys and DIR/proc instead of /sys
and /proc (fixture trees for tests; default /).

Exit codes: 0 no check failed (ok, warn, n/a); 1 a check failed; 2 usage
error; 3 the stack could not be read.
"""

_SIZE = re.compile(r'0*([0-9]{1,16})([kmgt]?)(i?b?)')
_UINT = re.compile(r'0*([0-9]{1,9})')
_MULT = MappingProxyType({'': 1, 'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30, 't': 1 << 40})


class Exit(Exception):
    """End with status code after printing message (if any) on stderr as
    "tswap-check: MESSAGE"."""

    def __init__(self, code: int, message: Optional[str] = None):
        super().__init__(message)
        self.code, self.message = code, message


def usage_error(msg: str) -> Exit:
    return Exit(2, msg + ' (see --help)')


def size_to_bytes(s: str) -> Optional[int]:
    """fio size notation (binary units: 1m = 1 MiB) to bytes, as
    util.sh size_to_bytes: at most 16 significant digits, below
    2^62 bytes; None otherwise."""
    m = _SIZE.fullmatch(s.lower())
    if not m:
        return None
    n, mult = int(m.group(1)), _MULT[m.group(2)]
    return n * mult if n <= (1 << 62) // mult else None


def dirname(p: str) -> str:
    """dirname(1) of p."""
    p = p.rstrip('/') or ('/' if p.startswith('/') else p)
    if '/' not in p:
        return '.'
    return p[:p.rfind('/')].rstrip('/') or '/'


def stream(f: str) -> bool:
    """f exists and is a FIFO or a character device (after symlinks: a
    pipe, /dev/stdout, /dev/null): written into as it is, never replaced
    by a file."""
    try:
        m = os.stat(f).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(m) or stat.S_ISCHR(m)


def out_file(opt: str, f: str) -> None:
    """f can be written: a FIFO or character device that is writable, or
    a file (new, or an existing regular file, through symlinks) in a
    writable folder."""
    if stream(f):
        if os.access(f, os.W_OK):
            return
        raise usage_error('%s: %s is not writable' % (opt, f))
    if os.path.isdir(f):
        raise usage_error('%s: %s is a folder, not a file' % (opt, f))
    if os.path.exists(f) and not os.path.isfile(f):
        raise usage_error('%s: %s is not a regular file, a FIFO or a character device' % (opt, f))
    d = dirname(os.path.realpath(f) if os.path.islink(f) else f)
    if os.path.isdir(d) and os.access(d, os.W_OK):
        return
    raise usage_error('%s: folder %s does not exist or is not writable' % (opt, d))


def shown(s: str) -> str:
    """A path from the command line or the environment as the documents
    hold it: bytes that are not UTF-8 (Python's surrogate escapes) each
    become U+FFFD, as jq's --arg made them."""
    return os.fsencode(s).decode('utf-8', 'replace')


VALUED = ('--target', '--block-size', '--queue-depth', '--threads', '--backend', '--json', '--junit')


def settings(argv: list[str]) -> Optional[dict[str, str]]:
    """The options as a dict (target, block-size, ...), None for --help
    (a 'version' key for --version); usage errors raise Exit(2)."""
    o = {'target': '', 'block-size': '1m', 'queue-depth': '8', 'threads': '1', 'backend': 'libaio',
         'json': '', 'junit': ''}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ('-h', '--help'):
            return None
        if a == '--version':
            return {'version': ''}
        if a in VALUED:
            if i + 1 >= len(argv):
                raise usage_error('%s: needs a value' % a)
            if a in ('--json', '--junit') and not argv[i + 1]:
                raise usage_error('%s: empty; a file to write' % a)
            o[a[2:]] = argv[i + 1]
            i += 2
            continue
        if a.startswith('--') and '=' in a:
            n = a.split('=', 1)[0]
            raise usage_error('%s: write the value after a blank (%s VALUE)' % (n, n))
        raise usage_error('unknown option: %s' % a)
    if not o['target']:
        raise usage_error('--target: required (the swap folder, file or block device)')
    b = size_to_bytes(o['block-size'])
    if b is None:
        raise usage_error('--block-size: not a size: %s' % o['block-size'])
    if not (b >= 512 and b % 512 == 0):
        raise usage_error('--block-size: must be a positive multiple of 512 bytes (O_DIRECT): %s'
                          % o['block-size'])
    q = _UINT.fullmatch(o['queue-depth'])
    if not q or int(q.group(1)) < 1:
        raise usage_error('--queue-depth: not an integer 1 to 999999999: %s' % o['queue-depth'])
    t = _UINT.fullmatch(o['threads'])
    if not t or not 1 <= int(t.group(1)) <= 1024:
        raise usage_error('--threads: not an integer 1 to 1024: %s' % o['threads'])
    if o['backend'] not in ('libaio', 'io_uring'):
        raise usage_error('--backend: libaio or io_uring, not %s' % o['backend'])
    for opt in ('json', 'junit'):
        if o[opt]:
            out_file('--' + opt, o[opt])
    if o['json'] and o['junit'] and not stream(o['json']) and \
            os.path.realpath(o['json']) == os.path.realpath(o['junit']):
        raise usage_error('--junit: %s is the --json file; give each its own file' % o['junit'])
    root = os.environ.get('TSWAP_SYSROOT', '')
    if root and not os.path.isdir(root):
        raise usage_error('TSWAP_SYSROOT: %s is not a folder' % root)
    o.update({'block-size': str(b), 'queue-depth': str(int(q.group(1))), 'threads': str(int(t.group(1)))})
    return o


def version(home: str) -> str:
    """The release: the Makefile's TSWAP_VERSION in a checkout,
    PREFIX/share/tswap/VERSION when installed."""
    v = 'unknown'
    mk, vf = os.path.join(home, '..', 'Makefile'), os.path.join(home, 'VERSION')
    try:
        if os.path.isfile(mk):
            with open(mk, encoding='utf-8') as f:
                v = '\n'.join(m.group(1) for m in re.finditer(r'^TSWAP_VERSION[ \t]*:=[ \t]*(.*)$', f.read(), re.M))
        elif os.path.isfile(vf):
            with open(vf, encoding='utf-8') as f:
                v = f.read().rstrip('\n')
    except OSError:
        pass
    return 'tswap-check (tswap) %s' % (v or 'unknown')


def collect(home: str, target: str) -> str:
    """lib/meta-collect.sh's lines for target (waited for: no process is
    left behind); Exit(3) when it fails or prints no metadata."""
    try:
        r = subprocess.run(['sh', os.path.join(home, 'lib', 'meta-collect.sh'), target],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, check=False)
    except OSError:
        raise Exit(3, 'the stack of %s could not be read (lib/meta-collect.sh)' % esc(target)) from None
    if r.returncode != 0:
        raise Exit(3, 'the stack of %s could not be read (lib/meta-collect.sh)' % esc(target))
    out = r.stdout.decode('utf-8', 'replace')
    if not out.startswith('tswap-meta'):
        raise Exit(3, 'the stack of %s could not be read (lib/meta-collect.sh printed no metadata)' % esc(target))
    return out


def write_out(path: str, text: str) -> None:
    """text into path: a FIFO or character device (/dev/stdout) written
    into as it is; a file (through symlinks: the file they name) through
    FILE.tmp, so that a failed run leaves the old file."""
    try:
        if stream(path):
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)
            return
    except OSError:
        raise Exit(3, 'cannot write %s' % path) from None
    real = os.path.realpath(path)
    try:
        with open(real + '.tmp', 'w', encoding='utf-8') as f:
            f.write(text)
        os.replace(real + '.tmp', real)
    except OSError:
        try:
            os.unlink(real + '.tmp')
        except OSError:
            pass
        raise Exit(3, 'cannot write %s' % path) from None


def run(home: str, argv: list[str]) -> int:
    o = settings(argv)
    if o is None:
        sys.stdout.write(USAGE)
        return 0
    if 'version' in o:
        print(version(home))
        return 0
    s = Settings(float(o['block-size']), float(o['queue-depth']), float(o['threads']), o['backend'])
    doc = checks(collect(home, o['target']), s, shown(o['target']), shown(os.environ.get('TSWAP_SYSROOT', '')))
    sys.stdout.write(''.join(line + '\n' for line in table(doc)))
    sys.stdout.flush()
    if o['json']:
        write_out(o['json'], jqjson.dumps(doc) + '\n')
    if o['junit']:
        write_out(o['junit'], ''.join(line + '\n' for line in junit(doc)))
    return 1 if doc['verdict'] == 'fail' else 0


def main(home: str, argv: list[str]) -> int:
    """tswap-check ARGS: home is the folder holding lib/meta-collect.sh."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # the entry starts Python with SIGINT blocked: a ^C from then on ends it
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        return run(home, argv)
    except Exit as e:
        if e.message:
            print('%s: %s' % (PROG, e.message), file=sys.stderr)
        return e.code
