# report-pick.jq - report.md's first lines (jq/report.jq report_pick) as a
# program of its own, for tests. Input: aggregate.json; jq -L sweep/jq.
include "report";
report_pick
