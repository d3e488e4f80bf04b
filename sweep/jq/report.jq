# report.jq - report.md's sections, a def each (report.sh write_report
# runs them all in one jq, jq/report-md.jq; tests call some alone:
# report-pick.jq, report-budget.jq, report-warnings.jq). Input: aggregate.json
# unless a def says otherwise.
include "pick";

# report_pick: report.md's first lines: the pick best-aio.json comes
# from, its median and min-max interval and its verdict (pick.jq: won by
# N% outside the noise, or tied and the cheapest), then the best read and
# write with theirs, or why a direction has none and what to do; or that
# no point is trustworthy.
def report_pick:
	def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
	def r1: . * 10 | round / 10;
	def sz: if . >= 1073741824 and . % 1073741824 == 0 then "\(. / 1073741824)G"
		elif . >= 1048576 and . % 1048576 == 0 then "\(. / 1048576)M"
		elif . >= 1024 and . % 1024 == 0 then "\(. / 1024)K" else tostring end;
	def cfgtext: "\(.backend), block \(.block | sz), queue depth \(.qd), \(.submit) submit, \(.window) window, \(.threads) thread(s), tensor \(.tensor | sz)";
	def ival: "\(.gbs | g) GB/s (min-max \(.lo | g)-\(.hi | g))";
	.best as $b
	| if $b.aio_source then
		($b.aio_source | "**Pick** (best-aio.json): \(cfgtext); \(.why): \(ival)", "- verdict: \(.verdict)")
	  elif (.trust.trusted // 0) == 0 and (.trust.flagged // 0) > 0 then
		"**No trustworthy pick**: every point with a result is flagged (Warnings: above the ceiling, failed, CV or not steady); best-aio.json has no aio block and the sweep exits 4. Rerun on an idle machine, with more repeats (--repeat) or a longer runtime."
	  elif (.trust.libaio_with_result // 0) > 0 then
		"**No trustworthy libaio pick**: every libaio point with a result is flagged (Warnings); best-aio.json has no aio block and the sweep exits 4."
	  else "**No pick**: no libaio point with a result, so no DeepSpeed aio config." end,
	# a budget run whose final round ran shorter than fio's steady-state
	# window (budget.sh budget_plan): its pick ranks the first seconds
	(.budget // null | select(. != null and .steady_window_s != null and (.rounds[-1].runtime // 0) < .steady_window_s)
	 | "- caution: the budget's final round ran \(.rounds[-1].runtime) s per run, fixed: shorter than fio's steady-state window (\(.steady_window_s) s), so the pick ranks each point's first seconds (such as a write cache's burst) and no point could be flagged not steady\(if .steady_budget_s then "; --budget \(.steady_budget_s) gives the final round the window" else "" end)"),
	(. as $agg | "read", "write" | . as $d
	 | if $b[$d] then "- best \($d): \($b[$d] | ival): \($b[$d].verdict)"
	   else ($agg | none_why($d) | select(. != null) | "- best \($d): none: \(.)") end),
	"";

# report_head: report.md's header (after the title and the pick lines
# of report_pick) and best-settings table from sweep.json; $agg:
# aggregate.json (slurped). Input: sweep.json.
def report_head($agg; $notes; $dropped):
	($agg[0]) as $a
	| def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
	  def p1: if . == null then "-" else (. * 10 | round / 10 | tostring) end;
	  def sz: if . >= 1073741824 and . % 1073741824 == 0 then "\(. / 1073741824)G"
		  elif . >= 1048576 and . % 1048576 == 0 then "\(. / 1048576)M"
		  elif . >= 1024 and . % 1024 == 0 then "\(. / 1024)K" else tostring end;
	  def pc: (.pct_ceiling | p1) + (if .above_ceiling then " (above the ceiling: see Warnings)" else "" end);
	  def row: "| \(.backend) | \(.tensor | sz) | \(.block | sz) | \(.qd) | \(.submit) | \(.window) | \(.threads) | \(.iodepth) |";
	"- host: `\(.host)`, kernel \(.kernel), \(.fio_version), run started \(.created)",
	"- target: `\(.target)` (\(.target_kind)), \(.size) used",
	"- grid: **\(.grid)**\(if .grid_description != "" then " (\(.grid_description))" else "" end), \($a.points | length) points x \(.repeat) repeat(s), " +
	  (if .io_size != "" then "\(.io_size) per point" else "\(.runtime) s per point after a \(.ramp) s ramp" end),
	"- GB/s is 10^9 bytes/s, the median over repeats; op/s counts tensor-swap operations (fio IOPS at bs = tensor size)",
	"- device ceiling (fio's own libaio engine, bs=\(.ceiling_bs), iodepth=\(.ceiling_qd)\(if (.ceiling_jobs // 1) > 1 then " in 1 job and split over \(.ceiling_jobs) jobs (as many as the most parallel point has threads), the faster" else "" end): as many bytes in flight as the deepest point, same target): " +
	  (if .ceiling then "read \($a.ceiling.read | g) GB/s, write \($a.ceiling.write | g) GB/s" else "not measured (--no-ceiling)" end),
	(if $dropped == 1 then "- page cache: dropped (sync; echo 3 > /proc/sys/vm/drop_caches) before every read point" else empty end),
	(if $notes != "" then ($notes | split("\n") | map("- note: " + .) | join("\n")) else empty end),
	"",
	"## Best settings",
	"",
	"| | GB/s | % of ceiling | backend | tensor | block | queue depth | submit | window | threads | ops queued |",
	"|---|---|---|---|---|---|---|---|---|---|---|",
	(if $a.best.read then "| best read | \($a.best.read.gbs | g) | \($a.best.read | pc) \($a.best.read | row)" else "| best read | no trustworthy read point (none succeeded, or all are flagged: Warnings) | | | | | | | | | |" end),
	(if $a.best.write then "| best write | \($a.best.write.gbs | g) | \($a.best.write | pc) \($a.best.write | row)" else "| best write | no trustworthy write point (none succeeded, or all are flagged: Warnings) | | | | | | | | | |" end),
	(if $a.best.combined then "| best combined | \($a.best.combined.sum_gbs | g) = \($a.best.combined.read_gbs | g) read + \($a.best.combined.write_gbs | g) write | - \($a.best.combined | row)" else "| best combined | needs a read and a write of the same settings | | | | | | | | | |" end),
	"",
	"Best combined ranks settings by the **sum** of read and write GB/s, as DeepSpeed's ds_nvme_tune does; a job that mostly reads (inference weight streaming) should take the best read instead.",
	"";

# meta_report: report.md's "What was measured" section from meta.json
# (jq/meta.jq), the input.
def meta_report:
	def v: if . == null then "-" else tostring end;
	def gib: if . == null then "-" else "\(. / 1073741824 * 10 | round / 10) GiB" end;
	"## What was measured",
	"",
	"| | |",
	"|---|---|",
	"| target | `\(.target.path)` (\(.target.kind)) |",
	(if .target.filesystem then
	   (if .target.filesystem.note then "| filesystem | \(.target.filesystem.note) |"
	    else "| filesystem | \(.target.filesystem.type) on `\(.target.filesystem.source)`, mounted at `\(.target.filesystem.mountpoint)` (\(.target.filesystem.options)) |" end)
	 else empty end),
	(if .device.note then "| device | \(.device.note) |"
	 else "| device | `\(.device.path)` (\(.device.type) of \(.device.disk)): model \(.device.model | v), firmware \(.device.firmware | v), serial sha256 \(.device.serial_sha256_12 | v), \(.device.capacity_bytes | gib), \(if .device.rotational then "rotational" else "non-rotational" end), transport \(.device.transport | v) |",
	      "| block sizes | logical \(.device.logical_block_size) B, physical \(.device.physical_block_size) B |" end),
	(if .queue then "| queue | scheduler \(.queue.scheduler | v), nr_requests \(.queue.nr_requests | v), max_sectors_kb \(.queue.max_sectors_kb | v) (hw \(.queue.max_hw_sectors_kb | v)), io_poll \(.queue.io_poll | v), nvme poll_queues \(.queue.nvme_poll_queues | v) |" else empty end),
	(if .pcie.current_link_speed then
	   "| PCIe | \(.pcie.address): \(.pcie.current_link_speed) x\(.pcie.current_link_width) of max \(.pcie.max_link_speed) x\(.pcie.max_link_width)\(if .pcie.downgraded then " **(below the maximum)**" else "" end) |"
	 else "| PCIe | \(.pcie.note) |" end),
	"| NUMA | device node \(.numa.device_node | v)\(if .numa.note then " (\(.numa.note))" else "" end); CPUs allowed \(.numa.cpus_allowed | v); nodes online \(.numa.online_nodes | v) |",
	(if .nvme.note then "| NVMe | \(.nvme.note) |"
	 else "| NVMe | \(.nvme.model) firmware \(.nvme.firmware), MDTS \(.nvme.mdts | v) |" end),
	"| host | `\(.host.name)`, kernel \(.host.kernel), \(.host.cpu_model | v) x \(.host.cpus | v) CPUs, \(.host.memory_bytes | gib) memory, fs.aio-max-nr \(.host.fs_aio_max_nr | v), kernel.io_uring_disabled \(.host.kernel_io_uring_disabled | v) |",
	"| versions | tswap \(.versions.tswap), \(.versions.fio | v), engine `\(.versions.engine | v)` |",
	"",
	"All of it is in meta.json (also sweep.json and aggregate.json, key `meta`).",
	"";

# report_budget: report.md's "Budget" section of a --budget run, from
# aggregate.json's budget (budget.sh budget_into_aggregate): per round its
# runtime, ramp, repeats, the points run per direction, what was pruned at
# which GB/s (of that round's one short run), planned and measured time;
# then the time used and the final margins. Nothing without a budget.
def report_budget:
	def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
	def r1: . * 10 | round / 10;
	select(.budget != null) | .budget as $b
	| "## Budget: successive halving",
	  "",
	  "Budget \($b.seconds) s\(if $b.chosen_by_default then " (chosen by default: the exhaustive run of this grid would take more than an hour; --exhaustive runs every point)" else " (--budget)" end); \($b.used_s | r1) s used when the report was written (runs started at \($b.runs_start_s | r1) s, after the target's preparation). Round 1 runs every point once, short; each later round keeps half of each direction's points (the fastest, then the points tied with it within that run's noise, one tensor-swap op of its runtime + 5%, cheapest first by the pick's cost order, then the others by GB/s) and doubles the runtime; the final round, whose runtime was reserved first, measures the last 2 per direction with repeats and the device ceilings at the same runtime, and the pick uses only its runs (pruned points are never picked; the trust flags judge the final round's runs against those ceilings). Fio start-up was planned at \($b.overhead_estimate_s) s per run and re-planned with the measured cost after each round (docs/sweep.md, Budget).",
	  "",
	  "| round | runtime s | ramp s | repeats | points run | runs | planned s | took s | start-up s/run | pruned (GB/s in that round) |",
	  "|---|---|---|---|---|---|---|---|---|---|",
	  ($b.rounds[] | "| \(.round)\(if .final then " (final)" else "" end) | \(.runtime) | \(.ramp) | \(.repeats) | \(.groups | to_entries | map("\(.key) \(.value)") | join(", "))\(if .ceilings > 0 then " + \(.ceilings) ceiling" else "" end) | \(.runs) | \(.planned_s) | \(.wall_s) | \(.overhead_s) | \(if (.pruned | length) == 0 then "-" else (.pruned | map("`\(.point)` \(.gbs | g)\(if .why != "slower" then " (\(.why))" else "" end)") | join(", ")) end) |"),
	  "",
	  ($b.rounds[] | select(.stopped) | "Stopped in round \(.round): \(.stopped.why).", ""),
	  "Final margins:",
	  "",
	  ($b.final_margins | to_entries[] | .key as $d | .value
	   | "- \($d): `\(.point)` \(.gbs | g) GB/s (min-max \(.lo | g)-\(.hi | g)), \(if .runner_up == null then "no runner-up" else "\(if .margin_pct >= 0 then "+" else "" end)\(.margin_pct | r1)% over `\(.runner_up.point)` \(.runner_up.gbs | g) GB/s" end); \(.confidence)"),
	  (if ($b.final_margins | length) == 0 then "- none: no trustworthy point in the final round" else empty end),
	  "";

# report_other_backend: report.md: a note when another backend beat the
# best libaio point.
def report_other_backend:
	.best.aio_source as $b | ([.points[] | select(.backend != "libaio" and .gbs != null)] | max_by(.gbs)) as $o
	| if $o and ($o.gbs > ([.points[] | select(.backend == "libaio" and .rw == $o.rw and .gbs != null) | .gbs] | max // 0))
	  then "Note: the \($o.backend) backend did better (\($o.gbs * 1000 | round / 1000) GB/s \($o.rw)); DeepSpeed's aio handle uses libaio, so the config above is the best libaio point.\n"
	  else empty end;

# report_warnings: report.md's warnings (above the ceiling, CV, not
# steady, failed points: the flags that keep a point from the pick);
# $cvflag: the CV limit a point without its own cv_limit has.
def report_warnings($cvflag):
	def g: . * 1000 | round / 1000 | tostring;
	([.points[] | select(.above_ceiling) | "- **\(.point)**: \(.gbs | g) GB/s is more than 10% above the device ceiling: the page cache or a cache in the device is serving reads (the error behind DeepSpeed issue #998); do not trust this point."]
	+ [.points[] | select(.cv_flag) | "- \(.point): coefficient of variation \(.cv * 1000 | round / 10)% over \(.ok_runs) repeats (> \((.cv_limit // $cvflag) * 1000 | round / 10)%: 5%, or twice the median CV of the run's other points when that is more, at most 20%: docs/sweep.md): not repeatable"]
	+ [.points[] | select(.steady == false) | "- \(.point): not steady: fio's steady-state detection did not attain within the runtime in some repeat, and the last window moved by more than one tensor op (the drive was still changing speed); not picked"]
	+ [.points[] | select(.drops == true) | "- \(.point): drops during the run: its last third averaged \(.drop_pct | round)% below its first (fio bandwidth log; plots/bw-\(.point).png): the drive slowed down (SLC cache, throttling, garbage collection); a warning, the point may still be picked"]
	+ [.points[] | select(.status != "ok" and .status != "pruned") | "- \(.point): \(.status): \(.errors | unique | join("; "))"]) as $w
	| if ($w | length) == 0 then "None." else $w[] end;

# report_points: report.md's table of all points.
def report_points:
	def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
	def p1: if . == null then "-" else (. * 10 | round / 10 | tostring) end;
	def ms: if . == null then "-" else (. / 1000 * 100 | round / 100 | tostring) end;
	.points | sort_by([.rw, -(.gbs // -1)])[]
	| "| \(.point) | \(.gbs | g)\(if (.ok_runs // 0) > 1 then " (\(.lo | g)-\(.hi | g))" else "" end) | \(if .cv == null then "-" else (.cv * 100 | p1) + (if .cv_flag then " !" else "" end) end) | \(.pct_ceiling | p1)\(if .above_ceiling then " !" else "" end) | \(.ops_per_s | p1) | \(.clat_p50_us | ms) | \(.clat_p99_us | ms) | \(.clat_p999_us | ms) | \(.submit_per_gb | p1) | \(.status)\(if (.flags // []) != [] and .gbs != null then ", flagged: \(.flags | join(", "))" else "" end) |";

# report_ranks: report.md's section on points of several handles
# (ranks > 1, readwrite) from aggregate.json: aggregate GB/s (the sum of
# the handles'), the slowest rank's GB/s (a ZeRO step waits for it), read,
# write, per-target GB/s and % of the ceiling (fio libaio, as many jobs).
# Empty without such points.
def report_ranks:
	def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
	def p1: if . == null then "-" else (. * 10 | round / 10 | tostring) end;
	[.points[] | select((.ranks // 1) > 1 or .rw == "readwrite")] as $m
	| if ($m | length) == 0 then empty else
	  "\n## Ranks, targets and mixed direction\n",
	  "One fio job (one tswap handle) per rank and direction, all at once in one group. Aggregate: the sum of the handles' GB/s. Slowest rank: the GB/s of the rank that moved the least (a read and a write handle of a readwrite rank count together): a ZeRO step waits for its slowest rank. % of ceiling: against fio's libaio with as many jobs.\n",
	  "| point | ranks | aggregate GB/s | slowest rank GB/s | read GB/s | write GB/s | per target GB/s | % of ceiling | status |",
	  "|---|---|---|---|---|---|---|---|---|",
	  ($m | sort_by([.rw, .ranks, -(.gbs // -1)])[]
	   | "| \(.point) | \(.ranks // 1) | \(.gbs | g) | \(.slowest_rank_gbs | g) | \(.read_gbs | g) | \(.write_gbs | g) | \([(.targets // [])[] | "`\(.target)` \(.gbs | g)"] | if length == 0 then "-" else join("<br>") end) | \(.pct_ceiling | p1) | \(.status) |")
	  end;
