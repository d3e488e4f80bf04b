# SPDX-License-Identifier: GPL-2.0-only
"""tswap.plan.deepspeed: one test per DeepSpeed release fact, each naming
the DeepSpeed file and function it was read from (git tags v0.3.15 to
v0.19.5) and the first release it holds in."""
import pytest

from tswap.plan.deepspeed import (NEWEST, TUNE_KEYS, ReleaseError, aio_block,
                                  handle_alignment, parse, pread_fits, release,
                                  swap_alignment)


def test_versions_parse_numerically_and_empty_is_the_newest():
    assert parse('') == NEWEST == (0, 19, 5)
    assert parse('0.17') == (0, 17, 0)
    assert parse('0.10') > parse('0.9.5')


@pytest.mark.parametrize('ds,rule', [
    ('0.19.6', 'newer than 0.19.5, the newest release tswap knows'),
    ('0.20', 'newer than 0.19.5'),
    ('1.0.0', 'newer than 0.19.5'),
    ('0.3.14', 'has no aio section (it appears in 0.3.15)'),
    ('0.16.04', 'not a DeepSpeed release MAJOR.MINOR[.PATCH]'),
    ('v0.16.4', 'not a DeepSpeed release'),
    ('0.15.0\n0.16', 'not a DeepSpeed release'),
    # a patch DeepSpeed never tagged (its last of 0.17 is v0.17.6)
    ('0.17.99', 'DeepSpeed 0.17.99 is no release: 0.17 has 0.17.0 to 0.17.6'),
    ('0.4.99', 'no release: 0.4 has 0.4.0 to 0.4.5'),
    ('0.3.17', 'no release: 0.3 has 0.3.0 to 0.3.16'),
    ('0.18.10', 'no release: 0.18 has 0.18.0 to 0.18.9'),
])
def test_an_unknown_release_is_refused_in_one_line_naming_the_option(ds, rule):
    with pytest.raises(ReleaseError) as e:
        release(ds)
    msg = str(e.value)
    assert msg.startswith('--ds-version: ') and rule in msg and '\n' not in msg


def test_every_tagged_release_from_the_aio_section_is_known():
    # DeepSpeed's git tags v0.3.15..v0.19.5, each minor's last patch: all
    # accepted, none refused as an unknown patch
    last = {3: 16, 4: 5, 5: 10, 6: 7, 7: 7, 8: 3, 9: 5, 10: 3, 11: 2, 12: 6, 13: 5, 14: 5, 15: 4,
            16: 9, 17: 6, 18: 9, 19: 5}
    for minor, patch in last.items():
        for p in range(15 if minor == 3 else 0, patch + 1):
            assert release('0.%d.%d' % (minor, p)).version == (0, minor, p)


@pytest.mark.parametrize('ds,keys,rng', [
    # aio_config.py get_aio_config / AIO_DEFAULT_DICT: from v0.3.15
    ('0.3.15', ('block_size', 'queue_depth', 'thread_count', 'single_submit', 'overlap_events'),
     '>=0.3.15,<0.15.0'),
    ('0.14.5', ('block_size', 'queue_depth', 'thread_count', 'single_submit', 'overlap_events'),
     '>=0.3.15,<0.15.0'),
    # + use_gds, v0.15.0 (#5852, 5f0d177fd)
    ('0.15.0', ('block_size', 'queue_depth', 'thread_count', 'single_submit', 'overlap_events',
                'use_gds'), '>=0.15.0,<0.16.4'),
    # thread_count renamed intra_op_parallelism, v0.16.4 (#7056, c9da4892a);
    # aio_config.py and constants.py unchanged from v0.16.4 to v0.19.5
    ('0.16.4', ('block_size', 'queue_depth', 'intra_op_parallelism', 'single_submit',
                'overlap_events', 'use_gds'), '>=0.16.4'),
    ('0.19.5', ('block_size', 'queue_depth', 'intra_op_parallelism', 'single_submit',
                'overlap_events', 'use_gds'), '>=0.16.4'),
])
def test_aio_keys_read_by_get_aio_config(ds, keys, rng):
    r = release(ds)
    assert (r.keys, r.key_range) == (keys, rng)


def test_the_emitted_block_has_exactly_the_keys_in_their_order_with_json_types():
    # the block best-aio.json writes: integers and JSON booleans, as
    # get_scalar_param returns them to aio_handle
    assert aio_block(release('0.19.5'), 1048576, 32, 4, False, True) == {
        'block_size': 1048576, 'queue_depth': 32, 'intra_op_parallelism': 4,
        'single_submit': False, 'overlap_events': True, 'use_gds': False}
    assert list(aio_block(release('0.14'), 1, 2, 3, True, False)) == list(release('0.14').keys)


def test_ds_nvme_tune_prints_num_threads_and_string_booleans():
    # deepspeed/nvme/perf_generate_param.py convert_to_param, v0.15.2 to v0.19.5
    assert TUNE_KEYS == ('single_submit', 'overlap_events', 'num_threads', 'queue_depth', 'block_size')
    assert 'num_threads' not in release('0.19.5').keys


def test_swap_tensors_are_padded_to_1024_bytes_per_thread_in_every_release():
    # swap_tensor/utils.py AIO_ALIGNED_BYTES x threads:
    # optimizer_utils.py OptimizerSwapper.__init__,
    # partitioned_param_swapper.py AsyncPartitionedParameterSwapper._configure_aio
    assert swap_alignment(1) == 1024 and swap_alignment(8) == 8192


def test_get_alignment_is_threads_times_512_from_0_17_1():
    # csrc/aio/py_lib/deepspeed_py_io_handle.cpp deepspeed_io_handle_t::get_alignment,
    # added in v0.17.1 (#7215, 24a1d8f93): _intra_op_parallelism * O_DIRECT_ALIGNMENT
    assert handle_alignment(release('0.17.0'), 4) is None
    assert handle_alignment(release('0.17.1'), 4) == 2048
    assert handle_alignment(release('0.19.5'), 8) == 4096


def test_pread_asserts_offset_plus_buffer_within_the_file_from_0_17_1():
    # deepspeed_py_io_handle.cpp is_valid_bytes_to_read, from
    # deepspeed_io_handle_t::pread since v0.17.1 (#7215); v0.16.4's pread:
    # "buffer can exceed file size to enable 4k alignment"
    assert pread_fits(release('0.17.0'), 4096, 8192, 8192)
    assert not pread_fits(release('0.17.1'), 4096, 8192, 8192)
    assert pread_fits(release('0.19.5'), 0, 8192, 8192)


def test_swap_buffers_from_new_cpu_locked_tensor_from_0_19_4():
    # swap_tensor/utils.py SwapBufferManager.__init__: aio_handle.new_cpu_locked_tensor
    # from v0.19.4 (#8212, e1d6b4fe4); before, accelerator pin_memory(torch.zeros())
    assert not release('0.19.3').locked_swap_buffers
    assert release('0.19.4').locked_swap_buffers


def test_offload_pin_memory_defaults_to_true_from_0_19_5():
    # runtime/zero/offload_config.py DeepSpeedZeroOffloadParamConfig and
    # DeepSpeedZeroOffloadOptimizerConfig pin_memory, v0.19.5 (#8207, 7dfa67aea)
    assert not release('0.19.4').pin_memory
    assert release('0.19.5').pin_memory
    assert release('').pin_memory


@pytest.mark.parametrize('ds,grid', [
    ('0.15.1', ''),                   # no deepspeed/nvme yet
    ('0.15.2', 'deepspeed'),          # perf_run_sweep.py DEFAULT_SWEEP_CONFIG: 8 points
    ('0.17.0', 'deepspeed'),
    ('0.17.1', 'deepspeed-0.17'),     # 64 points (#7215)
    ('0.19.5', 'deepspeed-0.17'),
])
def test_ds_nvme_tune_default_sweep_per_release(ds, grid):
    assert release(ds).tune_grid == grid


def test_the_checkpoint_writer_reads_the_aio_section_from_0_17_1():
    # runtime/model_checkpointing/writer_factory.py _setup_for_aio (#7215)
    assert not release('0.17.0').checkpoint_writer
    assert release('0.17.1').checkpoint_writer
