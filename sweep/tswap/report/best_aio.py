# SPDX-License-Identifier: GPL-2.0-only
"""best-aio.json: DeepSpeed's aio keys from the trustworthy libaio pick.

docs/deepspeed.md gives the keys and docs/sweep.md exit code 4 the
untrusted form. The aio block has exactly the keys the DeepSpeed release
(--ds-version) reads, and "deepspeed_versions" states the releases it is
for (PEP 440 specifiers), from deepspeed/runtime/swap_tensor/constants.py
and aio_config.py (get_aio_config) at each release tag:

- v0.3.15: the aio section appears (thread_count, no use_gds);
- v0.15.0: use_gds (commit 5f0d177fd, "DeepNVMe GDS");
- v0.16.4: thread_count renamed intra_op_parallelism (commit c9da4892a).

get_aio_config reads its keys with get_scalar_param, which ignores any
other key: an older release given intra_op_parallelism silently runs one
thread, hence one key set per range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .fmt import alt

UNTRUSTED = ('every libaio point with a result is flagged (above the ceiling, failed, '
             'CV or not steady: report.md says which); no config is given')


@dataclass(frozen=True)
class KeySet:
    """The aio keys of a range of DeepSpeed releases: range (PEP 440),
    threads (the key of the intra-op thread count), gds (use_gds read)."""
    range: str
    threads: str
    gds: bool


def version(ds: str) -> list[float]:
    """--ds-version (MAJOR.MINOR[.PATCH], checked by args.sh) as
    [major, minor, patch]; "" is the newest release."""
    if ds == '':
        return [999999.0, 0.0, 0.0]
    return ([float(x) for x in ds.split('.')] + [0.0, 0.0, 0.0])[:3]


def key_set(ds: str) -> KeySet:
    """The key set DeepSpeed release ds reads (module docstring)."""
    v = version(ds)
    if v >= [0, 16, 4]:
        return KeySet('>=0.16.4', 'intra_op_parallelism', True)
    if v >= [0, 15, 0]:
        return KeySet('>=0.15.0,<0.16.4', 'thread_count', True)
    return KeySet('>=0.3.15,<0.15.0', 'thread_count', False)


def best_aio(agg: dict[str, Any], ds: str = '') -> dict[str, Any]:
    """best-aio.json's document from aggregate.json: {deepspeed_versions,
    aio: {block_size (bytes), queue_depth, THREADS, single_submit,
    overlap_events[, use_gds]}, reason: the pick's verdict} from
    .best.aio_source; {trusted: false, reason} when libaio points have
    results but none is trustworthy; {} without a libaio result."""
    k = key_set(ds)
    b = (agg.get('best') or {}).get('aio_source')
    if b is not None:
        aio = {'block_size': b.get('block'), 'queue_depth': b.get('qd'),
               k.threads: b.get('threads'),
               'single_submit': b.get('submit') == 'single',
               'overlap_events': b.get('window') == 'overlap'}
        if k.gds:
            aio['use_gds'] = False
        return {'deepspeed_versions': k.range, 'aio': aio, 'reason': b.get('verdict')}
    if alt((agg.get('trust') or {}).get('libaio_with_result'), 0) > 0:
        return {'trusted': False, 'reason': UNTRUSTED}
    return {}
