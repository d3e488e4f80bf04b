#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""memwarm.py - touch BYTES of new anonymous memory, then free it.

Why (docs/performance.md, "GB/s on tmpfs"): on a VM whose balloon has
free page reporting, memory the guest freed is returned to the host
within seconds (/sys/module/page_reporting/parameters/reported_kib
grows), and the next first touch of it faults into the host: 0.56-1.8
GB/s here against 2.7-2.9 for memory freed a moment before.  Which side of
a ratio meets such pages depends on how much new memory it touches
before its writes (DeepSpeed's writer copies the tensor first), not on
the writer.  Touching and freeing BYTES just before a timed run leaves
that many bytes of backed pages on the guest's free lists for it,
unless the guest reports them again first: it narrows the spread
(docs/performance.md), it does not remove it.

warm(nbytes): an anonymous private mapping of nbytes, every page
written, unmapped.  nbytes: a non-negative integer, 0 does nothing.
As a command: memwarm.py BYTES; exit 0, 2 on bad usage (not an
integer, negative), 1 when the mapping fails (ENOMEM).
"""

import mmap
import sys

CHUNK = 64 << 20


def warm(nbytes: int) -> None:
    if nbytes <= 0:
        return
    m = mmap.mmap(-1, nbytes)
    try:
        zeros = bytes(min(CHUNK, nbytes))
        left = nbytes
        while left > 0:
            left -= m.write(zeros[:left])
    finally:
        m.close()


def main(argv: list) -> int:
    if len(argv) != 1:
        print("usage: memwarm.py BYTES", file=sys.stderr)
        return 2
    try:
        nbytes = int(argv[0], 0)
    except ValueError:
        nbytes = -1
    if nbytes < 0:
        print(f"memwarm.py: BYTES {argv[0]}: a non-negative integer", file=sys.stderr)
        return 2
    try:
        warm(nbytes)
    except (OSError, ValueError) as e:
        print(f"memwarm.py: {nbytes} bytes: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
