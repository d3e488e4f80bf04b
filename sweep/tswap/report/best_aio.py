# SPDX-License-Identifier: GPL-2.0-only
"""best-aio.json: DeepSpeed's aio keys from the trustworthy libaio pick.

docs/deepspeed.md gives the keys and docs/sweep.md exit code 4 the
untrusted form. The aio block has exactly the keys the DeepSpeed release
(--ds-version, "" for the newest tswap knows) reads, and
"deepspeed_versions" states the releases with that key set (PEP 440):
tswap.plan.deepspeed holds both, with their sources (aio_config.py
get_aio_config at each tag). get_aio_config reads its keys with
get_scalar_param, which ignores any other key: an older release given
intra_op_parallelism silently runs one thread, hence one key set per
range.
"""

from __future__ import annotations

from typing import Any

from ..plan.deepspeed import aio_block, release
from .fmt import alt

UNTRUSTED = ('every libaio point with a result is flagged (above the link or the ceiling, failed, '
             'CV or not steady: report.md says which); no config is given')


def best_aio(agg: dict[str, Any], ds: str = '') -> dict[str, Any]:
    """best-aio.json's document from aggregate.json: {deepspeed_versions,
    aio: {block_size (bytes), queue_depth, THREADS, single_submit,
    overlap_events[, use_gds]}, reason: the pick's verdict} from
    .best.aio_source; {trusted: false, reason} when libaio points have
    results but none is trustworthy; {} without a libaio result."""
    r = release(ds)
    b = (agg.get('best') or {}).get('aio_source')
    if b is not None:
        aio = aio_block(r, b.get('block'), b.get('qd'), b.get('threads'),
                        b.get('submit') == 'single', b.get('window') == 'overlap')
        return {'deepspeed_versions': r.key_range, 'aio': aio, 'reason': b.get('verdict')}
    if alt((agg.get('trust') or {}).get('libaio_with_result'), 0) > 0:
        return {'trusted': False, 'reason': UNTRUSTED}
    return {}
