# sweep/zero/fiojob.jq - the fio job file that replays a tswap-zero plan.
#
# Owns: the job text (step.fio, layout.fio, jobs/zero-infinity-step-*.fio)
# and the replay sizes. Reads: plan.json (plan.jq) on stdin and
#   --arg mode step|layout|totals|folders   the step; a write of every file
#                        that exists before the step (plan.json layout_files);
#                        the replay byte totals as JSON; or the swap folders,
#                        one a line
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
# Mapping: one fio job per (rank, plan job) - files of one folder and one
# size, named as DeepSpeed names them, moved in one direction: filename =
# the files (fio's ':' list; a list longer than fio's 4096-character option
# value is cut into several jobs, chained when the plan job is), nrfiles =
# their count, filesize = bs = one tensor (so each file is one swap
# operation: async_pread/async_pwrite of one tensor), iodepth = tensors
# issued before the handle's wait(). A stage of the plan is one fio group
# (stonewall on its first job: the barrier where DeepSpeed waits); jobs
# DeepSpeed runs one after the other on a handle are chained with wait_for.
# The aio block maps onto tswap's options as docs/deepspeed.md says.

def ceil_div($a; $b): (($a + $b - 1) / $b) | floor;
# fio takes an option value of at most 4096 characters (parse.c) and a job
# file line of OPT_LEN_MAX (parse.h: 8192): a job's filename list stays below
# this many characters.
def max_line: 4000;
# FILES cut into lists whose ':'-joined length stays below max_line.
def chunks:
  reduce .[] as $f ([];
    if length > 0 and ((.[-1] | map(length + 1) | add) + ($f | length) < max_line)
    then .[-1] += [$f] else . + [[$f]] end);

# DeepSpeed's tensor bytes are multiples of AIO_ALIGNED_BYTES x
# intra_op_parallelism (1024 x P), not always of the target's DIO alignment:
# the replay rounds each tensor up to unit x P (tswap needs bs / P aligned).
. as $plan
| ($unit * $plan.config.intra_op_parallelism) as $u
| def replay($b): ceil_div(ceil_div($b; $scale); $u) * $u;
  def dtype_dir: {bf16: "bfloat16params", fp16: "float16params", fp32: "float32params"}[$plan.config.param_dtype];
  # DeepSpeed's folders under nvme_path (optimizer_utils.py OptimizerSwapper
  # .__init__: zero_stage_3/optimizer/rank<R>; partitioned_param_swapper.py
  # _configure_aio: zero_stage_3/<dtype>params/rank<R>); fio creates them
  # (filesetup.c create_work_dirs).
  def folder($r; $dir):
    "\($dirs[$r])/zero_stage_3/" + (if $dir == "optimizer" then "optimizer" else dtype_dir end) + "/rank\($r)";
  def job($r; $j; $name):
    ["[\($name)]",
     "directory=\(folder($r; $j.dir))",
     "filename=\($j.files | join(":"))",
     "nrfiles=\($j.files | length)",
     "filesize=\(replay($j.bytes))",
     "size=\(($j.files | length) * replay($j.bytes))",
     "bs=\(replay($j.bytes))",
     "iodepth=\([$j.iodepth, ($j.files | length)] | min)",
     "rw=\($j.rw)"];
  # A plan job cut into fio jobs (one, unless its list is too long), each
  # with the plan job's fields and its part of the files.
  def parts: . as $j | ($j.files | chunks) as $c | ($c | length) as $n
    | $c | to_entries[] | $j + {files: .value, part: (if $n > 1 then "-c\(.key)" else "" end)};
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
     # files are set up when their job starts, so a file is created by its
     # first write, as DeepSpeed creates it (backend.c thread_main)
     "create_serialize=0",
     ""];
  ($plan.inputs.ranks) as $ranks
  # The layout: the files that exist before the step, one write each,
  # grouped by folder and size.
| ($plan.layout_files | group_by([.dir, .bytes])
   | map({dir: .[0].dir, bytes: .[0].bytes, files: map(.name), rw: "write", iodepth: 4})
   | to_entries | map(.value + {id: "f\(.key)"})) as $layout
| if $mode == "totals" then
    {read: ((([$plan.phases[].stages[].jobs[] | select(.rw == "read") | .count * replay(.bytes)] | add // 0)) * $ranks),
     write: ((([$plan.phases[].stages[].jobs[] | select(.rw == "write") | .count * replay(.bytes)] | add // 0)) * $ranks),
     layout: ((([$plan.layout_files[] | replay(.bytes)] | add // 0)) * $ranks),
     layout_jobs: ($layout | length),
     # room: every file the rank ever holds (the step creates those not laid out)
     per_rank_layout: ([$plan.swap_files[] | replay(.bytes)] | add // 0)}
  elif $mode == "folders" then
    (range(0; $ranks) as $r | [$plan.swap_files[].dir] | unique[] | folder($r; .))
  elif $mode == "layout" then
    ((if $header != "" then $header else empty end), global[],
     ([range(0; $ranks) as $r | $layout[] | parts
       | job($r; .; "layout.r\($r).\(.id)\(.part)") + [""]]
      | flatten[]))
  else
    ((if $header != "" then $header else empty end), global[],
     ([$plan.phases[] as $p | $p.stages[] as $s
       # the stage's fio jobs, each with the previous serial one of its
       # chain (by default its handle) when it is serial itself
       | [foreach ([$s.jobs[] | parts][]) as $j ({last: {}};
            ($j.chain // $j.handle) as $h
            | .prev = (if $j.serial == true then .last[$h] else null end)
            | if $j.serial == true then .last[$h] = $j else . end;
            $j + {prev: .prev})] as $xs
       | [range(0; $ranks) as $r | "\($p.name).\($s.name).r\($r)" as $pre | $xs[]
          | {r: $r, j: ., name: "\($pre).\(.id)\(.part).\(.rw)",
             wait: (if .prev != null then "\($pre).\(.prev.id)\(.prev.part).\(.prev.rw)" else null end)}]
       | to_entries[]
       | job(.value.r; .value.j; .value.name)
         + (if .key == 0 then ["stonewall"] else [] end)
         + (if .value.wait then ["wait_for=\(.value.wait)"] else [] end)
         + [""]]
      | flatten[]))
  end
