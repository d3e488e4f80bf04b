# check-junit.jq - tswap-check's JUnit XML, from check.jq's object: one
# testsuite, one testcase per check, named by its id (a CI gate names the
# check that failed). fail: <failure>; n/a: <skipped>; ok and warn pass,
# the advice in <system-out> (a warn's prefixed "warn: ").
def x: tostring | gsub("[\u0000-\u0008\u000b\u000c\u000e-\u001f]"; " ") | @html;
def n(v): [.checks[] | select(.verdict == v)] | length;
(.stack.host // "host") as $host
| "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
  "<testsuites name=\"tswap-check\" tests=\"\(.checks | length)\" failures=\"\(n("fail"))\" errors=\"0\" skipped=\"\(n("n/a"))\">",
  "  <testsuite name=\"tswap-check.\($host | x)\" hostname=\"\($host | x)\" tests=\"\(.checks | length)\" failures=\"\(n("fail"))\" errors=\"0\" skipped=\"\(n("n/a"))\">",
  "    <properties>",
  ([["target", .target], ["device", .stack.device], ["filesystem", .stack.filesystem], ["kernel", .stack.kernel],
    ["block_size", .settings.block_size], ["queue_depth", .settings.queue_depth],
    ["threads", .settings.threads], ["backend", .settings.backend], ["verdict", .verdict]][]
   | select(.[1] != null) | "      <property name=\"\(.[0])\" value=\"\(.[1] | x)\"/>"),
  "    </properties>",
  (.checks[]
   | "value \(.value // "-"), expected \(.expected // "-"): \(.advice) [\(.source)]" as $m
   | "    <testcase classname=\"tswap-check.\($host | x)\" name=\"\(.id | x)\" time=\"0\">"
     + (if .verdict == "fail" then "<failure type=\"check\" message=\"\(.advice | x)\">\($m | x)</failure>"
	elif .verdict == "n/a" then "<skipped message=\"\(.advice | x)\"/>"
	elif .verdict == "warn" then "<system-out>warn: \($m | x)</system-out>"
	else "<system-out>\($m | x)</system-out>" end)
     + "</testcase>"),
  "  </testsuite>",
  "</testsuites>"
