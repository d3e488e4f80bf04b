#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""ds_py_driver.py - DeepSpeed's async_io op driven from Python, as users run it.

For tests/bench/tswap-bench-deepspeed's python side (docs/performance.md).
The op is built the way DeepSpeed v0.16.4 builds it at run time: the
AsyncIOBuilder of the accelerator DeepSpeed would pick on this host
(accelerator/real_accelerator.py get_accelerator: the CUDA one when torch
sees a GPU, else the CPU one, op_builder/cpu/async_io.py), its sources and
flags, through its OpBuilder.jit_load and torch.utils.cpp_extension.load
(ninja, into --ext-dir; a build whose sources and flags have not changed
is reused).  Two stand-ins, both for what a pip install would provide:
  - the `ninja` Python module (a PyPI wheel that ships the binary): jit_load
    only imports it; torch runs the ninja binary (Debian's ninja-build);
  - torch < 2.1 on the CPU builder: AsyncIOBuilder.cxx_args swaps
    '-std=c++17' for '-std=c++14', but CPUOpBuilder.cxx_args never adds
    '-std=c++17' (a ValueError in v0.16.4): the flag is added first, so
    the list is the one DeepSpeed means (-std=c++14, as torch 1.13 adds too).
The flags the build used are read back from its build.ninja (--build-only
writes them to --json).  A run loads the op with --load jit (DeepSpeed's
jit_load, which also compiles a test program and asks ninja: seconds per
process) or, by default, --load built: the extension module that build left
in --ext-dir, imported after torch (the same async_io.so, in a second).

The loop is ds_io's (deepspeed/nvme/ds_aio_handle.py): one handle
aio_handle(block_size, queue_depth, single_submit, overlap_events,
intra_op_parallelism) (pre_handle), one buffer of --tensor bytes, and per
operation pread(buffer, file, validate=False, async=True, offset) or pwrite,
`assert ret != -1`, then wait() (main_parallel_read/_write), tensors in
file order from offset 0, wrapping at --size (fio's rw=read/write with
bs=TENSOR).  --buffer locked takes the buffer from the handle's
new_cpu_locked_tensor (page-locked: cpu_op_desc_t does I/O on it
directly); --buffer plain is a torch.empty CPU tensor, which is what the
swappers get from the CPU accelerator's pin_memory (it returns the tensor
unpinned): cpu_op_desc_t then allocates, mlocks and frees a bounce buffer
per operation (deepspeed_cpu_op.cpp _alloc_bounce_buffer) and copies
through it.  --pool 1 runs the loop as ds_io does, in a
multiprocessing.Pool(1) worker started with 'spawn', with a Barrier wait
after every operation (_aio_handle_tasklet).  Writes send the 32-bit
--pattern, most significant byte first (fio's buffer_pattern); --check
compares every tensor read with it.

Result: one JSON object in --json: ops, bytes, seconds (the whole loop),
gbs (bytes / seconds / 1e9), task_seconds and task_gbs (the sum of each
operation's pread..wait, ds_io's "Task ... Speed" but in 10^9 bytes),
cpu_s (user + system CPU of the process, every thread, over the loop),
check_errors, buffer, bounce, builder, cflags; op_us (per operation:
microseconds in pread and in wait) with --op-times; dev_reqs and
dev_sectors (the requests of the loop's direction that --dev NAME completed
during the loop, and their 512-byte sectors: /proc/diskstats) with --dev.
Exit 0; 1 on a failed call, build or check; 2 on bad usage (one line on
stderr); 4 when torch cannot be imported (the reason on stderr).
"""

import argparse
import json
import os
import re
import resource
import sys
import time
import types

EXIT_FAIL, EXIT_USAGE, EXIT_SKIP = 1, 2, 4


class DriverError(Exception):
    """One line for stderr and the exit status; raised, not exited, so that
    it crosses the Pool worker (--pool 1) to the parent."""

    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code


def fail(code, msg):
    raise DriverError(code, msg)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        fail(EXIT_USAGE, f"{message} (see --help)")


def nonneg(text):
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: not an integer")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text}: negative")
    return value


def parse(argv):
    p = Parser(description=__doc__.split("\n")[0])
    p.add_argument("--ds-src", required=True, help="DeepSpeed source tree")
    p.add_argument("--ext-dir", required=True, help="torch extensions directory (the build's cache)")
    p.add_argument("--build-only", action="store_true",
                   help="build (or reuse) the op; its builder and flags in --json")
    p.add_argument("--file")
    p.add_argument("--json")
    p.add_argument("--rw", choices=["read", "write"], default="read")
    p.add_argument("--tensor", type=nonneg, default=0, help="bytes per operation")
    p.add_argument("--size", type=nonneg, default=0, help="bytes of the file the tensors cycle over")
    p.add_argument("--block", type=nonneg, default=1 << 20)
    p.add_argument("--qd", type=nonneg, default=8)
    p.add_argument("--single", type=int, choices=[0, 1], default=0)
    p.add_argument("--overlap", type=int, choices=[0, 1], default=1)
    p.add_argument("--threads", type=nonneg, default=1, help="intra_op_parallelism")
    p.add_argument("--runtime", type=nonneg, default=0, help="seconds")
    p.add_argument("--ops", type=nonneg, default=0)
    p.add_argument("--pattern", type=nonneg, default=0)
    p.add_argument("--check", action="store_true")
    p.add_argument("--buffer", choices=["locked", "plain"], default="locked")
    p.add_argument("--pool", type=int, choices=[0, 1], default=0)
    p.add_argument("--op-times", action="store_true")
    p.add_argument("--dev", help="block device name in /proc/diskstats whose requests to count")
    p.add_argument("--load", choices=["built", "jit"], default="built",
                   help="import the op --build-only built (default), or jit_load it again")
    a = p.parse_args(argv)
    if not a.json:
        p.error("--json is required")
    if a.build_only:
        return a
    if not a.file:
        p.error("--file is required")
    if a.tensor <= 0 or a.size < a.tensor or a.size % a.tensor:
        p.error("--size must be a positive multiple of --tensor")
    if a.block <= 0 or a.block >= 1 << 31 or a.qd <= 0 or a.threads <= 0:
        p.error("--block, --qd and --threads must be positive (block < 2 GiB)")
    if a.tensor % a.threads:
        p.error("--tensor must be divisible by --threads (DeepSpeed's _is_valid_parallel_aio_op)")
    if (a.runtime > 0) == (a.ops > 0):
        p.error("give exactly one of --runtime and --ops")
    return a


def import_torch():
    try:
        import torch  # noqa: F401
    except ImportError as e:
        fail(EXIT_SKIP, f"python3-torch is not importable ({e}): make deps-bench-deepspeed")
    return torch


def load_op(torch, ds_src, ext_dir):
    """DeepSpeed's async_io op, JIT-built as its OpBuilder.jit_load does."""
    os.environ["TORCH_EXTENSIONS_DIR"] = ext_dir
    try:
        import ninja  # noqa: F401
    except ImportError:
        sys.modules["ninja"] = types.ModuleType("ninja")
    sys.path.insert(0, ds_src)
    use_cuda = torch.cuda.is_available() and torch.cuda.device_count() > 0
    if use_cuda:
        from op_builder.async_io import AsyncIOBuilder
        builder_name = "op_builder/async_io.py"
    else:
        from op_builder.cpu.builder import CPUOpBuilder
        from op_builder.cpu.async_io import AsyncIOBuilder
        builder_name = "op_builder/cpu/async_io.py"
        major, minor = map(int, torch.__version__.split(".")[0:2])
        if not (major >= 2 and minor >= 1):
            base = CPUOpBuilder.cxx_args
            CPUOpBuilder.cxx_args = lambda self: base(self) + ["-std=c++17"]
    # DeepSpeed's messages (and the op's) go to stdout, as in a real run;
    # ours never do: the bench sends stdout to /dev/null.
    op = AsyncIOBuilder().jit_load(verbose=False)
    cflags = ""
    ninja_file = os.path.join(ext_dir, "async_io", "build.ninja")
    with open(ninja_file, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^cflags = (.*)$", line)
            if m:
                cflags = m.group(1)
    with open(os.path.join(ext_dir, "async_io", "ds_py_driver.json"), "w", encoding="utf-8") as f:
        json.dump({"builder": builder_name, "cflags": cflags}, f)
    return op, builder_name, cflags


def load_built(ext_dir):
    """The op the last jit_load built in ext_dir (torch must be imported)."""
    import importlib.machinery
    import importlib.util
    d = os.path.join(ext_dir, "async_io")
    try:
        with open(os.path.join(d, "ds_py_driver.json"), encoding="utf-8") as f:
            meta = json.load(f)
        loader = importlib.machinery.ExtensionFileLoader("async_io", os.path.join(d, "async_io.so"))
        spec = importlib.util.spec_from_loader("async_io", loader)
        op = importlib.util.module_from_spec(spec)
        loader.exec_module(op)
    except (OSError, ImportError, ValueError) as e:
        fail(EXIT_FAIL, f"--load built: no op built in {d} ({e}): run with --build-only first")
    return op, meta["builder"], meta["cflags"]


def dev_requests(name, rw):
    """(requests, 512-byte sectors) of direction rw that block device name
    completed so far (/proc/diskstats), or None without name."""
    if not name:
        return None
    with open("/proc/diskstats", encoding="ascii") as f:
        for line in f:
            x = line.split()
            if x[2] == name:
                return (int(x[3]), int(x[5])) if rw == "read" else (int(x[7]), int(x[9]))
    fail(EXIT_USAGE, f"--dev {name}: not in /proc/diskstats")
    return None


def pattern_tensor(torch, a):
    pat = [(a.pattern >> s) & 0xFF for s in (24, 16, 8, 0)]
    return torch.tensor(pat, dtype=torch.uint8).repeat(a.tensor // 4 + 1)[: a.tensor].contiguous()


def run_loop(a, barrier=None):
    """The timed loop; returns the result dict.  Runs in the Pool worker
    with --pool 1 (ds_io's pre_handle and main tasks run there too)."""
    torch = import_torch()
    if a.load == "jit":
        op, builder_name, cflags = load_op(torch, a.ds_src, a.ext_dir)
    else:
        op, builder_name, cflags = load_built(a.ext_dir)
    handle = op.aio_handle(a.block, a.qd, bool(a.single), bool(a.overlap), a.threads)
    if a.buffer == "locked":
        buf = handle.new_cpu_locked_tensor(a.tensor, torch.empty(0, dtype=torch.uint8))
    else:
        buf = torch.empty(a.tensor, dtype=torch.uint8)
    expect = pattern_tensor(torch, a)
    buf.copy_(expect)
    nslots = a.size // a.tensor
    ops = bad = 0
    task_s = 0.0
    op_us = []
    dev0 = dev_requests(a.dev, a.rw)
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.monotonic()
    while True:
        off = (ops % nslots) * a.tensor
        s = time.monotonic()
        if a.rw == "read":
            ret = handle.pread(buf, a.file, False, True, off)
        else:
            ret = handle.pwrite(buf, a.file, False, True, off)
        if ret == -1:
            fail(EXIT_FAIL, f"operation {ops} at offset {off}: {a.rw} returned -1")
        m = time.monotonic()
        done = handle.wait()
        e = time.monotonic()
        if done != 1:
            fail(EXIT_FAIL, f"operation {ops} at offset {off}: wait() returned {done}")
        task_s += e - s
        ops += 1
        if a.check and a.rw == "read":
            if not torch.equal(buf, expect):
                bad += 1
            buf.zero_()
        if barrier is not None:
            barrier.wait()
        if a.op_times:
            op_us.append([round((m - s) * 1e6), round((e - m) * 1e6)])
        if (ops >= a.ops) if a.ops else (time.monotonic() - t0 >= a.runtime):
            break
    t1 = time.monotonic()
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    dev1 = dev_requests(a.dev, a.rw)
    cpu_s = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    if a.buffer == "locked":
        handle.free_cpu_locked_tensor(buf)
    nbytes = ops * a.tensor
    res = {"ops": ops, "bytes": nbytes, "seconds": round(t1 - t0, 6),
           "gbs": round(nbytes / (t1 - t0) / 1e9, 6) if t1 > t0 else 0,
           "task_seconds": round(task_s, 6),
           "task_gbs": round(nbytes / task_s / 1e9, 6) if task_s > 0 else 0,
           "cpu_s": round(cpu_s, 6), "check_errors": bad, "buffer": a.buffer, "bounce": a.buffer == "plain",
           "pool": a.pool, "builder": builder_name, "cflags": cflags}
    if a.dev:
        res["dev_reqs"], res["dev_sectors"] = dev1[0] - dev0[0], dev1[1] - dev0[1]
    if a.op_times:
        res["op_us"] = op_us
    return res


def _init_tasklet(b):
    global POOL_BARRIER
    POOL_BARRIER = b


def _tasklet(a):
    return run_loop(a, POOL_BARRIER)


def main(argv):
    a = parse(argv)
    a.ds_src = os.path.abspath(a.ds_src)
    a.ext_dir = os.path.abspath(a.ext_dir)
    if a.build_only:
        torch = import_torch()
        _, builder_name, cflags = load_op(torch, a.ds_src, a.ext_dir)
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"builder": builder_name, "cflags": cflags, "torch": torch.__version__}, f)
            f.write("\n")
        return 0
    if a.pool:
        import multiprocessing as mp
        mp.set_start_method("spawn")
        b = mp.Barrier(1)
        with mp.Pool(processes=1, initializer=_init_tasklet, initargs=(b,)) as p:
            res = p.map(_tasklet, [a])[0]
    else:
        res = run_loop(a)
    with open(a.json, "w", encoding="utf-8") as f:
        json.dump(res, f)
        f.write("\n")
    return 1 if res["check_errors"] else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except DriverError as err:
        print(f"ds_py_driver: {err}", file=sys.stderr)
        sys.exit(err.code)
