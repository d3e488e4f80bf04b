# sweep/zero/plan.jq - the swap traffic of ZeRO-Infinity's initialisation,
# first training step and steady training step, computed from a ds_config
# (the input) by DeepSpeed's rules.
#
# Owns: the plan (plan.json). Reads: the ds_config on stdin and
#   --argjson params N   model parameters (elements), > 0
#   --argjson world N    data-parallel world size (ranks the model is split over)
#   --argjson ranks N    ranks on this node (node totals = per rank x ranks)
#   --argjson param_numel N   elements per model parameter tensor (the model's
#                        shape is not in a ds_config: docs/zero-infinity.md)
#   --arg step S         steady | first | init: the step .phases holds
#   --arg dtype D        "" (from bf16/fp16.enabled) | fp32 | fp16 | bf16
# Writes: one JSON object on stdout, the plan, or {"error": "LINE"} for a
# ds_config DeepSpeed would reject or that has nothing on NVMe.
#
# Every rule cites DeepSpeed v0.16.4 (deepspeed/runtime/...): file and
# function. Sizes are in elements unless the name says bytes. jq numbers are
# doubles: exact for integers below 2^53 (9e15), far above any swap plan.
# The model: tensor k (ds_id k, zero/partition_parameters.py Init.param_id)
# is one module, run in ds_id order forward and in reverse backward.

def ceil_div($a; $b): (($a + $b - 1) / $b) | floor;
# optimizer_utils.py OptimizerSwapper._io_aligned_numel (and the same
# function in partitioned_param_swapper.py, async_swapper.py): round an
# element count up to numel_alignment.
def io_aligned($n; $a): if $n % $a == 0 then $n else $n + $a - ($n % $a) end;
# optimizer_utils.py _adjust_for_misaligned_lengths: a gradient is cut into
# its aligned head (swapped) and a remainder < numel_alignment (kept in memory).
def aligned_head($n; $a): $n - ($n % $a);
def bool_or($v; $d): if $v == null then $d else $v end;
def min2($a; $b): if $a < $b then $a else $b end;

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
  else
# --- per-rank geometry ---------------------------------------------------------
  # The optimizer's state tensors of one sub-group (optimizer_utils.py
  # _get_state_tensors: every tensor in optimizer.state[param], named
  # "{state}-{ds_id}") plus the fp32 master partition itself
  # (OptimizerStateSwapInfo._add_tensors([parameter]), named "{ds_id}").
  # ops/adam/cpu_adam.py DeepSpeedCPUAdam.step: exp_avg, exp_avg_sq;
  # ops/lion/cpu_lion.py DeepSpeedCPULion.step: exp_avg, exp_avg_sq (both
  # allocated); ops/adagrad/cpu_adagrad.py DeepSpeedCPUAdagrad.step: exp_avg_sq.
  ({adam: ["exp_avg", "exp_avg_sq"], adamw: ["exp_avg", "exp_avg_sq"],
    lion: ["exp_avg", "exp_avg_sq"], adagrad: ["exp_avg_sq"]}[$c.optimizer]) as $state_names
  # Swap element sizes: the optimizer swapper is built with dtype=torch.float32
  # (stage3.py _configure_tensor_swapping); the param swapper with the model
  # dtype (partitioned_param_swapper.py _configure_aio: swap_element_size).
  | 4 as $opt_es
  | (if $c.param_dtype == "fp32" then 4 else 2 end) as $par_es
  # optimizer_utils.py OptimizerSwapper.__init__ (and partitioned_param_swapper
  # .py _configure_aio): min_aio_bytes = max(MIN_AIO_BYTES=1 MiB, block_size);
  # aligned_bytes = AIO_ALIGNED_BYTES(1024) * intra_op_parallelism;
  # numel_alignment = aligned_bytes / element size (swap_tensor/utils.py).
  | ([1048576, $c.block_size] | max) as $min_aio
  | ((1024 * $c.intra_op_parallelism) / $opt_es | floor) as $a_opt
  | ((1024 * $c.intra_op_parallelism) / $par_es | floor) as $a_par
  # The model: ceil(params / param_numel) tensors of param_numel elements, the
  # last one the remainder. zero/partition_parameters.py _partition_param:
  # each rank holds ceil(numel / world) elements of every parameter.
  | ceil_div($params; $param_numel) as $nparams
  | ([range(0; $nparams)] | map(if . == $nparams - 1 then $params - $param_numel * ($nparams - 1) else $param_numel end)) as $full
  | ($full | map(ceil_div(.; $world))) as $parts
  | ($parts | add) as $rank_numel
  # stage3.py _create_fp16_sub_groups: whole when sub_group_size >= the
  # group's partition numel, else parameters (ds_ids) are appended until the
  # running sum reaches sub_group_size.
  | (if $c.sub_group_size >= $rank_numel then [[range(0; $nparams)]]
     else (reduce range(0; $nparams) as $k ({groups: [], cur: [], acc: 0};
             .cur += [$k] | .acc += $parts[$k]
             | if .acc >= $c.sub_group_size then .groups += [.cur] | .cur = [] | .acc = 0 else . end)
           | .groups + (if (.cur | length) > 0 then [.cur] else [] end))
     end) as $groups
  # stage3.py _create_fp16_partitions_with_defragmentation (with
  # _create_param_groups_fp16_flat_cpu_memory): a sub-group's parameters get
  # a CPU flat buffer when its running end fits in max_in_cpu elements;
  # past it they live on NVMe (flat buffer None).
  | ([foreach $groups[] as $g (0; . + ([$g[] | $parts[.]] | add); .)]) as $ends
  # partitioned_param_swapper.py swappable_tensor: a parameter partition of
  # at least min_aio_bytes gets a file {ds_id}_param.tensor.swp when zero.Init
  # partitions it (partition_parameters.py _partition_param: get_buffer,
  # swap_out_and_release), CPU-resident or not; _io_aligned_numel elements.
  | ([range(0; $nparams) as $k | select($c.param_nvme and $parts[$k] * $par_es >= $min_aio)
      | {k: $k, name: "\($k)_param.tensor.swp", dir: "params", kind: "param", bytes: (io_aligned($parts[$k]; $a_par) * $par_es)}]
     | INDEX(.k | tostring)) as $pfile
  | [range(0; $groups | length) as $i
     | $groups[$i] as $g | ([$g[] | $parts[.]] | add) as $n
     | "\($g[0])_\($g[-1])" as $dsid
     # stage3.py _swappable_optimizer_subgroup -> OptimizerSwapper.swappable_tensor
     | ($c.opt_nvme and ($n * $opt_es >= $min_aio)) as $oswap
     | ($c.param_nvme and ($ends[$i] > $c.max_in_cpu)) as $pnvme
     | (if $oswap then io_aligned($n; $a_opt) * $opt_es else 0 end) as $sbytes
     | {
         id: $i, ds_id: $dsid, numel: $n, params: ($g | length), param_ids: $g,
         optimizer_swap: $oswap, params_on_nvme: $pnvme,
         # partitioned_optimizer_swapper.py _swap_in_parameter: every state
         # tensor is read with _io_aligned_numel(numel) elements; the
         # pipelined swapper also writes the aligned buffers (SwapBufferManager
         # .allocate narrows to aligned_numel).
         state_bytes: $sbytes,
         state_tensors: (if $oswap then ["fp32"] + $state_names else [] end),
         fp32_file: (if $oswap then {name: "\($dsid).tensor.swp", dir: "optimizer", kind: "fp32", bytes: $sbytes} else null end),
         state_files: (if $oswap then [$state_names[] | {name: "\(.)-\($dsid).tensor.swp", dir: "optimizer", kind: "state", bytes: $sbytes}] else [] end),
         # stage3.py partition_grads -> OptimizerSwapper._swap_out_gradients:
         # one file per parameter's fp32 gradient partition whose aligned head
         # is swappable, {ds_id}_gradient_{offset}_{length}.tensor.swp
         # (OptimizerStateSwapInfo.get_or_create_gradient_paths), offset the
         # parameter's place in the sub-group (stage3.py set_grad_positions).
         grad_files: (if $oswap then
             [foreach $g[] as $k ({off: 0}; .k = $k | .o = .off | .off += $parts[$k]; {k, o})
              | aligned_head($parts[.k]; $a_opt) as $h | select($parts[.k] * $opt_es >= $min_aio and $h * $opt_es >= $min_aio)
              | {k, name: "\($dsid)_gradient_\(.o)_\($h).tensor.swp", dir: "optimizer", kind: "grad", bytes: ($h * $opt_es)}]
           else [] end),
         param_files: [$g[] | $pfile[tostring] // empty]
       }
       | .grad_bytes = [.grad_files[].bytes]
       | .param_bytes = (if $pnvme then [.param_files[].bytes] else [] end)
    ] as $sg
  # Configurations DeepSpeed itself rejects (an assert at init or in the
  # first or second step), and plans with nothing to swap.
  | ([$sg[] | select(.optimizer_swap)] | length) as $nopt
  | (($state_names | length) + 2) as $bufs_per_sg
  | (if $nopt > 1 then 1 + (if $c.pipeline_read then 1 else 0 end) + (if $c.pipeline_write then 1 else 0 end)
     else 1 end) as $sgs_held
  | ($bufs_per_sg * $sgs_held) as $bufs_needed
  | ([$parts[] | select(. * $par_es >= $min_aio and . >= $c.param_buffer_size)] | length) as $too_big
  # NVMe parameters during training, in forward (ds_id) order.
  | [$sg[] | select(.params_on_nvme) | .param_files[]] as $nvme_params
  # zero/partitioned_param_coordinator.py __params_to_release: once the
  # trace is complete (from the second forward on: reset_step at each
  # forward, parameter_offload.py _start_of_forward_hook), a module's
  # parameters are not released after forward when the modules after it
  # use them again within max_reuse_distance elements (full tensors,
  # ds_numel). Tensor k's reuse comes after the 2 x (tensors k+1..n-1) of
  # forward and backward.
  | ([foreach ($full | reverse)[] as $t (0; . + $t; .)] | reverse) as $suffix_incl
  | [$nvme_params[] | .k as $k
       | (if $k + 1 < $nparams then $suffix_incl[$k + 1] else 0 end) as $after
       | . + {reuse: (2 * $after), kept: (2 * $after < $c.max_reuse_distance)}] as $nvme_params
  | ([$nvme_params[] | select(.kept)] | length) as $kept
  | (([$sg[] | (.state_tensors | length) + (.grad_files | length)] | add) + ($pfile | length)) as $nfiles
  | if $c.opt_nvme and $nopt > 0 and $c.opt_buffer_count < $bufs_needed then
      # OptimizerSwapper.__init__: SwapBufferManager(count=buffer_count);
      # a sub-group being swapped holds one buffer per tensor it swaps
      # (fp32 + state) plus one for its gradient (swap_in_optimizer_state,
      # _swap_in_optimizer_state: required_buffer_count). Pipelined, the
      # next sub-group's read (pipeline_read) and the previous one's write
      # (pipeline_write) hold theirs at the same time.
      {error: "ds_config: offload_optimizer.buffer_count=\($c.opt_buffer_count): DeepSpeed needs at least \($bufs_needed) (\($sgs_held) sub-group(s) in flight x \($bufs_per_sg) buffers: fp32, \($state_names | join(", ")), gradient) or asserts (\(if $sgs_held > 1 then "pipelined_optimizer_swapper.py _swap_in_optimizer_state: ran out of swap buffers" else "partitioned_optimizer_swapper.py swap_in_optimizer_state" end))"}
    elif $c.param_nvme and $too_big > 0 then
      # zero/partition_parameters.py _partition_param -> partitioned_param_swapper
      # .py get_buffer: assert numel < buffer_size for every parameter
      # partition placed on NVMe.
      {error: "--param-numel: a parameter partition of \($parts | max) elements (ceil(\($param_numel) / world \($world))) does not fit offload_param.buffer_size=\($c.param_buffer_size) (partitioned_param_swapper.py get_buffer asserts numel < buffer_size): lower --param-numel or raise buffer_size"}
    elif $kept > $c.param_buffer_count then
      # Each NVMe parameter kept for backward holds one of the param
      # swapper's buffer_count buffers; the next swap_in finds none and
      # asserts (DeepSpeed issue 3062): the second step fails.
      {error: "ds_config: offload_param.buffer_count=\($c.param_buffer_count): from the second step on DeepSpeed keeps the last \($kept) NVMe parameters of forward for backward (reused within stage3_max_reuse_distance=\($c.max_reuse_distance) elements, with --param-numel \($param_numel)), one swap buffer each, and asserts \"Not enough buffers\" (partitioned_param_swapper.py swap_in): raise buffer_count to \($kept) or lower stage3_max_reuse_distance"}
    elif $nfiles == 0 then
      {error: "--params=\($params) --world=\($world): nothing is swapped: every sub-group and parameter partition is below min_aio_bytes=\($min_aio) (optimizer_utils.py swappable_tensor)"}
    else
  # --- jobs ------------------------------------------------------------------
  # A job: files of one folder and one size, in order, moved in one
  # direction by one handle with `iodepth` tensors issued before its wait().
  # Consecutive files of a list that share folder and size form one job.
    def runs($files):
      reduce $files[] as $f ([];
        if length > 0 and .[-1].bytes == $f.bytes and .[-1].dir == $f.dir
        then .[-1].files += [$f.name] else . + [{dir: $f.dir, kind: $f.kind, bytes: $f.bytes, files: [$f.name]}] end);
    def jobs($id; $files; $rw; $handle; $depth):
      runs($files) | length as $n | to_entries
      | map(.value + {id: (if $n > 1 then "\($id)-\(.key)" else $id end), rw: $rw, handle: $handle,
                      count: (.value.files | length), iodepth: min2(.value.files | length; $depth)});
    # The same, one job after the other on one handle (one tensor or one op
    # at a time): the replay chains them with fio wait_for.
    def serial($id; $files; $rw; $handle; $depth; $chain):
      jobs($id; $files; $rw; $handle; $depth) | map(.serial = true | .chain = $chain);
    def sgs($ids): [$ids[] as $i | $sg[$i]];
    ($sg | map(select(.optimizer_swap) | .id)) as $o
  | ($o | length) as $m
  | ($c.opt_nvme and ($c.pipeline_read or $c.pipeline_write)) as $pipelined
  # --- gradients at the accumulation boundary ----------------------------------
  # stage3.py reduce_independent_p_g_buckets_and_remove_grads: backward hands
  # gradients over last layer first, in buckets of reduce_bucket_size
  # elements (full tensors); __reduce_and_partition_ipg_grads sorts a bucket
  # by ds_id when reduce_scatter is on (the default); partition_grads swaps
  # them out per sub-group. optimizer_utils.py _swap_out_gradients ->
  # async_swapper.py AsyncTensorSwapper: buffer_count pinned buffers of the
  # largest sub-group (aligned); a buffer is written when the next gradient
  # does not fit, and the last one only when the optimizer step's first
  # swap_in_optimizer_state flushes the swapper (_flush_gradient_swapper).
  | (reduce range($nparams - 1; -1; -1) as $k ({b: [], cur: [], n: 0};
       if .n + $full[$k] > $c.reduce_bucket_size and .n > 0 then .b += [.cur] | .cur = [$k] | .n = $full[$k]
       else .cur += [$k] | .n += $full[$k] end)
     | .b + [.cur] | map(if $c.reduce_scatter then sort else . end) | flatten) as $grad_order
  | ([$sg[] | .grad_files[] | {key: (.k | tostring), value: .}] | from_entries) as $gfile
  | (io_aligned([$sg[].numel] | max; $a_opt) * $opt_es) as $gbuf_bytes
  | ([$grad_order[] | $gfile[tostring] // empty]
     | reduce .[] as $f ({done: [], cur: [], used: 0};
         if .used + $f.bytes > $gbuf_bytes and (.cur | length) > 0
         then .done += .cur | .cur = [$f] | .used = $f.bytes
         else .cur += [$f] | .used += $f.bytes end)) as $gsplit
  | ([1, $c.opt_buffer_count * (($gbuf_bytes / ([$sg[].grad_files[].bytes] | max // 1)) | floor)] | max) as $grad_depth
  | (if $pipelined then "optimizer-write" else "optimizer" end) as $gh
  # --- the optimizer step (and initialize_optimizer_states) --------------------
  # stage3.py step: for each sub-group: _prepare_sub_group (swap in state and
  # gradients), _optimizer_step, _reassign_or_swap_out_partitioned_parameters
  # (NVMe parameters written by the param swapper's write handle, waited
  # for: SwapBufferPool.swap_out async_op=False), _release_sub_group (swap
  # out state). R(i) reads, P(i) the parameter write, S(i) the state write:
  # r, w give sub-group i's files read and written, $gr whether its
  # gradients are read, $flush the gradients written first.
  | def optimizer(r; w; $gr; $flush; $split):
      def rfiles($i): if $sg[$i].optimizer_swap then $sg[$i] | r else [] end;
      def reads($i): jobs("sg\($i)-state"; rfiles($i); "read"; "optimizer-read"; 1e18)
        + (if $gr then jobs("sg\($i)-grad"; $sg[$i].grad_files; "read"; "optimizer-read"; 1e18) else [] end);
      def reads_then($i; $ch): reads($i) | map(if .kind != "grad" then .serial = true | .chain = $ch else . end);
      def pwrite($i; $ch): if $sg[$i].params_on_nvme then serial("sg\($i)-param"; $sg[$i].param_files; "write"; "param-write"; 1e18; $ch) else [] end;
      # S: the non-pipelined swapper writes pinned tensors, waits, then the
      # unpinned ones (a first step's new state) through pinned buffers
      # (partitioned_optimizer_swapper.py swap_out_optimizer_state,
      # _swap_out_unpinned_tensors); the pipelined one all in one op.
      def swrite($i; $ch; $h):
        if $sg[$i].optimizer_swap | not then []
        elif $pipelined or ($split | not) then serial("sg\($i)-state"; $sg[$i] | w; "write"; $h; 1e18; $ch)
        else ($sg[$i] | w) as $f
          | serial("sg\($i)-fp32"; [$f[] | select(.kind == "fp32")]; "write"; $h; 1e18; $ch)
            + serial("sg\($i)-state"; [$f[] | select(.kind != "fp32")]; "write"; $h; 1e18; $ch) end;
      (if ($flush | length) > 0 then [{name: "grad-flush", jobs: serial("grad"; $flush; "write"; $gh; 1e18; "grad")}] else [] end)
      + (if $pipelined then
         # pipelined_optimizer_swapper.py PipelinedOptimizerSwapper: a read
         # handle and a write handle. swap_in_optimizer_state(i, next): waits
         # for the read of i (issued now, or earlier as ASYNC_SWAP_IN), then,
         # with pipeline_read, issues the read of the next swappable
         # sub-group (stage3.py _create_next_swappable_fp32_groups).
         # swap_out_optimizer_state(i, async_swap = a next exists): first
         # waits for the previous sub-group's ASYNC_SWAP_OUT
         # (_complete_swap_out), then issues S(i), left in flight with
         # pipeline_write. Issue order, o_j the swappable sub-groups:
         # pipeline_read: R0 R1 P0 S0 R2 P1 S1 ...; pipeline_write: R0 P0 S0
         # R1 P1 S1 ...; stages in that order.
         if $c.pipeline_read then
           # stage j = R(o_j) || (P(o_j-1) -> S(o_j-1)): exact without
           # pipeline_write; with it DeepSpeed waits for S(o_j-1) only after
           # P(o_j), the replay at the stage's end.
           [range(0; $m + 1) as $k
            | {name: "stage\($k)",
               jobs: ((if $k < $m then reads($o[$k]) else [] end)
                      + (if $k > 0 then pwrite($o[$k - 1]; "sg\($o[$k - 1])-out") + swrite($o[$k - 1]; "sg\($o[$k - 1])-out"; "optimizer-write") else [] end))}]
         else
           # stage j = S(o_j-1) || (R(o_j) -> P(o_j)): exact. P(o_j) waits for
           # R(o_j)'s state read job (fio's wait_for names one job; the
           # gradient reads of the same op run beside it and are smaller).
           [range(0; $m + 1) as $k
            | {name: "stage\($k)",
               jobs: ((if $k > 0 then swrite($o[$k - 1]; "sg\($o[$k - 1])-out"; "optimizer-write") else [] end)
                      + (if $k < $m then reads_then($o[$k]; "sg\($o[$k])-in") + pwrite($o[$k]; "sg\($o[$k])-in") else [] end))}]
         end
       else
         # partitioned_optimizer_swapper.py: one handle; swap_in_optimizer_state
         # reads the state and waits (_swap_in_parameter), then the gradients
         # and waits (_swap_in_gradients); the parameters are written and
         # waited for; swap_out_optimizer_state writes the state and waits.
         [range(0; $sg | length) as $i
          | {name: "sg\($i)-in", jobs: jobs("sg\($i)-state"; rfiles($i); "read"; "optimizer"; 1e18)},
            {name: "sg\($i)-in-grad", jobs: (if $gr and $sg[$i].optimizer_swap then jobs("sg\($i)-grad"; $sg[$i].grad_files; "read"; "optimizer"; 1e18) else [] end)},
            {name: "sg\($i)-param-out", jobs: pwrite($i; "sg\($i)-param")},
            {name: "sg\($i)-out", jobs: swrite($i; "sg\($i)-out"; "optimizer")}]
       end);
  # --- the training steps ----------------------------------------------------
  # A step is gradient_accumulation_steps micro-steps (forward, backward),
  # then the optimizer step; gradients are swapped out only at the
  # accumulation boundary (stage3.py partition_grads: before it they are
  # accumulated in the CPU grad partitions). Forward reads every NVMe
  # parameter one at a time (partition_parameters.py
  # _ensure_availability_of_partitioned_params, swap_in async_op=False; from
  # the second step __prefetch_nvme_param_partitions issues the next one
  # only). Backward reads again those released after forward: all of them
  # while the trace is recorded (the first micro-step of training:
  # partitioned_param_coordinator.py release_sub_module without a complete
  # trace), afterwards those not kept (kept above).
    def train($first):
      ($c.gas) as $gas
      | def mb($u): if $gas > 1 then "-mb\($u)" else "" end;
        def micro($u): if $gas > 1 then {micro_step: $u} else {} end;
      [range(1; $gas + 1) as $u
       | ({name: "forward", stages: [{name: "param-in\(mb($u))", jobs: serial("param"; $nvme_params; "read"; "param-read"; 1; "param")}]} + micro($u)),
         ({name: "backward", stages: [{name: ((if $u == $gas then "param-in-grad-out" else "param-in" end) + mb($u)),
            jobs: (serial("param"; [$nvme_params | reverse[] | select(($first and $u == 1) or (.kept | not))]; "read"; "param-read"; 1; "param")
                   + (if $u == $gas then serial("grad"; $gsplit.done; "write"; $gh; $grad_depth; "grad") else [] end))}]} + micro($u))]
      + [{name: "optimizer", stages: (if $first
            # The first step: the CPU optimizers create their state in
            # their first step() (cpu_adam.py, cpu_lion.py, cpu_adagrad.py),
            # so only the fp32 partitions and gradients are read, then fp32
            # and the new state are written.
            then optimizer([.fp32_file]; [.fp32_file] + .state_files; true; $gsplit.cur; true)
            else optimizer([.fp32_file] + .state_files; [.fp32_file] + .state_files; true; $gsplit.cur; false) end)}];
  # --- deepspeed.initialize ----------------------------------------------------
    def init:
      [$sg[] | select(.params_on_nvme | not) | .param_files[]] as $cpu_params
      | [$sg[] | select(.optimizer_swap and (.params_on_nvme | not)) | .fp32_file] as $cpu_fp32
      # zero.Init (partition_parameters.py _partition_param): every
      # parameter partition of at least min_aio_bytes written, one at a time.
      | [{name: "zero-init", stages: [{name: "param-out", jobs: serial("param"; [$pfile[]] | sort_by(.k); "write"; "param-write"; 1; "param")}]},
      # stage3.py _create_fp16_partitions_with_defragmentation ->
      # _move_to_flat_buffer: the CPU sub-groups' parameters read back
      # (swap_into_buffer, one at a time).
         {name: "fp16-partitions", stages: [{name: "param-in", jobs: serial("param"; $cpu_params; "read"; "param-read"; 1; "param")}]},
      # stage3.py _create_fp32_partitions: per sub-group with its
      # parameters on NVMe, the parameters read (_swap_in_sub_group_to_flat_buffer)
      # and, when swappable, its fp32 partition written (initialize_parameters);
      # then the fp32 partitions of the others, buffer_count per op
      # (optimizer_utils.py _swap_out_unpinned_tensors).
         {name: "fp32-partitions", stages: [{name: "fp32-out", jobs: (
            [$sg[] | select(.params_on_nvme) | .id as $i
             | serial("sg\($i)-param"; .param_files; "read"; "param-read"; 1; "init")
               + (if .optimizer_swap then serial("sg\($i)-fp32"; [.fp32_file]; "write"; $gh; 1; "init") else [] end)]
            + [range(0; $cpu_fp32 | length; $c.opt_buffer_count) as $b
               | serial("fp32-b\($b / $c.opt_buffer_count | floor)"; $cpu_fp32[$b:$b + $c.opt_buffer_count]; "write"; $gh; 1e18; "init")]
            | flatten)}]},
      # stage3.py initialize_optimizer_states: every sub-group walked as a
      # step without the optimizer: fp32 read, parameters written, fp32 written.
         {name: "optimizer-states", stages: optimizer([.fp32_file]; [.fp32_file]; false; []; false)},
      # stage3.py create_reduce_and_remove_grad_hooks: param.all_gather()
      # on every parameter reads the NVMe ones once more.
         {name: "grad-hooks", stages: [{name: "param-in", jobs: serial("param"; $nvme_params; "read"; "param-read"; 1; "param")}]}];
    def totals:
      map(.stages |= map(select(.jobs | length > 0)
            | .read_bytes_per_rank = ([.jobs[] | select(.rw == "read") | .count * .bytes] | add // 0)
            | .write_bytes_per_rank = ([.jobs[] | select(.rw == "write") | .count * .bytes] | add // 0))

          | .read_bytes_per_rank = ([.stages[].read_bytes_per_rank] | add // 0)
          | .write_bytes_per_rank = ([.stages[].write_bytes_per_rank] | add // 0)
          | .read_bytes = .read_bytes_per_rank * $ranks
          | .write_bytes = .write_bytes_per_rank * $ranks);
    def summary:
      {read_bytes_per_rank: ([.[].read_bytes_per_rank] | add // 0), write_bytes_per_rank: ([.[].write_bytes_per_rank] | add // 0),
       phases: (group_by(.name) | map({name: .[0].name, read_bytes_per_rank: ([.[].read_bytes_per_rank] | add),
                                        write_bytes_per_rank: ([.[].write_bytes_per_rank] | add)}))};
    (train(false) | totals) as $steady
  | (train(true) | totals) as $first
  | (init | totals) as $init
  | {steady: $steady, first: $first, init: $init}[$step] as $phases
  # Every swap file of a rank, and those that exist before the step.
  | ([$pfile[]] | sort_by(.k)) as $all_params
  | ($all_params + [$sg[] | select(.optimizer_swap) | (.fp32_file, .state_files[], .grad_files[])]) as $all_files
  | {
      tool: "tswap-zero",
      step: $step,
      inputs: {params: $params, world: $world, ranks: $ranks, param_numel: $param_numel},
      config: ($c | del(.thread_count_ignored) + {optimizer_state: $state_names,
               swapper: (if $pipelined then "PipelinedOptimizerSwapper" else "PartitionedOptimizerSwapper" end),
               min_aio_bytes: $min_aio, numel_alignment_fp32: $a_opt, numel_alignment_param: $a_par,
               param_element_bytes: $par_es, gradient_buffer_bytes: $gbuf_bytes}),
      defaults: $defaults,
      notes: ((if $c.thread_count_ignored then ["aio.thread_count is not read by this DeepSpeed (aio_config.py get_aio_config reads intra_op_parallelism): 1 used"] else [] end)
              + (if $dtype != "" then ["parameter dtype \($dtype) from --dtype"] else [] end)),
      per_rank: {partition_numel: $rank_numel, model_tensors: $nparams, sub_groups: $sg,
                 nvme_params: ($nvme_params | map({k, bytes, reuse, kept})),
                 files: ($all_files | length),
                 file_bytes: ([$all_files[].bytes] | add // 0)},
      # every file of a rank (dir: optimizer or params, name as DeepSpeed's)
      swap_files: ($all_files | map({dir, name, bytes, kind})),
      # the files that exist before the step: none before initialisation;
      # the parameters and fp32 partitions before the first step; all of
      # them before a steady step
      layout_files: ({init: [], first: ($all_params + [$sg[] | select(.optimizer_swap) | .fp32_file]),
                      steady: $all_files}[$step] | map({dir, name, bytes, kind})),
      files: (($all_files | length) * $ranks),
      phases: $phases,
      # the order DeepSpeed issues the swaps in (fio job order)
      ops: [$phases[] as $p | $p.stages[] as $s | $s.jobs[] as $j | $j.files[]
            | {phase: $p.name, stage: $s.name, rw: $j.rw, dir: $j.dir, file: ., bytes: $j.bytes}],
      steps: {init: ($init | summary), first: ($first | summary), steady: ($steady | summary)},
      read_bytes_per_step: ([$phases[].read_bytes] | add // 0),
      write_bytes_per_step: ([$phases[].write_bytes] | add // 0)
    }
    end
  end
