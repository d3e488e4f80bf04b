# report-warnings.jq - report.md's warnings (jq/report.jq report_warnings)
# as a program of its own, for tests. Input: aggregate.json; --argjson
# cvflag; jq -L sweep/jq.
include "report";
report_warnings($cvflag)
