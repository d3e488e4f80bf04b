# report-warnings.jq - report.md's warnings (above the ceiling, CV, not
# steady, failed points: the flags that keep a point from the pick) from aggregate.json. Used by report.sh write_report.
def g: . * 1000 | round / 1000 | tostring;
([.points[] | select(.above_ceiling) | "- **\(.point)**: \(.gbs | g) GB/s is more than 10% above the device ceiling: the page cache or a cache in the device is serving reads (the error behind DeepSpeed issue #998); do not trust this point."]
+ [.points[] | select(.cv_flag) | "- \(.point): coefficient of variation \(.cv * 1000 | round / 10)% over \(.ok_runs) repeats (> \((.cv_limit // $cvflag) * 1000 | round / 10)%: 5%, or twice the median CV of the run's other points when that is more, at most 20%: docs/sweep.md): not repeatable"]
+ [.points[] | select(.steady == false) | "- \(.point): not steady: fio's steady-state detection did not attain within the runtime in some repeat, and the last window moved by more than one tensor op (the drive was still changing speed); not picked"]
+ [.points[] | select(.drops == true) | "- \(.point): drops during the run: its last third averaged \(.drop_pct | round)% below its first (fio bandwidth log; plots/bw-\(.point).png): the drive slowed down (SLC cache, throttling, garbage collection); a warning, the point may still be picked"]
+ [.points[] | select(.status != "ok" and .status != "pruned") | "- \(.point): \(.status): \(.errors | unique | join("; "))"]) as $w
| if ($w | length) == 0 then "None." else $w[] end
