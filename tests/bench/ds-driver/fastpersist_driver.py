#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""fastpersist_driver.py - one checkpoint through DeepSpeed's own FastFileWriter.

The outside truth for jobs/fastpersist-checkpoint.fio (docs/performance.md,
"FastPersist checkpoint writes"): DeepSpeed >= 0.17.1's FastFileWriter
(deepspeed/io/fast_file_writer.py), unmodified, from a DeepSpeed source
tree (--ds-src), on its async_io op built with Debian's python3-torch.

Build (--build-only), as DeepSpeed's AsyncIOBuilder.load does on a host
without a GPU (op_builder/cpu/async_io.py): the pin_memory op first
(op_builder/pin_memory.py, pin_memory_load.py: jit_load, then loaded
RTLD_GLOBAL so async_io finds the process-wide pinned-tensor manager),
then async_io, both through OpBuilder.jit_load and
torch.utils.cpp_extension.load into --ext-dir.  What differs from a pip
install, and why:
  - the `ninja` Python module is a stand-in (jit_load only imports it;
    torch runs Debian's ninja-build binary);
  - torch < 2.1 on the CPU builder: AsyncIOBuilder.cxx_args removes
    '-std=c++17' to add '-std=c++14', but CPUOpBuilder.cxx_args never adds
    it (a ValueError): '-std=c++17' is added first, so the list is the one
    DeepSpeed means (the "torch 1.13 patch", the same as ds_py_driver.py's);
  - OpBuilder.load is bypassed for jit_load (load imports the whole
    deepspeed package only to ask whether the op was pre-built).

Run: FastFileWriter imported from --ds-src/deepspeed/io without importing
the deepspeed package (its __init__ needs pydantic 2, hjson and more),
with two stand-ins it imports but a torch.save never calls
(deepspeed.ops.op_builder.UtilsBuilder, used by
save_torch_storage_object_list; deepspeed.accelerator, used by
_convert_to_byte_tensors) and deepspeed.utils.logger, a Python logger
(the op's write-endurance warning).  The handle: aio_handle(block, qd, single,
overlap, threads), as writer_factory.py _setup_for_aio builds it from the
ds_config aio section; the pinned buffer: handle.new_cpu_locked_tensor of
--io-buffer-size bytes, as ds_io's torch_fastio_engine.py gets it
(create_page_locked_tensor) -- writer_factory.py's
torch.zeros(...).pin_memory() needs CUDA.  Then what
FastCheckpointEngine.save does (runtime/checkpoint_engine/
fast_checkpoint_engine.py): torch.save(obj=state, f=writer,
_use_new_zipfile_serialization=True), then writer.close()
(release_writer).  The state: one uint8 tensor of --payload bytes of
--pattern bytes.  The file (--file) must not exist: FastFileWriter opens
it without O_TRUNC.

--warm BYTES: that much new memory touched and freed just before the
timed run (memwarm.py says why; the ratio's fio side gets the same).

--mode write: the same writer, the tensor's bytes written with one
writer.write(ndarray) and close(), no torch.save: FastFileWriter.write's
own copy (utils.py bytes_to_tensor, numpy.array), the fills, the drains,
the tail and the fsync, without the zip serialization.  The file is
--payload bytes.

Result (--json): file_bytes (what torch.save wrote), mode, payload,
io_buffer, double, threads, alignment (handle.get_alignment()), the writer's stats
(aio_bytes, slow_bytes, ...), seconds, torch.
Exit 0; 1 on a failed build or write; 2 on bad usage; 4 when torch
cannot be imported.
"""

import argparse
import importlib
import json
import os
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memwarm  # noqa: E402

EXIT_FAIL, EXIT_USAGE, EXIT_SKIP = 1, 2, 4


def die(code, msg):
    print(f"fastpersist_driver: {msg}", file=sys.stderr)
    sys.exit(code)


def size(text):
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: not an integer")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text}: must be positive")
    return value


def size_or_zero(text):
    return 0 if text.strip() == "0" else size(text)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ds-src", required=True, help="DeepSpeed (>= 0.17.1) source tree")
    p.add_argument("--ext-dir", required=True, help="torch extensions directory")
    p.add_argument("--build-only", action="store_true")
    p.add_argument("--file")
    p.add_argument("--json", required=True)
    p.add_argument("--payload", type=size, default=64 << 20, help="bytes of the saved tensor")
    p.add_argument("--io-buffer-size", type=size, default=64 << 20,
                   help="checkpoint.writer.io_buffer_size")
    p.add_argument("--double", type=int, choices=[0, 1], default=1,
                   help="checkpoint.writer.io_buffer_double")
    p.add_argument("--block", type=size, default=1 << 20, help="aio.block_size")
    p.add_argument("--qd", type=size, default=8, help="aio.queue_depth")
    p.add_argument("--single", type=int, choices=[0, 1], default=0, help="aio.single_submit")
    p.add_argument("--overlap", type=int, choices=[0, 1], default=1, help="aio.overlap_events")
    p.add_argument("--threads", type=size, default=1, help="aio.intra_op_parallelism")
    p.add_argument("--pattern", type=int, default=0x5A)
    p.add_argument("--mode", choices=["save", "write"], default="save",
                   help="save: torch.save into the writer; write: writer.write of the bytes")
    p.add_argument("--warm", type=size_or_zero, default=0,
                   help="bytes of new memory touched and freed just before the timed run "
                        "(memwarm.py; default 0)")
    a = p.parse_args(argv)
    if not a.build_only and not a.file:
        die(EXIT_USAGE, "--file is required")
    return a


def build(torch, ds_src, ext_dir):
    os.environ["TORCH_EXTENSIONS_DIR"] = ext_dir
    import importlib.util
    if importlib.util.find_spec("ninja") is None:
        sys.modules["ninja"] = types.ModuleType("ninja")
    sys.path.insert(0, ds_src)
    import ctypes
    from op_builder.pin_memory import PinMemoryBuilder
    from op_builder.cpu.builder import CPUOpBuilder
    from op_builder.cpu.async_io import AsyncIOBuilder
    major, minor = map(int, torch.__version__.split(".")[0:2])
    if not (major >= 2 and minor >= 1):
        base = CPUOpBuilder.cxx_args
        CPUOpBuilder.cxx_args = lambda self: base(self) + ["-std=c++17"]
    pin = PinMemoryBuilder().jit_load(verbose=False)
    ctypes.CDLL(pin.__file__, mode=ctypes.RTLD_GLOBAL)
    return AsyncIOBuilder().jit_load(verbose=False)


def load_built(ext_dir):
    """The two ops a --build-only left in ext_dir (torch imported)."""
    import ctypes
    import importlib.machinery
    import importlib.util
    mods = {}
    for name in ("pin_memory", "async_io"):
        so = os.path.join(ext_dir, name, f"{name}.so")
        if not os.path.exists(so):
            die(EXIT_FAIL, f"no {so}: run with --build-only first")
        if name == "pin_memory":
            ctypes.CDLL(so, mode=ctypes.RTLD_GLOBAL)
        loader = importlib.machinery.ExtensionFileLoader(name, so)
        spec = importlib.util.spec_from_loader(name, loader)
        mods[name] = importlib.util.module_from_spec(spec)
        loader.exec_module(mods[name])
    return mods["async_io"]


def import_writer(ds_src):
    """deepspeed.io.fast_file_writer from ds_src, the package's __init__
    files not run; the two modules it imports but torch.save never uses
    are stand-ins."""
    def package(name, path=None):
        m = types.ModuleType(name)
        if path:
            m.__path__ = [path]
        sys.modules[name] = m
        return m

    package("deepspeed", os.path.join(ds_src, "deepspeed"))
    package("deepspeed.io", os.path.join(ds_src, "deepspeed", "io"))
    package("deepspeed.ops")
    ob = package("deepspeed.ops.op_builder")

    class UtilsBuilder:  # only save_torch_storage_object_list uses its op
        def load(self):
            return types.SimpleNamespace(cast_to_byte_tensor=None)

    ob.UtilsBuilder = UtilsBuilder
    acc = package("deepspeed.accelerator")
    # The op's one-time write-endurance warning (deepspeed_aio_op_desc.cpp
    # warn_consumer_ssd_writes) logs through deepspeed.utils.logger.
    import logging
    package("deepspeed.utils").logger = logging.getLogger("DeepSpeed")
    acc.get_accelerator = lambda: types.SimpleNamespace(device_name=lambda: "cpu")
    return importlib.import_module("deepspeed.io.fast_file_writer")


def main(argv):
    a = parse(argv)
    a.ds_src = os.path.abspath(a.ds_src)
    a.ext_dir = os.path.abspath(a.ext_dir)
    try:
        import torch
    except ImportError as e:
        die(EXIT_SKIP, f"python3-torch is not importable ({e}): make deps-bench-deepspeed")
    if a.build_only:
        os.makedirs(a.ext_dir, exist_ok=True)
        build(torch, a.ds_src, a.ext_dir)
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"torch": torch.__version__}, f)
            f.write("\n")
        return 0
    if os.path.exists(a.file):
        die(EXIT_USAGE, f"--file {a.file}: exists; FastFileWriter opens without O_TRUNC, remove it first")
    op = load_built(a.ext_dir)
    ffw = import_writer(a.ds_src)
    handle = op.aio_handle(a.block, a.qd, bool(a.single), bool(a.overlap), a.threads)
    pinned = handle.new_cpu_locked_tensor(a.io_buffer_size, torch.empty(0, dtype=torch.uint8))
    state = {"w": torch.full((a.payload,), a.pattern & 0xFF, dtype=torch.uint8)}
    config = ffw.FastFileWriterConfig(dnvme_handle=handle, pinned_tensor=pinned, double_buffer=bool(a.double))
    data = state["w"].numpy() if a.mode == "write" else None
    memwarm.warm(a.warm)
    t0 = time.monotonic()
    writer = ffw.FastFileWriter(file_path=a.file, config=config)
    if a.mode == "write":
        writer.write(data)
    else:
        torch.save(obj=state, f=writer, _use_new_zipfile_serialization=True)
    writer.close()
    t1 = time.monotonic()
    stats = dict(writer._stats)
    del writer
    handle.free_cpu_locked_tensor(pinned)
    res = {"file_bytes": os.path.getsize(a.file), "mode": a.mode, "payload": a.payload, "io_buffer": a.io_buffer_size,
           "double": a.double, "threads": a.threads, "alignment": handle.get_alignment(),
           "seconds": round(t1 - t0, 6), "warm": a.warm, "torch": torch.__version__,
           "stats": {k: v for k, v in stats.items() if isinstance(v, (int, float))}}
    with open(a.json, "w", encoding="utf-8") as f:
        json.dump(res, f)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
