# SPDX-License-Identifier: GPL-2.0-only
"""tswap.report.best_aio: best-aio.json's key set per DeepSpeed release
(tswap.plan.deepspeed: deepspeed/runtime/swap_tensor/constants.py and
aio_config.py get_aio_config at each tag) and its three forms
(docs/deepspeed.md, docs/sweep.md exit code 4)."""
import pytest

from tswap.plan.deepspeed import ReleaseError
from tswap.report.best_aio import UNTRUSTED, best_aio

SRC = {'block': 1048576.0, 'qd': 8.0, 'threads': 2.0, 'submit': 'block',
       'window': 'overlap', 'verdict': 'a is the best'}


@pytest.mark.parametrize('ds,rng,threads,gds', [
    ('', '>=0.16.4', 'intra_op_parallelism', True),      # the newest known, 0.19.5
    ('0.19.5', '>=0.16.4', 'intra_op_parallelism', True),
    ('0.16.4', '>=0.16.4', 'intra_op_parallelism', True),  # c9da4892a renamed thread_count
    ('0.17', '>=0.16.4', 'intra_op_parallelism', True),
    ('0.16.3', '>=0.15.0,<0.16.4', 'thread_count', True),
    ('0.16', '>=0.15.0,<0.16.4', 'thread_count', True),    # 0.16 is 0.16.0
    ('0.15.0', '>=0.15.0,<0.16.4', 'thread_count', True),  # 5f0d177fd added use_gds
    ('0.14.5', '>=0.3.15,<0.15.0', 'thread_count', False),  # 0.14's last
    ('0.3.15', '>=0.3.15,<0.15.0', 'thread_count', False),
])
def test_key_set_per_release_range(ds, rng, threads, gds):
    doc = best_aio({'best': {'aio_source': SRC}}, ds)
    assert doc['deepspeed_versions'] == rng
    aio = doc['aio']
    assert list(aio) == ['block_size', 'queue_depth', threads, 'single_submit',
                         'overlap_events'] + (['use_gds'] if gds else [])


def test_a_release_newer_than_the_newest_known_is_refused():
    # 0.100 is minor 100, not 0.1: newer than 0.19.5
    with pytest.raises(ReleaseError, match='--ds-version: DeepSpeed 0.100 is newer than 0.19.5'):
        best_aio({'best': {'aio_source': SRC}}, '0.100')


def test_aio_block_from_the_pick():
    doc = best_aio({'best': {'aio_source': dict(SRC, submit='single', window='serial')}})
    assert doc == {'deepspeed_versions': '>=0.16.4',
                   'aio': {'block_size': 1048576.0, 'queue_depth': 8.0, 'intra_op_parallelism': 2.0,
                           'single_submit': True, 'overlap_events': False, 'use_gds': False},
                   'reason': 'a is the best'}


def test_untrusted_when_libaio_results_are_all_flagged():
    # docs/sweep.md: exit 4, best-aio.json without an aio block
    assert best_aio({'best': {}, 'trust': {'libaio_with_result': 2.0}}) == \
        {'trusted': False, 'reason': UNTRUSTED}


def test_empty_without_a_libaio_result():
    assert best_aio({'best': {}, 'trust': {'libaio_with_result': 0.0}}) == {}
    assert best_aio({}) == {}
