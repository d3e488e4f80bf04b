# best-aio.jq - best-aio.json from aggregate.json: DeepSpeed's aio keys and
# JSON types (docs/deepspeed.md) from the trustworthy libaio pick, and the
# pick's verdict as "reason" (pick.jq; DeepSpeed ignores the key); {}
# without a libaio point with a result; {"trusted": false, "reason": ...}
# and no aio block when libaio points have results but every one is
# flagged (docs/sweep.md, exit code 4). Used by results.sh write_best_aio.
#
# --arg ds VERSION (optional): --ds-version (MAJOR.MINOR[.PATCH], checked
# by args.sh); absent or "" for the newest releases. The aio block has exactly the keys that version
# reads, and "deepspeed_versions" states the releases it is for (PEP 440
# specifiers), from deepspeed/runtime/swap_tensor/constants.py and
# aio_config.py (get_aio_config) at each release tag:
#   v0.3.15: the aio section appears (thread_count, no use_gds);
#   v0.15.0: use_gds (commit 5f0d177fd, "DeepNVMe GDS");
#   v0.16.4: thread_count renamed intra_op_parallelism (commit c9da4892a).
# get_aio_config reads its keys with get_scalar_param, which ignores any
# other key: an older release given intra_op_parallelism silently runs one
# thread, hence one key set per range.
def vnum: split(".") | map(tonumber) | . + [0, 0, 0] | .[0:3];
(($ARGS.named.ds // "") | if . == "" then [999999, 0, 0] else vnum end) as $v
| (if $v >= [0, 16, 4] then {range: ">=0.16.4", threads: "intra_op_parallelism", gds: true}
   elif $v >= [0, 15, 0] then {range: ">=0.15.0,<0.16.4", threads: "thread_count", gds: true}
   else {range: ">=0.3.15,<0.15.0", threads: "thread_count", gds: false} end) as $k
| .best.aio_source as $b
| if $b != null then
  {deepspeed_versions: $k.range,
   aio: ({block_size: $b.block, queue_depth: $b.qd}
	 + {($k.threads): $b.threads}
	 + {single_submit: ($b.submit == "single"), overlap_events: ($b.window == "overlap")}
	 + (if $k.gds then {use_gds: false} else {} end)),
   reason: $b.verdict}
  elif (.trust.libaio_with_result // 0) > 0 then
  {trusted: false,
   reason: "every libaio point with a result is flagged (above the ceiling, failed, CV or not steady: report.md says which); no config is given"}
  else {} end
