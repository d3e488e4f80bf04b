# bwlog-defs.jq - fio bandwidth logs, the lines as an array of strings
# (fio HOWTO "Log File Formats": "msec, KiB/s, direction, bs, offset"),
# one definition for bwlog.jq (bwlog.sh) and result.jq. $ms: the logs'
# log_avg_msec.
include "fixed";
def mean: add / length;

# bw_intervals($ms): [{t: "SECONDS", g: "GB/s"}], the jobs' KiB/s summed
# per $ms interval, in time order (fixed-point text: 3 and 6 decimals).
def bw_intervals($ms):
	[.[] | [splits(", *")] | select(length >= 2 and (.[0] | test("^[0-9]+$")) and (.[1] | test("^[0-9]+$")))
	 | {k: (((.[0] | tonumber) + $ms / 2) / $ms | floor), v: (.[1] | tonumber)}]
	| group_by(.k) | map({t: (.[0].k * $ms / 1000 | fixed(3)), g: ((map(.v) | add) * 1024 / 1e9 | fixed(6))});

# bw_summary_text($ms; $min; $lim): the run's thirds as JSON text:
# {samples, first_third_gbs, last_third_gbs, drop_pct, drops (drop_pct
# above $lim)}; "null" below $min samples or without a first or last third.
def bw_summary_text($ms; $min; $lim):
	bw_intervals($ms) | map({t: (.t | tonumber), v: (.g | tonumber)}) | length as $n
	| if $n < $min then "null"
	  else .[-1].t as $last | [.[] | select(.t <= $last / 3) | .v] as $a | [.[] | select(.t > 2 * $last / 3) | .v] as $b
		| if ($a | length) == 0 or ($b | length) == 0 or ($a | add) == 0 then "null"
		  else ($a | mean) as $fa | ($b | mean) as $lb | (100 * ($fa - $lb) / $fa) as $d
			| "{\"samples\": \($n), \"first_third_gbs\": \($fa | fixed(6)), \"last_third_gbs\": \($lb | fixed(6)), \"drop_pct\": \($d | fixed(2)), \"drops\": \($d > $lim)}"
		  end
	  end;
