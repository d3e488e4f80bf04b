# sweep/zero/plan.jq - the swap traffic of one ZeRO-Infinity training step,
# computed from a ds_config (the input) by DeepSpeed's rules.
#
# Owns: the plan (plan.json). Reads: the ds_config on stdin and
#   --argjson params N   model parameters (elements), > 0
#   --argjson world N    data-parallel world size (ranks the model is split over)
#   --argjson ranks N    ranks on this node (node totals = per rank x ranks)
#   --argjson param_numel N   elements per model parameter tensor (the model's
#                        shape is not in a ds_config: docs/zero-infinity.md)
# Writes: one JSON object on stdout, the plan, or {"error": "LINE"} for a
# ds_config DeepSpeed would reject or that has nothing on NVMe.
#
# Every rule cites DeepSpeed (microsoft/DeepSpeed, deepspeed/runtime/...):
# file and function. Sizes are in elements unless the name says bytes.
# jq numbers are doubles: exact for integers below 2^53 (9e15), far above
# any swap plan.

def ceil_div($a; $b): (($a + $b - 1) / $b) | floor;
# optimizer_utils.py OptimizerSwapper._io_aligned_numel (and the same
# function in partitioned_param_swapper.py, async_swapper.py): round an
# element count up to numel_alignment.
def io_aligned($n; $a): if $n % $a == 0 then $n else $n + $a - ($n % $a) end;
# optimizer_utils.py _adjust_for_misaligned_lengths: a gradient is cut into
# its aligned head (swapped) and a remainder < numel_alignment (kept in memory).
def aligned_head($n; $a): $n - ($n % $a);
def bool_or($v; $d): if $v == null then $d else $v end;

. as $cfg
| ($cfg.zero_optimization // {}) as $z
| ($z.offload_optimizer // {}) as $oo
| ($z.offload_param // {}) as $op
| ($cfg.aio // {}) as $aio
# Defaults: zero/config.py DeepSpeedZeroConfig (stage 0, sub_group_size 1e9);
# zero/offload_config.py DeepSpeedZeroOffloadOptimizerConfig (buffer_count 4,
# pipeline_read/pipeline_write false) and DeepSpeedZeroOffloadParamConfig
# (buffer_count 5, buffer_size 1e8, max_in_cpu 1e9); swap_tensor/constants.py
# AIO_*_DEFAULT read by swap_tensor/aio_config.py get_aio_config.
| [
    (if $z.stage == null then "zero_optimization.stage=0 (zero/config.py)" else empty end),
    (if $z.sub_group_size == null then "sub_group_size=1e9 (zero/config.py)" else empty end),
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
    opt_nvme: (($oo.device // "none") == "nvme"),
    opt_path: $oo.nvme_path,
    opt_buffer_count: ($oo.buffer_count // 4),
    pipeline_read: bool_or($oo.pipeline_read; false),
    pipeline_write: bool_or($oo.pipeline_write; false),
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
    optimizer: (($cfg.optimizer.type // "adam") | ascii_downcase),
    param_dtype: (if $cfg.bf16.enabled == true then "bf16"
                  elif $cfg.fp16.enabled == true then "fp16" else "fp32" end),
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
| if ($c.opt_nvme or $c.param_nvme) | not then
    {error: "ds_config: no offload_optimizer or offload_param with \"device\": \"nvme\": nothing is swapped to NVMe"}
  elif $c.stage < 3 then
    {error: "ds_config: zero_optimization.stage=\($c.stage): NVMe offload needs stage 3 (zero/stage3.py DeepSpeedZeroOptimizer_Stage3)"}
  elif $c.opt_nvme and ($c.opt_path == null or $c.opt_path == "") then
    {error: "ds_config: offload_optimizer.device is nvme but offload_optimizer.nvme_path is missing"}
  elif $c.param_nvme and ($c.param_path == null or $c.param_path == "") then
    {error: "ds_config: offload_param.device is nvme but offload_param.nvme_path is missing"}
  elif ([$c.sub_group_size, $c.opt_buffer_count, $c.param_buffer_count, $c.param_buffer_size,
         $c.max_in_cpu, $c.block_size, $c.queue_depth, $c.intra_op_parallelism]
        | map(type == "number" and . >= 0 and . == floor) | all) | not then
    {error: "ds_config: sub_group_size, buffer_count, buffer_size, max_in_cpu and the aio sizes must be non-negative integers"}
  elif ($c.gas | type) != "number" or $c.gas < 1 or $c.gas != ($c.gas | floor) or $c.gas > 1024 then
    {error: "ds_config: gradient_accumulation_steps (given, or train_batch_size // train_micro_batch_size_per_gpu // world) must be an integer from 1 to 1024"}
  elif $c.block_size < 1 or $c.queue_depth < 1 or $c.intra_op_parallelism < 1 then
    {error: "ds_config: aio.block_size, aio.queue_depth and aio.intra_op_parallelism must be at least 1"}
  elif ($c.optimizer | IN("adam", "adamw", "adagrad", "lion")) | not then
    {error: "ds_config: optimizer.type=\($cfg.optimizer.type): unknown to ZeRO-Infinity's CPU optimizers (adam, adamw, adagrad, lion: runtime/engine.py _configure_basic_optimizer)"}
  else
# --- per-rank geometry ---------------------------------------------------------
  # The optimizer's state tensors of one sub-group (optimizer_utils.py
  # _get_state_tensors: every tensor in optimizer.state[param]) plus the fp32
  # master partition itself (OptimizerStateSwapInfo._add_tensors([parameter])).
  # ops/adam/cpu_adam.py DeepSpeedCPUAdam.step: exp_avg, exp_avg_sq;
  # ops/lion/cpu_lion.py DeepSpeedCPULion.step: exp_avg, exp_avg_sq (both
  # allocated); ops/adagrad/cpu_adagrad.py DeepSpeedCPUAdagrad.step: exp_avg_sq.
  ({adam: ["exp_avg", "exp_avg_sq"], adamw: ["exp_avg", "exp_avg_sq"],
    lion: ["exp_avg", "exp_avg_sq"], adagrad: ["exp_avg_sq"]}[$c.optimizer]) as $state_names
  | (["fp32"] + $state_names) as $state_tensors
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
  | ([range(0; $nparams)] | map(
      (if . == $nparams - 1 then $params - $param_numel * ($nparams - 1) else $param_numel end)
      | ceil_div(.; $world))) as $parts
  | ($parts | add) as $rank_numel
  # stage3.py _create_fp16_sub_groups: whole when sub_group_size >= the
  # group's partition numel, else parameters are appended until the running
  # sum reaches sub_group_size.
  | (if $c.sub_group_size >= $rank_numel then [$parts]
     else (reduce $parts[] as $p ({groups: [], cur: [], acc: 0};
             .cur += [$p] | .acc += $p
             | if .acc >= $c.sub_group_size then .groups += [.cur] | .cur = [] | .acc = 0 else . end)
           | .groups + (if (.cur | length) > 0 then [.cur] else [] end))
     end) as $groups
  # stage3.py _create_fp16_partitions_with_defragmentation (with
  # _create_param_groups_fp16_flat_cpu_memory): a sub-group's fp16 partition
  # stays in CPU memory when its running end fits in max_in_cpu elements;
  # past it, its parameters live on NVMe (flat buffer None).
  | ([foreach $groups[] as $g (0; . + ($g | add); .)]) as $ends
  | [range(0; $groups | length) as $i
     | $groups[$i] as $g | ($g | add) as $n
     # stage3.py _swappable_optimizer_subgroup -> OptimizerSwapper.swappable_tensor
     | ($c.opt_nvme and ($n * $opt_es >= $min_aio)) as $oswap
     | ($c.param_nvme and ($ends[$i] > $c.max_in_cpu)) as $pnvme
     | {
         id: $i, numel: $n, params: ($g | length),
         optimizer_swap: $oswap, params_on_nvme: $pnvme,
         # partitioned_optimizer_swapper.py _swap_in_parameter: every state
         # tensor is read with _io_aligned_numel(numel) elements; the
         # pipelined swapper also writes the aligned buffers (SwapBufferManager
         # .allocate narrows to aligned_numel).
         state_bytes: (if $oswap then io_aligned($n; $a_opt) * $opt_es else 0 end),
         state_tensors: (if $oswap then $state_tensors else [] end),
         # stage3.py partition_grads -> OptimizerSwapper._swap_out_gradients:
         # one file per parameter's fp32 gradient partition whose aligned head
         # is swappable ({param_id}_gradient_{offset}_{length}.tensor.swp).
         grad_bytes: (if $oswap then [$g[] | select(. * $opt_es >= $min_aio)
                        | aligned_head(.; $a_opt) | select(. * $opt_es >= $min_aio) | . * $opt_es]
                      else [] end),
         # partitioned_param_swapper.py swap_in/_allocate_and_return_buffers_for_swap_in
         # and swap_out_partitioned_params: one file per swappable parameter
         # partition ({param_id}_param.tensor.swp), _io_aligned_numel elements.
         param_bytes: (if $pnvme then [$g[] | select(. * $par_es >= $min_aio)
                         | io_aligned(.; $a_par) * $par_es] else [] end)
       }
    ] as $sg
  # Configurations DeepSpeed itself rejects (an assert at init or in the
  # first step), and plans with nothing to swap.
  | ([$sg[] | select(.optimizer_swap)] | length) as $nopt
  | (($state_tensors | length) + 1) as $bufs_per_sg
  | (if $nopt > 1 then 1 + (if $c.pipeline_read then 1 else 0 end) + (if $c.pipeline_write then 1 else 0 end)
     else 1 end) as $sgs_held
  | ($bufs_per_sg * $sgs_held) as $bufs_needed
  | ([$parts[] | select(. * $par_es >= $min_aio and . >= $c.param_buffer_size)] | length) as $too_big
  | ([$sg[] | (.state_tensors | length) + (.grad_bytes | length) + (.param_bytes | length)] | add) as $nfiles
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
    elif $nfiles == 0 then
      {error: "--params=\($params) --world=\($world): nothing is swapped: every sub-group and parameter partition is below min_aio_bytes=\($min_aio) (optimizer_utils.py swappable_tensor)"}
    else
  # File classes: files of one sub-group, one kind and one size (one fio job
  # each; files are named CLASS.N.tensor.swp).
    def classes($s):
      (if $s.state_bytes > 0 then [{id: "sg\($s.id)-state", dir: "optimizer", kind: "state",
           sg: $s.id, count: ($s.state_tensors | length), bytes: $s.state_bytes}] else [] end)
      + ($s.grad_bytes | group_by(.) | to_entries | map({id: "sg\($s.id)-grad\(.key)", dir: "optimizer",
           kind: "grad", sg: $s.id, count: (.value | length), bytes: .value[0]}))
      + ($s.param_bytes | group_by(.) | to_entries | map({id: "sg\($s.id)-param\(.key)", dir: "params",
           kind: "param", sg: $s.id, count: (.value | length), bytes: .value[0]}));
    ([$sg[] | classes(.)] | flatten) as $classes
  # A class moved in one direction by one handle with `depth` tensors issued
  # before the handle's wait().
  | def io($kinds; $sgs; $rw; $handle; $depth):
      [$sgs[] as $s | $classes[] | select((.kind | IN($kinds[])) and .sg == $s)
       | {class: .id, dir, kind, rw: $rw, handle: $handle, count, bytes,
          iodepth: ([.count, $depth] | min)}];
    # The same, one tensor class after the other on its handle (a layer at a
    # time): the replay chains these jobs with fio wait_for.
    def serial_io($kinds; $sgs; $rw; $handle; $depth):
      io($kinds; $sgs; $rw; $handle; $depth) | map(.serial = true);
    ([$sg[] | select(.params_on_nvme) | .id]) as $nvme_sgs
  | ([$sg[] | select(.optimizer_swap) | .id]) as $opt_sgs
  # optimizer_utils.py _swap_out_gradients -> async_swapper.py
  # AsyncTensorSwapper: gradients are packed into buffer_count pinned buffers
  # of largest_numel (aligned) elements; a full buffer is written, all of them
  # are waited for when none is free: up to buffer_count x (tensors per
  # buffer) writes in flight.
  | (($sg | map(.numel) | max) as $l | io_aligned($l; $a_opt)) as $largest
  | ([$sg[].grad_bytes[]] | if length == 0 then 1 else max / $opt_es end) as $gmax
  | ([1, $c.opt_buffer_count * (($largest / $gmax) | floor)] | max) as $grad_depth
  | ($c.opt_nvme and ($c.pipeline_read or $c.pipeline_write)) as $pipelined
  # stage3.py step: for each sub-group: _prepare_sub_group (swap in state and
  # gradients), _optimizer_step, _reassign_or_swap_out_partitioned_parameters
  # (fp16 params written by the param swapper's write handle),
  # _release_sub_group (swap out state). Per sub-group: reads R (state and
  # gradients, one op), the parameter write P, the state write S.
  # The fp16 parameter write of a sub-group completes before the code goes
  # on (swap_out_partitioned_params waits: SwapBufferPool.swap_out
  # async_op=False).
  | def reads($i): io(["state", "grad"]; [$i]; "read"; "optimizer-read"; 1e18);
    # R then P on one chain: P waits for R's state read (the largest of the
    # op's tensors: fio's wait_for names one job; the gradient reads of the
    # same op run beside it).
    def reads_then($i; $ch): reads($i) | map(if .kind == "state" then .serial = true | .chain = $ch else . end);
    def pwrite($i; $ch): io(["param"]; [$i]; "write"; "param-write"; 1e18) | map(.serial = true | .chain = $ch);
    def swrite($i; $ch): io(["state"]; [$i]; "write"; "optimizer-write"; 1e18) | map(.serial = true | .chain = $ch);
    def writes($i): pwrite($i; "sg\($i)-out") + swrite($i; "sg\($i)-out");
    ($sg | length) as $n | $opt_sgs as $o | ($o | length) as $m
  | (if $pipelined then
       # pipelined_optimizer_swapper.py PipelinedOptimizerSwapper: a read
       # handle and a write handle. swap_in_optimizer_state(i, next): waits
       # for the read of i (issued now, or earlier as ASYNC_SWAP_IN), then,
       # with pipeline_read, issues the read of the next swappable sub-group
       # (stage3.py _create_next_swappable_fp32_groups) without waiting.
       # swap_out_optimizer_state(i, async_swap = a next exists): first waits
       # for the ASYNC_SWAP_OUT of the previous sub-group (_complete_swap_out),
       # then issues the state write of i; with pipeline_write (and a next
       # sub-group) it is left in flight, else waited for at once.
       # Between the two, P(i) runs and is waited for. With no compute and
       # o_j the swappable sub-groups (m of them):
       if $c.pipeline_read and ($c.pipeline_write | not) then
         # R(o_j+1) is issued after R(o_j) completes and runs beside
         # P(o_j) -> S(o_j) (S waited for); the next wait is for R(o_j+1).
         # Exact: stage j = R(o_j) || (P(o_j-1) -> S(o_j-1)).
         [range(0; $m + 1) as $k
          | {name: "stage\($k)",
             jobs: ((if $k < $m then reads($o[$k]) else [] end) + (if $k > 0 then writes($o[$k - 1]) else [] end))}]
       elif $c.pipeline_write and ($c.pipeline_read | not) then
         # R(o_j) is issued and waited for, then P(o_j), while S(o_j-1) is
         # in flight; S(o_j-1) is waited for after P(o_j), then S(o_j)
         # issued. Exact: stage j = (R(o_j) -> P(o_j)) || S(o_j-1); the
         # last S waited for at once (no next sub-group).
         [range(0; $m + 1) as $k
          | {name: "stage\($k)",
             jobs: ((if $k < $m then reads_then($o[$k]; "sg\($o[$k])-in") + pwrite($o[$k]; "sg\($o[$k])-in") else [] end)
                    + (if $k > 0 then swrite($o[$k - 1]; "sg\($o[$k - 1])-out") else [] end))}]
       else
         # Both: after waiting for R(o_j), R(o_j+1) is issued and P(o_j)
         # runs while S(o_j-1) is still in flight; after P(o_j), S(o_j-1) is
         # waited for and S(o_j) issued; then R(o_j+1) is waited for. So
         # the next R is issued when R(o_j+1), P(o_j) and S(o_j-1) have all
         # ended: stage j+1 = R(o_j+1) || P(o_j) || S(o_j-1), after a
         # stage 0 = R(o_0) and before a last stage S(o_m-1) (waited for at
         # once). One liberty: DeepSpeed issues S(o_j-1) as soon as
         # P(o_j-1) and S(o_j-2) end, so it may start before the stage
         # barrier (beside the end of R(o_j)); fio's wait_for names one
         # job, so the replay starts it with its stage.
         [{name: "stage0", jobs: (if $m > 0 then reads($o[0]) else [] end)}]
         + [range(0; $m) as $j
            | {name: "stage\($j + 1)",
               jobs: ((if $j + 1 < $m then reads($o[$j + 1]) else [] end)
                      + pwrite($o[$j]; "sg\($o[$j])-param")
                      + (if $j > 0 then swrite($o[$j - 1]; "sg\($o[$j - 1])-out") else [] end))}]
         + [{name: "stage\($m + 1)", jobs: (if $m > 0 then swrite($o[$m - 1]; "sg\($o[$m - 1])-out") else [] end)}]
       end
     else
       # partitioned_optimizer_swapper.py: one handle; swap_in_optimizer_state
       # reads the state tensors and waits (_swap_in_parameter), then the
       # gradients and waits (_swap_in_gradients); stage3.py step then writes
       # the fp16 parameters and waits (_reassign_or_swap_out_partitioned_parameters
       # -> partitioned_param_swapper.py swap_out_partitioned_params ->
       # utils.py SwapBufferPool.swap_out, async_op=False) before
       # swap_out_optimizer_state writes the state and waits.
       [range(0; $n) as $i
        | {name: "sg\($i)-in", jobs: io(["state"]; [$i]; "read"; "optimizer"; 1e18)},
          {name: "sg\($i)-in-grad", jobs: io(["grad"]; [$i]; "read"; "optimizer"; 1e18)},
          {name: "sg\($i)-param-out", jobs: io(["param"]; [$i]; "write"; "param-write"; 1e18)},
          {name: "sg\($i)-out", jobs: io(["state"]; [$i]; "write"; "optimizer"; 1e18)}]
     end) as $opt_stages
  # One step = gradient_accumulation_steps micro-steps (forward and
  # backward each), then one optimizer step. Gradients are swapped out only
  # at the accumulation boundary (stage3.py partition_grads: before it they
  # are accumulated in the CPU grad partitions, __param_id_to_grad_partition);
  # NVMe parameters are read in every forward and backward.
  | $c.gas as $gas
  | def mb($u): if $gas > 1 then "-mb\($u)" else "" end;
    def micro($u): if $gas > 1 then {micro_step: $u} else {} end;
    [range(1; $gas + 1) as $u
     | (
      # Forward: partitioned_param_coordinator fetches each layer's
      # parameters; the param swapper swap_in() reads them into its
      # buffer_count buffers of buffer_size elements (at most buffer_count
      # parameters in flight, partitioned_param_swapper.py swap_in).
      {name: "forward", stages: [{name: "param-in\(mb($u))", jobs: serial_io(["param"]; $nvme_sgs; "read"; "param-read"; $c.param_buffer_count)}]} + micro($u),
      # Backward: the same parameters are read again while (at the
      # accumulation boundary) the gradient partitions are written by the
      # optimizer swapper's (write) handle, last layer first.
      {name: "backward", stages: [{name: ((if $u == $gas then "param-in-grad-out" else "param-in" end) + mb($u)),
         jobs: (serial_io(["param"]; $nvme_sgs | reverse; "read"; "param-read"; $c.param_buffer_count)
                + (if $u == $gas then serial_io(["grad"]; $opt_sgs | reverse; "write"; (if $pipelined then "optimizer-write" else "optimizer" end); $grad_depth) else [] end))}]} + micro($u))]
    + [{name: "optimizer", stages: $opt_stages}]
    | map(.stages |= map(select(.jobs | length > 0)
          | .read_bytes_per_rank = ([.jobs[] | select(.rw == "read") | .count * .bytes] | add // 0)
          | .write_bytes_per_rank = ([.jobs[] | select(.rw == "write") | .count * .bytes] | add // 0)))
    | map(.read_bytes_per_rank = ([.stages[].read_bytes_per_rank] | add // 0)
          | .write_bytes_per_rank = ([.stages[].write_bytes_per_rank] | add // 0)
          | .read_bytes = .read_bytes_per_rank * $ranks
          | .write_bytes = .write_bytes_per_rank * $ranks)
    | . as $phases
  | {
      tool: "tswap-zero",
      inputs: {params: $params, world: $world, ranks: $ranks, param_numel: $param_numel},
      config: ($c | del(.thread_count_ignored) + {optimizer_state: $state_names,
               swapper: (if $pipelined then "PipelinedOptimizerSwapper" else "PartitionedOptimizerSwapper" end),
               min_aio_bytes: $min_aio, numel_alignment_fp32: $a_opt, numel_alignment_param: $a_par,
               param_element_bytes: $par_es}),
      defaults: $defaults,
      notes: (if $c.thread_count_ignored then ["aio.thread_count is not read by this DeepSpeed (aio_config.py get_aio_config reads intra_op_parallelism): 1 used"] else [] end),
      per_rank: {partition_numel: $rank_numel, model_tensors: $nparams, sub_groups: $sg,
                 files: ($classes | map(.count) | add // 0),
                 file_bytes: ($classes | map(.count * .bytes) | add // 0)},
      classes: $classes,
      files: (($classes | map(.count) | add // 0) * $ranks),
      phases: $phases,
      read_bytes_per_step: ([$phases[].read_bytes] | add),
      write_bytes_per_step: ([$phases[].write_bytes] | add)
    }
    end
  end
