# check-settings.jq - the aio settings a fleet's stack checks judge
# against (fleet-report.sh fleet_checks): best-aio.json's (input) when the
# run has a pick, else DeepSpeed's defaults (block_size 1 MiB, queue_depth
# 8, one thread); the io_uring backend when the plan ($plan[0]) has
# io_uring points. Output: {block_size, queue_depth, threads, backend, from}.
(.aio // {}) as $a
| {block_size: ($a.block_size // 1048576), queue_depth: ($a.queue_depth // 8),
   threads: ($a.intra_op_parallelism // $a.thread_count // 1),
   backend: (if any($plan[0][]?; .backend == "io_uring") then "io_uring" else "libaio" end),
   from: (if $a.block_size then "best-aio.json" else "DeepSpeed's defaults" end)}
