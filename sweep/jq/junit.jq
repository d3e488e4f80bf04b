# junit.jq - junit.xml from fleet.json: one testsuite per host, one testcase
# per check. Used by fleet-report.sh write_junit.
def x: tostring | gsub("[\u0000-\u0008\u000b\u000c\u000e-\u001f]"; " ") | @html;
def n(s): [.[] | select(.status == s)] | length;
($cfg[0].created) as $ts
| "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
  "<testsuites name=\"tswap-fleet\" tests=\"\([.hosts[].checks[]] | length)\" failures=\"\([.hosts[].checks[]] | n("fail"))\" errors=\"\([.hosts[].checks[]] | n("error"))\" time=\"\([.hosts[].wall_s] | add // 0)\">",
  (.hosts[] | . as $h
   | "  <testsuite name=\"\(.label | x)\" hostname=\"\(.address | x)\" tests=\"\(.checks | length)\" failures=\"\(.checks | n("fail"))\" errors=\"\(.checks | n("error"))\" skipped=\"0\" time=\"\(.wall_s)\" timestamp=\"\($ts | x)\">",
     "    <properties>",
     ([["address", .address], ["target", .target], ["engine", .engine], ["hostname", .hostname],
       ["fio_version", .fio_version], ["verdict", .verdict],
       ["read_gbs", .best.read.gbs], ["write_gbs", .best.write.gbs]][]
      | select(.[1] != null)
      | "      <property name=\"\(.[0] | x)\" value=\"\(.[1] | x)\"/>"),
     "    </properties>",
     (.checks[]
      | "    <testcase classname=\"tswap-fleet.\($h.id | x)\" name=\"\(.name | x)\" time=\"\(if .name == "run" then $h.wall_s else 0 end)\">"
	+ (if .status == "pass" then "<system-out>\(.message | x)</system-out>"
	   elif .status == "fail" then "<failure type=\"\(if (.name | endswith("_vs_fleet")) then "outlier" else "threshold" end)\" message=\"\(.message | x)\">\(.message | x)</failure>"
	   else "<error type=\"host\" message=\"\(.message | x)\">\(.message | x)</error>" end)
	+ "</testcase>"),
     "  </testsuite>"),
  "</testsuites>"
