# bwlog.jq - fio bandwidth logs (jq -R -n -r, the logs as input; bwlog.sh).
# $ms: log_avg_msec; $mode "series": "SECONDS GB/s" lines, summed over the
# jobs per interval, in time order; "summary": the run's thirds (JSON
# text, or null below $min samples); $lim: the drop (%) that "drops".
include "fixed";
def mean: add / length;
[inputs | [splits(", *")] | select(length >= 2 and (.[0] | test("^[0-9]+$")) and (.[1] | test("^[0-9]+$")))
	| {k: (((.[0] | tonumber) + $ms / 2) / $ms | floor), v: (.[1] | tonumber)}]
| group_by(.k) | map({t: (.[0].k * $ms / 1000 | fixed(3)), g: ((map(.v) | add) * 1024 / 1e9 | fixed(6))})
| if $mode == "series" then .[] | "\(.t) \(.g)"
  else map({t: (.t | tonumber), v: (.g | tonumber)}) | length as $n
	| if $n < $min then "null"
	  else .[-1].t as $last | [.[] | select(.t <= $last / 3) | .v] as $a | [.[] | select(.t > 2 * $last / 3) | .v] as $b
		| if ($a | length) == 0 or ($b | length) == 0 or ($a | add) == 0 then "null"
		  else ($a | mean) as $fa | ($b | mean) as $lb | (100 * ($fa - $lb) / $fa) as $d
			| "{\"samples\": \($n), \"first_third_gbs\": \($fa | fixed(6)), \"last_third_gbs\": \($lb | fixed(6)), \"drop_pct\": \($d | fixed(2)), \"drops\": \($d > $lim)}"
		  end
	  end
  end
