# sweep/zero/plan-steps.jq - the swap jobs of initialisation and of a
# first and a steady training step (plan.jq's third part).
# zero_phases($c; $r): from zero_config's settings and zero_rank's
# geometry, {steady, first, init: each a list of phases, a phase's stages
# in issue order, a stage's jobs run at once; pipelined: the optimizer
# swapper is PipelinedOptimizerSwapper; gbuf_bytes: a gradient buffer}.
# Reads plan.jq's $ranks.

include "plan-rank" {search: "./"};

def min2($a; $b): if $a < $b then $a else $b end;

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

def zero_phases($c; $r):
    $r.sg as $sg | $r.pfile as $pfile | $r.nvme_params as $nvme_params | $r.full as $full
  | $r.nparams as $nparams | $r.opt_es as $opt_es | $r.a_opt as $a_opt
  | ($sg | map(select(.optimizer_swap) | .id)) as $o
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
    {steady: (train(false) | totals), first: (train(true) | totals), init: (init | totals),
     pipelined: $pipelined, gbuf_bytes: $gbuf_bytes};
