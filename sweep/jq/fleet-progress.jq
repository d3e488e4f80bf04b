# fleet-progress.jq - The progress line of a fleet point: hosts ok, median
# and min GB/s (the hosts' result.json, jq -s). Used by exec-fleet.sh
# exec_result_text.
def g: . * 1000 | round / 1000 | tostring;
[.[] | select(.status == "ok")] as $ok | ($ok | map(.gbs) | sort) as $v
| "\($ok | length)/\(length) hosts ok"
  + (if ($v | length) > 0 then
       ", median \(if ($v | length) % 2 == 1 then $v[($v | length - 1) / 2] else ($v[($v | length) / 2 - 1] + $v[($v | length) / 2]) / 2 end | g) GB/s"
       + ", min \($ok | min_by(.gbs) | "\(.gbs | g) (\(.host))")"
     else "" end)
