# report-budget.jq - report.md's "Budget" section (jq/report.jq
# report_budget) as a program of its own, for tests. Input:
# aggregate.json; jq -L sweep/jq.
include "report";
report_budget
