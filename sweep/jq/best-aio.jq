# best-aio.jq - best-aio.json from aggregate.json: DeepSpeed's aio keys and
# JSON types (docs/deepspeed.md) from the trustworthy libaio pick; {}
# without a libaio point with a result; {"trusted": false, "reason": ...}
# and no aio block when libaio points have results but every one is
# flagged (docs/sweep.md, exit code 4). Used by results.sh write_best_aio.
.best.aio_source as $b
| if $b != null then
  {aio: {block_size: $b.block, queue_depth: $b.qd, intra_op_parallelism: $b.threads,
	 single_submit: ($b.submit == "single"), overlap_events: ($b.window == "overlap"),
	 use_gds: false}}
  elif (.trust.libaio_with_result // 0) > 0 then
  {trusted: false,
   reason: "every libaio point with a result is flagged (above the ceiling, failed, CV or not steady: report.md, Warnings); no config is given"}
  else {} end
