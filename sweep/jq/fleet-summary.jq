# fleet-summary.jq - The fleet summary on stdout: each host's verdict and
# figures, the fleet median (fleet.json). Used by fleet-report.sh
# print_fleet_summary.
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
.directions as $dirs
| (.hosts[] | . as $h
   | "\(.verdict)  \(.label)  " + ($dirs | map("\(.) \($h.best[.].gbs | g) GB/s") | join("  "))
     + ([(.errors[] | .reason), (.checks[] | select(.status == "fail") | .message)]
	| if length > 0 then "  - " + join("; ") else "" end)),
"fleet median: " + ([$dirs[] as $d | "\($d) \(.fleet[$d].median | g) GB/s"] | join(", ")),
"hosts: \(.summary.pass) pass, \(.summary.fail) below the bar, \(.summary.error) error(s)",
(.check_summary // empty
 | "stack checks: \(.fail) fail\(if .fail > 0 then " (\(.hosts | join(", ")))" else "" end), \(.warn) warn (report.md, Checks)")
