# bwlog.jq - fio bandwidth logs (jq -R -n -r, the logs as input; bwlog.sh;
# the definitions in bwlog-defs.jq). $ms: log_avg_msec; $mode "series":
# "SECONDS GB/s" lines, summed over the jobs per interval, in time order;
# "summary": the run's thirds (JSON text, or null below $min samples);
# $lim: the drop (%) that "drops".
include "bwlog-defs";
[inputs]
| if $mode == "series" then bw_intervals($ms)[] | "\(.t) \(.g)"
  else bw_summary_text($ms; $min; $lim) end
