# sweep/zero/fiojob.jq - the fio job file that replays a tswap-zero plan.
#
# Owns: the job text (step.fio, layout.fio, jobs/zero-infinity-step-*.fio)
# and the replay sizes. Reads: plan.json (plan.jq) on stdin and
#   --arg mode step|layout|totals|folders   the step; a write of every file once (the
#                        swap files' initial contents, as DeepSpeed's
#                        _initialize_parameters writes them); the replay
#                        byte totals as JSON; or the swap folders, one a line
#   --arg engine PATH    tswap.so (literal, e.g. ${TSWAP_ENGINE})
#   --argjson dirs [DIR...]   per rank, the folder that stands for nvme_path
#                        (rank R uses dirs[R]; the caller spreads ranks over
#                        targets round-robin)
#   --argjson unit N     replay size unit in bytes: the target's DIO offset
#                        alignment (O_DIRECT needs whole units)
#   --argjson scale N    divide every tensor size by N (1 = real sizes)
#   --arg header TEXT    comment lines put first (may be "")
# Writes: fio job text on stdout (or the totals object).
#
# Mapping: one fio job per (rank, tensor class, direction), nrfiles = the
# tensors of the class, filesize = bs = one tensor (so each file is one swap
# operation: async_pread/async_pwrite of one tensor), iodepth = tensors
# issued before the handle's wait(). A stage of the plan is one fio group
# (stonewall on its first job: the barrier where DeepSpeed waits); jobs of
# one handle that DeepSpeed runs one after the other are chained with
# wait_for. The aio block maps onto tswap's options as docs/deepspeed.md says.

def ceil_div($a; $b): (($a + $b - 1) / $b) | floor;

# DeepSpeed's tensor bytes are multiples of AIO_ALIGNED_BYTES x
# intra_op_parallelism (1024 x P), not always of the target's DIO alignment:
# the replay rounds each tensor up to unit x P (tswap needs bs / P aligned).
. as $plan
| ($unit * $plan.config.intra_op_parallelism) as $u
| def replay($b): ceil_div(ceil_div($b; $scale); $u) * $u;
  def dtype_dir: {bf16: "bfloat16params", fp16: "float16params", fp32: "float32params"}[$plan.config.param_dtype];
  # DeepSpeed's layout under nvme_path (optimizer_utils.py OptimizerSwapper
  # .__init__, partitioned_param_swapper.py _configure_aio), relative to
  # dirs[R]: fio creates the folders of a filename_format.
  def subdir($r; $dir):
    "zero_stage_3/" + (if $dir == "optimizer" then "optimizer" else dtype_dir end) + "/rank\($r)";
  def folder($r; $dir): "\($dirs[$r])/" + subdir($r; $dir);
  def job($r; $j; $name):
    ["[\($name)]",
     "directory=\($dirs[$r])",
     "filename_format=\(subdir($r; $j.dir))/\($j.class).$filenum.tensor.swp",
     "nrfiles=\($j.count)",
     "filesize=\(replay($j.bytes))",
     "size=\($j.count * replay($j.bytes))",
     "bs=\(replay($j.bytes))",
     "iodepth=\($j.iodepth)",
     "rw=\($j.rw)"];
  def global:
    ["[global]",
     "ioengine=external:\($engine)",
     "tswap_backend=libaio",
     "tswap_block_size=\($plan.config.block_size)",
     "tswap_queue_depth=\($plan.config.queue_depth)",
     "tswap_submit=\(if $plan.config.single_submit then "single" else "block" end)",
     "tswap_window=\(if $plan.config.overlap_events then "overlap" else "sequential" end)",
     "tswap_threads=\($plan.config.intra_op_parallelism)",
     "direct=1",
     "thread",
     "file_service_type=roundrobin",
     "fallocate=none",
     ""];
  ($plan.inputs.ranks) as $ranks
| if $mode == "totals" then
    {read: ((([$plan.phases[].stages[].jobs[] | select(.rw == "read") | .count * replay(.bytes)] | add // 0)) * $ranks),
     write: ((([$plan.phases[].stages[].jobs[] | select(.rw == "write") | .count * replay(.bytes)] | add // 0)) * $ranks),
     layout: ((([$plan.classes[] | .count * replay(.bytes)] | add // 0)) * $ranks),
     per_rank_layout: ([$plan.classes[] | .count * replay(.bytes)] | add // 0)}
  elif $mode == "folders" then
    (range(0; $ranks) as $r | [$plan.classes[].dir] | unique[] | folder($r; .))
  elif $mode == "layout" then
    ((if $header != "" then $header else empty end), global[],
     ([range(0; $ranks) as $r | $plan.classes[] as $c
       | job($r; $c + {class: $c.id, rw: "write", iodepth: ([$c.count, 4] | min)}; "layout.r\($r).\($c.id)") + [""]]
      | flatten[]))
  else
    ((if $header != "" then $header else empty end), global[],
     ([$plan.phases[] as $p | $p.stages[] as $s
       | [range(0; $ranks) as $r | $s.jobs | to_entries[]
          | . as $e
          | ($e.value.chain // $e.value.handle) as $h
          # the previous serial job of this rank and chain (by default its
          # handle) in this stage
          | ([$s.jobs[0:$e.key][] | select(.serial == true and (.chain // .handle) == $h)] | last) as $prev
          | {r: $r, j: $e.value, name: "\($p.name).\($s.name).r\($r).\($e.value.class).\($e.value.rw)",
             wait: (if $e.value.serial == true and $prev != null
                    then "\($p.name).\($s.name).r\($r).\($prev.class).\($prev.rw)" else null end)}]
       | to_entries[]
       | job(.value.r; .value.j; .value.name)
         + (if .key == 0 then ["stonewall"] else [] end)
         + (if .value.wait then ["wait_for=\(.value.wait)"] else [] end)
         + [""]]
      | flatten[]))
  end
