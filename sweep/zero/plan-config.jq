# sweep/zero/plan-config.jq - the ds_config as DeepSpeed v0.16.4 reads it
# (plan.jq's first part). zero_config: the ds_config (input) to {c: the
# settings the plan uses, defaults filled in; defaults: a line per default
# taken} or {error: "LINE"} for a ds_config DeepSpeed would reject. Reads
# plan.jq's $dtype, $world, $step.

def bool_or($v; $d): if $v == null then $d else $v end;

def zero_config:
  . as $cfg
| ($cfg.zero_optimization // {}) as $z
| ($z.offload_optimizer // {}) as $oo
| ($z.offload_param // {}) as $op
| ($cfg.aio // {}) as $aio
# runtime/config.py get_bfloat16_enabled reads "bf16" or the older "bfloat16".
| (if $cfg | has("bf16") then $cfg.bf16 else $cfg.bfloat16 end // {}) as $bf16
| ($cfg.fp16 // {}) as $fp16
# Booleans: DeepSpeed hands aio's to the C++ handle unconverted
# (swap_tensor/aio_config.py get_aio_config) and lets pydantic coerce the
# others ("false", 0); the plan takes only JSON true/false.
| [["zero_optimization", "offload_optimizer", "pipeline_read"], ["zero_optimization", "offload_optimizer", "pipeline_write"],
   ["zero_optimization", "offload_optimizer", "fast_init"], ["zero_optimization", "reduce_scatter"],
   ["aio", "single_submit"], ["aio", "overlap_events"], ["aio", "use_gds"]]
  as $bool_keys
| ([$bool_keys[] as $k | ($cfg | getpath($k)) as $v | select($v != null and ($v | type) != "boolean")
    | "\($k | join(".")) = \($v | tojson): not a JSON boolean (true or false)"]
   + [["bf16", $bf16], ["fp16", $fp16] | .[0] as $n | .[1].enabled as $v
      | select($v != null and ($v | type) != "boolean" and ($v != "auto" or $dtype == ""))
      | if $v == "auto" then "\($n).enabled = \"auto\": a Hugging Face Trainer placeholder DeepSpeed itself does not resolve; give --dtype fp32|fp16|bf16"
        else "\($n).enabled = \($v | tojson): not a JSON boolean (true or false)" end]) as $bool_errors
# Defaults: zero/config.py DeepSpeedZeroConfig (stage 0, sub_group_size 1e9,
# stage3_max_reuse_distance 1e9, reduce_bucket_size 5e8, reduce_scatter
# true); zero/offload_config.py DeepSpeedZeroOffloadOptimizerConfig
# (buffer_count 4, pipeline_read/pipeline_write false) and
# DeepSpeedZeroOffloadParamConfig (buffer_count 5, buffer_size 1e8,
# max_in_cpu 1e9); swap_tensor/constants.py AIO_*_DEFAULT read by
# swap_tensor/aio_config.py get_aio_config.
| ($z.stage3_max_reuse_distance // $z.max_reuse_distance) as $rd_given
| [
    (if $z.stage == null then "zero_optimization.stage=0 (zero/config.py)" else empty end),
    (if $z.sub_group_size == null then "sub_group_size=1e9 (zero/config.py)" else empty end),
    (if ($op.device // "none") == "nvme" and $rd_given == null then "stage3_max_reuse_distance=1e9 (zero/config.py)" else empty end),
    (if ($oo.device // "none") == "nvme" and $z.reduce_bucket_size == null then "reduce_bucket_size=5e8 (zero/config.py)" else empty end),
    (if ($oo.device // "none") == "nvme" and $oo.buffer_count == null then "offload_optimizer.buffer_count=4 (zero/offload_config.py)" else empty end),
    (if ($oo.device // "none") == "nvme" and $oo.pipeline_read == null then "offload_optimizer.pipeline_read=false (zero/offload_config.py)" else empty end),
    (if ($oo.device // "none") == "nvme" and $oo.pipeline_write == null then "offload_optimizer.pipeline_write=false (zero/offload_config.py)" else empty end),
    (if ($op.device // "none") == "nvme" and $op.buffer_count == null then "offload_param.buffer_count=5 (zero/offload_config.py)" else empty end),
    (if ($op.device // "none") == "nvme" and $op.buffer_size == null then "offload_param.buffer_size=1e8 (zero/offload_config.py)" else empty end),
    (if ($op.device // "none") == "nvme" and $op.max_in_cpu == null then "offload_param.max_in_cpu=1e9 (zero/offload_config.py)" else empty end),
    (if $aio.block_size == null then "aio.block_size=1048576 (swap_tensor/constants.py)" else empty end),
    (if $aio.queue_depth == null then "aio.queue_depth=8 (swap_tensor/constants.py)" else empty end),
    (if $aio.intra_op_parallelism == null then "aio.intra_op_parallelism=1 (swap_tensor/constants.py)" else empty end),
    (if $aio.single_submit == null then "aio.single_submit=false (swap_tensor/constants.py)" else empty end),
    (if $aio.overlap_events == null then "aio.overlap_events=true (swap_tensor/constants.py)" else empty end),
    (if $cfg.gradient_accumulation_steps == null then
       (if ($cfg.train_batch_size | type) == "number" and ($cfg.train_micro_batch_size_per_gpu | type) == "number"
        then "gradient_accumulation_steps=train_batch_size // train_micro_batch_size_per_gpu // world (runtime/config.py)"
        else "gradient_accumulation_steps=1 (runtime/config.py)" end) else empty end),
    (if $cfg.optimizer.type == null then "optimizer.type=adam (no optimizer section: assumed DeepSpeedCPUAdam)" else empty end)
  ] as $defaults
| {
    stage: ($z.stage // 0),
    sub_group_size: ($z.sub_group_size // 1e9),
    max_reuse_distance: ($rd_given // 1e9),
    reduce_bucket_size: ($z.reduce_bucket_size // 5e8),
    reduce_scatter: bool_or($z.reduce_scatter; true),
    opt_nvme: (($oo.device // "none") == "nvme"),
    opt_path: $oo.nvme_path,
    opt_buffer_count: ($oo.buffer_count // 4),
    pipeline_read: bool_or($oo.pipeline_read; false),
    pipeline_write: bool_or($oo.pipeline_write; false),
    fast_init: bool_or($oo.fast_init; false),
    param_nvme: (($op.device // "none") == "nvme"),
    param_path: $op.nvme_path,
    param_buffer_count: ($op.buffer_count // 5),
    param_buffer_size: ($op.buffer_size // 1e8),
    max_in_cpu: ($op.max_in_cpu // 1e9),
    block_size: ($aio.block_size // 1048576),
    queue_depth: ($aio.queue_depth // 8),
    intra_op_parallelism: ($aio.intra_op_parallelism // 1),
    single_submit: bool_or($aio.single_submit; false),
    overlap_events: bool_or($aio.overlap_events; true),
    optimizer: (($cfg.optimizer.type // "adam") | if type == "string" then ascii_downcase else tojson end),
    param_dtype: (if $dtype != "" then $dtype elif $bf16.enabled == true then "bf16"
                  elif $fp16.enabled == true then "fp16" else "fp32" end),
    thread_count_ignored: ($aio.thread_count != null and $aio.intra_op_parallelism == null),
    # runtime/config.py _set_batch_related_parameters: gradient_accumulation_steps,
    # else train_batch_size // train_micro_batch_size_per_gpu // world size,
    # else 1 (DeepSpeed's world_size is every GPU; here the data-parallel world).
    gas: ($cfg.gradient_accumulation_steps
          // (if ($cfg.train_batch_size | type) == "number" and ($cfg.train_micro_batch_size_per_gpu | type) == "number"
                 and $cfg.train_micro_batch_size_per_gpu > 0
              then ($cfg.train_batch_size / $cfg.train_micro_batch_size_per_gpu | floor) / $world | floor
              else 1 end))
  } as $c
# --- the ds_config's own errors (one line each) -------------------------------
| if ($bool_errors | length) > 0 then
    {error: "ds_config: \($bool_errors[0])"}
  elif $bf16.enabled == true and $fp16.enabled == true and $dtype == "" then
    {error: "ds_config: bf16.enabled and fp16.enabled are both true: DeepSpeed refuses that (runtime/config.py _do_error_check)"}
  elif ($c.opt_nvme or $c.param_nvme) | not then
    {error: "ds_config: no offload_optimizer or offload_param with \"device\": \"nvme\": nothing is swapped to NVMe"}
  elif ($c.stage | type) != "number" or $c.stage < 3 then
    {error: "ds_config: zero_optimization.stage=\($c.stage | tojson): NVMe offload needs stage 3 (zero/stage3.py DeepSpeedZeroOptimizer_Stage3)"}
  elif $c.opt_nvme and ($c.opt_path == null or $c.opt_path == "") then
    {error: "ds_config: offload_optimizer.device is nvme but offload_optimizer.nvme_path is missing"}
  elif $c.param_nvme and ($c.param_path == null or $c.param_path == "") then
    {error: "ds_config: offload_param.device is nvme but offload_param.nvme_path is missing"}
  elif ([$c.sub_group_size, $c.opt_buffer_count, $c.param_buffer_count, $c.param_buffer_size,
         $c.max_in_cpu, $c.max_reuse_distance, $c.reduce_bucket_size, $c.block_size, $c.queue_depth,
         $c.intra_op_parallelism]
        | map(type == "number" and . >= 0 and . == floor) | all) | not then
    {error: "ds_config: sub_group_size, stage3_max_reuse_distance, reduce_bucket_size, buffer_count, buffer_size, max_in_cpu and the aio sizes must be non-negative integers"}
  elif ($c.gas | type) != "number" or $c.gas < 1 or $c.gas != ($c.gas | floor) or $c.gas > 1024 then
    {error: "ds_config: gradient_accumulation_steps (given, or train_batch_size // train_micro_batch_size_per_gpu // world) must be an integer from 1 to 1024"}
  elif $c.block_size < 1 or $c.queue_depth < 1 or $c.intra_op_parallelism < 1 or $c.opt_buffer_count < 1 or $c.param_buffer_count < 1 then
    {error: "ds_config: aio.block_size, aio.queue_depth, aio.intra_op_parallelism and the offload buffer_counts must be at least 1"}
  elif ($c.optimizer | IN("adam", "adamw", "adagrad", "lion")) | not then
    {error: "ds_config: optimizer.type=\($cfg.optimizer.type): unknown to ZeRO-Infinity's CPU optimizers (adam, adamw, adagrad, lion: runtime/engine.py _configure_basic_optimizer)"}
  elif $step == "init" and $c.opt_nvme and $c.fast_init and $c.param_nvme then
    {error: "--step init: offload_optimizer.fast_init=true initialises the fp32 partitions from the swapped parameters (optimizer_utils.py _initialize_from_swapped_fp16_params), which the plan does not model"}
  else {c: $c, defaults: $defaults}
  end;
