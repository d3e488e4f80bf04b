# sweep/zero/plan-rank.jq - one rank's tensors and swap files (plan.jq's
# second part). zero_rank($c): from zero_config's settings, {state_names,
# opt_es, par_es (element bytes), min_aio (bytes), a_opt, a_par (numel
# alignments), nparams, full, parts (each tensor's elements, whole and per
# rank), rank_numel, pfile (parameter files by ds_id), sg (the sub-groups),
# nvme_params (NVMe parameters in forward order, with reuse and kept)} or
# {error: "LINE"} for a plan DeepSpeed would assert on or with nothing to
# swap. Reads plan.jq's $params, $world, $param_numel.

def ceil_div($a; $b): (($a + $b - 1) / $b) | floor;
# optimizer_utils.py OptimizerSwapper._io_aligned_numel (and the same
# function in partitioned_param_swapper.py, async_swapper.py): round an
# element count up to numel_alignment.
def io_aligned($n; $a): if $n % $a == 0 then $n else $n + $a - ($n % $a) end;
# optimizer_utils.py _adjust_for_misaligned_lengths: a gradient is cut into
# its aligned head (swapped) and a remainder < numel_alignment (kept in memory).
def aligned_head($n; $a): $n - ($n % $a);

def zero_rank($c):
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
      {state_names: $state_names, opt_es: $opt_es, par_es: $par_es, min_aio: $min_aio, a_opt: $a_opt,
       a_par: $a_par, nparams: $nparams, full: $full, parts: $parts, rank_numel: $rank_numel,
       pfile: $pfile, sg: $sg, nvme_params: $nvme_params}
    end;
