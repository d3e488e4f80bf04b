# junit.jq - junit.xml from fleet.json: one testsuite per host, one
# testcase per check: the GB/s checks (classname tswap-fleet.ID: run, DIR_min_gbs,
# DIR_vs_fleet), then the stack checks (classname tswap-check.ID, named by
# the check's id: fleet-check.jq; fail: <failure type="check">, n/a and a
# host without metadata: <skipped>, warn passes with its advice). Used by
# fleet-report.sh write_junit.
def x: tostring | gsub("[\u0000-\u0008\u000b\u000c\u000e-\u001f]"; " ") | @html;
def n(s): [.[] | select(.status == s)] | length;
# a host's stack checks as testcases: check.jq's verdicts as statuses
def stack: if has("stack_checks") | not then []
	elif .stack == null then [{name: "checks", status: "skipped", message: .stack_note}]
	else [.stack_checks[] | {name: .id, status: ({ok: "pass", warn: "pass", fail: "fail", "n/a": "skipped"}[.verdict]),
		message: "\(if .verdict == "warn" then "warn: " else "" end)value \(.value // "-"), expected \(.expected // "-"): \(.advice) [\(.source)]",
		advice: .advice}] end;
def all: .checks + stack;
($cfg[0].created) as $ts
| "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
  "<testsuites name=\"tswap-fleet\" tests=\"\([.hosts[] | all[]] | length)\" failures=\"\([.hosts[] | all[]] | n("fail"))\" errors=\"\([.hosts[] | all[]] | n("error"))\" skipped=\"\([.hosts[] | all[]] | n("skipped"))\" time=\"\([.hosts[].wall_s] | add // 0)\">",
  (.hosts[] | . as $h
   | "  <testsuite name=\"\(.label | x)\" hostname=\"\(.address | x)\" tests=\"\(all | length)\" failures=\"\(all | n("fail"))\" errors=\"\(all | n("error"))\" skipped=\"\(all | n("skipped"))\" time=\"\(.wall_s)\" timestamp=\"\($ts | x)\">",
     "    <properties>",
     ([["address", .address], ["target", .target], ["engine", .engine], ["hostname", .hostname],
       ["fio_version", .fio_version], ["verdict", .verdict],
       ["read_gbs", .best.read.gbs], ["write_gbs", .best.write.gbs], ["checks", .stack_verdict]][]
      | select(.[1] != null)
      | "      <property name=\"\(.[0] | x)\" value=\"\(.[1] | x)\"/>"),
     "    </properties>",
     (.checks[]
      | "    <testcase classname=\"tswap-fleet.\($h.id | x)\" name=\"\(.name | x)\" time=\"\(if .name == "run" then $h.wall_s else 0 end)\">"
	+ (if .status == "pass" then "<system-out>\(.message | x)</system-out>"
	   elif .status == "fail" then "<failure type=\"\(if (.name | endswith("_vs_fleet")) then "outlier" else "threshold" end)\" message=\"\(.message | x)\">\(.message | x)</failure>"
	   else "<error type=\"host\" message=\"\(.message | x)\">\(.message | x)</error>" end)
	+ "</testcase>"),
     (stack[]
      | "    <testcase classname=\"tswap-check.\($h.id | x)\" name=\"\(.name | x)\" time=\"0\">"
	+ (if .status == "pass" then "<system-out>\(.message | x)</system-out>"
	   elif .status == "fail" then "<failure type=\"check\" message=\"\(.advice | x)\">\(.message | x)</failure>"
	   else "<skipped message=\"\(.advice // .message | x)\"/>" end)
	+ "</testcase>"),
     "  </testsuite>"),
  "</testsuites>"
