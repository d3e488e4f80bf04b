# bwlog.jq - fio bandwidth logs (jq -R -n, the logs as input; bwlog.sh;
# the definitions in bwlog-defs.jq). $ms: log_avg_msec; $mode "series"
# (jq -r): "SECONDS GB/s" lines, summed over the jobs per interval, in time
# order; "dirs" (jq -j): the same per directory of the logs given, "DIR"
# NUL "LINES" NUL each (every line newline-terminated); "summary" (jq -r):
# the run's thirds (JSON text, or null below $min samples); $lim: the drop
# (%) that "drops".
include "bwlog-defs";
if $mode == "dirs" then
	reduce inputs as $l ({}; .[input_filename | sub("/[^/]*$"; "")] += [$l])
	| to_entries[]
	| "\(.key)\u0000\([.value | bw_intervals($ms)[] | "\(.t) \(.g)\n"] | add // "")\u0000"
else
	[inputs]
	| if $mode == "series" then bw_intervals($ms)[] | "\(.t) \(.g)"
	  else bw_summary_text($ms; $min; $lim) end
end
