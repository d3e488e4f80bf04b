.best.aio_source as $b
| if $b == null then {} else
  {aio: {block_size: $b.block, queue_depth: $b.qd, intra_op_parallelism: $b.threads,
	 single_submit: ($b.submit == "single"), overlap_events: ($b.window == "overlap"),
	 use_gds: false}} end
