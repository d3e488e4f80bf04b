# best-aio.jq - best-aio.json from aggregate.json: DeepSpeed's aio keys and
# JSON types (docs/deepspeed.md), {} without a libaio point. Used by
# results.sh write_best_aio.
.best.aio_source as $b
| if $b == null then {} else
  {aio: {block_size: $b.block, queue_depth: $b.qd, intra_op_parallelism: $b.threads,
	 single_submit: ($b.submit == "single"), overlap_events: ($b.window == "overlap"),
	 use_gds: false}} end
