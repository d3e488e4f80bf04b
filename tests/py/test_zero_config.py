# SPDX-License-Identifier: GPL-2.0-only
"""tswap.plan.zero_schema: a ds_config checked as DeepSpeed v0.16.4's
pydantic models check it (runtime/config_utils.py DeepSpeedConfigModel,
runtime/zero/config.py DeepSpeedZeroConfig, runtime/zero/offload_config.py)
and its aio block against the tswap engine's limits."""
import math

import pytest

from tswap.plan.zero_config import PlanError
from tswap.plan.zero_schema import check


def zero(**kw):
    return {'zero_optimization': dict({'stage': 3.0}, **kw)}


def refused(cfg, text):
    with pytest.raises(PlanError) as e:
        check(cfg)
    assert text in str(e.value), str(e.value)
    assert '\n' not in str(e.value)


def test_unknown_keys_are_extra_fields():
    # config_utils.py DeepSpeedConfigModel: extra="forbid"
    refused(zero(buffer_cnt=4.0), 'zero_optimization.buffer_cnt: extra fields not permitted')
    refused(zero(offload_optimizer={'device': 'nvme', 'pipeline': True}),
            'zero_optimization.offload_optimizer.pipeline: extra fields not permitted')


def test_aliases_and_field_names_are_both_accepted():
    # zero/config.py: Field(alias="stage3_max_reuse_distance"), populate_by_name=True
    check(zero(stage3_max_reuse_distance=0.0, max_reuse_distance=0.0, stage3_prefetch_bucket_size=0.0))


def test_the_device_enum_is_case_sensitive():
    # offload_config.py OffloadDeviceEnum
    refused(zero(offload_param={'device': 'NVMe'}), 'not one of "none", "cpu", "nvme"')


def test_stage_is_zero_to_three():
    # zero/config.py ZeroStageEnum
    for v in (4.0, math.inf, -1.0, 2.5, '3', None):
        refused(zero(stage=v), 'not a ZeRO stage 0, 1, 2 or 3')
    refused(zero(stage=math.inf), 'zero_optimization.stage = Infinity')


def test_ints_are_whole_finite_and_in_range():
    # pydantic int; Field(ge=0)
    refused(zero(sub_group_size=1.5), 'not a whole number')
    refused(zero(sub_group_size=math.inf), 'not a finite number')
    refused(zero(offload_param={'buffer_count': -1.0}), 'must be at least 0')
    refused(zero(reduce_bucket_size='5e8'), 'not an integer')
    check(zero(mics_shard_size=-1.0))


def test_auto_is_dropped_with_a_note_per_key():
    # config_utils.py DeepSpeedConfigModel.__init__: {k: v ... if v != "auto"}
    out, notes = check(zero(reduce_bucket_size='auto', offload_param={'buffer_size': 'auto', 'device': 'nvme'}))
    assert 'reduce_bucket_size' not in out['zero_optimization']
    assert 'buffer_size' not in out['zero_optimization']['offload_param']
    assert notes == ('zero_optimization.reduce_bucket_size = "auto": DeepSpeed drops it and takes the default 5e8 '
                     '(runtime/config_utils.py DeepSpeedConfigModel)',
                     'zero_optimization.offload_param.buffer_size = "auto": DeepSpeed drops it and takes the '
                     'default 1e8 (runtime/config_utils.py DeepSpeedConfigModel)')


def test_sections_must_be_objects():
    refused({'aio': []}, 'aio = []: not an object')
    refused({'bf16': True}, 'bf16 = true: not an object')
    refused({'zero_optimization': []}, 'zero_optimization = []: not an object')
    # zero/config.py read_zero_config_deprecated: true is stage 1
    refused({'zero_optimization': True}, 'the deprecated boolean form means stage 1')


def test_aio_values_within_the_engines_limits():
    # engine/options.c tswap_block_size, engine/backend.h TSWAP_MAX_QUEUE_DEPTH,
    # engine/plan.h TSWAP_MAX_THREADS
    refused({'aio': {'queue_depth': 1e12}}, 'aio.queue_depth = 1000000000000: out of the engine\'s range')
    refused({'aio': {'intra_op_parallelism': 4096.0}}, 'tswap_threads: 1 to 1024')
    refused({'aio': {'block_size': 1000.0}}, 'a multiple of 512 bytes')
    refused({'aio': {'block_size': 'auto'}}, 'aio.block_size = "auto": not a whole number')
    check({'aio': {'block_size': 4194304.0, 'queue_depth': 128.0, 'intra_op_parallelism': 8.0, 'thread_count': 2}})


def test_hugging_face_batch_placeholders_are_left_out_with_a_note():
    # runtime/config.py _set_batch_related_parameters does not resolve
    # "auto" (Hugging Face's Trainer does): left out, gradient accumulation 1
    out, notes = check({'gradient_accumulation_steps': 'auto', 'train_batch_size': 'auto', 'steps_per_print': 1})
    assert out == {'steps_per_print': 1}
    assert [n.split(' = ')[0] for n in notes] == ['gradient_accumulation_steps', 'train_batch_size']
