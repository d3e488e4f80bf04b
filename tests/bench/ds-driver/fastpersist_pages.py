#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""fastpersist_pages.py - DeepSpeed's FastFileWriter drains, by what the file's pages are.

docs/performance.md, "GB/s on tmpfs": one GiB through v0.19.5's writer
(fast_file_writer.py, unmodified, on the op fastpersist_driver.py built;
aio_handle(1 MiB, 8, block, overlap, 8 threads), a 64 MiB double buffer),
then one JSON line: the seconds, the writer's write_secs, its drains'
GB/s (aio_bytes / aio_write_secs) and fill seconds.  MODE:
  new        a new file, one write() of a 1 GiB ndarray (what --mode write
             of fastpersist_driver.py runs: write() copies it first,
             utils.py bytes_to_tensor);
  pre        the same into a file of 1 GiB written (buffered) first: the
             writer's O_DIRECT writes land in tmpfs pages that exist;
  small      a new file, 16 write()s of a 64 MiB ndarray;
  smallhold  small, with 2 GiB of the process's memory touched and held.
--warm BYTES: that much new memory touched and freed (memwarm.py) just
before the writer starts, in any mode.
Usage: fastpersist_pages.py --ds-src DIR --ext-dir DIR --file PATH
  [--warm BYTES] MODE
(PATH is deleted first and after).  Exit 0, 2 on bad usage.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fastpersist_driver as drv  # noqa: E402
import memwarm  # noqa: E402

GIB = 1 << 30


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ds-src", required=True)
    p.add_argument("--ext-dir", required=True)
    p.add_argument("--file", required=True)
    p.add_argument("--warm", type=drv.size_or_zero, default=0)
    p.add_argument("mode", choices=["new", "pre", "small", "smallhold"])
    a = p.parse_args(argv)
    import numpy
    import torch
    op = drv.load_built(os.path.abspath(a.ext_dir))
    ffw = drv.import_writer(os.path.abspath(a.ds_src))
    reps = 16 if a.mode.startswith("small") else 1
    data = torch.full((GIB // reps,), 0x5A, dtype=torch.uint8).numpy()
    hold = numpy.ones(2 * GIB, dtype=numpy.uint8) if a.mode == "smallhold" else None
    handle = op.aio_handle(1 << 20, 8, False, True, 8)
    pinned = handle.new_cpu_locked_tensor(64 << 20, torch.empty(0, dtype=torch.uint8))
    if os.path.exists(a.file):
        os.unlink(a.file)
    if a.mode == "pre":
        fd = os.open(a.file, os.O_WRONLY | os.O_CREAT, 0o600)
        chunk = bytes(64 << 20)
        for _ in range(GIB // len(chunk)):
            os.write(fd, chunk)
        os.close(fd)
    config = ffw.FastFileWriterConfig(dnvme_handle=handle, pinned_tensor=pinned, double_buffer=True)
    memwarm.warm(a.warm)
    t0 = time.monotonic()
    writer = ffw.FastFileWriter(file_path=a.file, config=config)
    for _ in range(reps):
        writer.write(data)
    writer.close()
    t1 = time.monotonic()
    st = dict(writer._stats)
    del writer, hold
    handle.free_cpu_locked_tensor(pinned)
    os.unlink(a.file)
    print(json.dumps({"mode": a.mode, "warm": a.warm, "seconds": round(t1 - t0, 3),
                      "write_secs": round(st["write_secs"], 3),
                      "drain_gbs": round(st["aio_bytes"] / st["aio_write_secs"] / 1e9, 3),
                      "fill_secs": round(st["fill_buffer_secs"], 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
