# sweep/zero/plan.jq - the swap traffic of ZeRO-Infinity's initialisation,
# first training step and steady training step, computed from a ds_config
# (the input) by DeepSpeed's rules.
#
# Owns: the plan (plan.json), from plan-config.jq (the ds_config),
# plan-rank.jq (a rank's files) and plan-steps.jq (the swap jobs).
# Reads: the ds_config on stdin and
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

include "plan-config" {search: "./"};
include "plan-rank" {search: "./"};
include "plan-steps" {search: "./"};

zero_config as $z
| if $z | has("error") then $z
  else $z.c as $c | $z.defaults as $defaults | zero_rank($c) as $r
  | if $r | has("error") then $r
    else zero_phases($c; $r) as $ph
    | $r.sg as $sg | $r.pfile as $pfile | $r.nvme_params as $nvme_params | $r.nparams as $nparams
    | $r.state_names as $state_names | $r.min_aio as $min_aio | $r.a_opt as $a_opt | $r.a_par as $a_par
    | $r.par_es as $par_es | $r.rank_numel as $rank_numel
    | $ph.pipelined as $pipelined | $ph.gbuf_bytes as $gbuf_bytes
    | $ph.steady as $steady | $ph.first as $first | $ph.init as $init
  | $ph[$step] as $phases
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
