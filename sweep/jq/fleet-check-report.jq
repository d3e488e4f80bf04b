# fleet-check-report.jq - report.md's "Checks" section from fleet.json
# (input, after fleet-check.jq): each host's failing and warning stack
# checks with their advice, the hosts grouped by what differs (model,
# firmware, PCIe link, kernel, NUMA locality), and the hosts by GB/s, the
# lowest first, next to what differs on them. Used by fleet-report.sh
# write_fleet_report.
def md: tostring | gsub("\\|"; "\\|") | gsub("\n"; " ");
def v: if . == null then "-" else tostring end;
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
def p0: if . == null then "-" elif . < 10 then (. * 10 | round / 10 | tostring) else (round | tostring) end;
def sz: if . >= 1048576 and . % 1048576 == 0 then "\(. / 1048576)M"
	elif . >= 1024 and . % 1024 == 0 then "\(. / 1024)K" else tostring end;
def bad: [.stack_checks[] | select(.verdict == "fail" or .verdict == "warn")];
def short: "`\(.id)` \(.verdict)\(if .escalated then " (a warn most hosts pass)" else "" end): \(.value | v) (expected \(.expected | v))";
.check_settings as $s
| .directions as $dirs
| "## Checks",
"",
"tswap-check's checks (docs/sweep.md) of each host's stack, from what the probe read there, against block_size \($s.block_size | sz), queue_depth \($s.queue_depth), \($s.threads) thread(s), \($s.backend) (\($s.from)); `fleet.*` compare the host with the majority of the fleet, and a warn that most hosts pass is a fail (that host is the odd one). They do not change a host's verdict or the exit status; junit.xml has each as a testcase.",
"",
(.check_summary as $c
 | if $c.fail > 0 then "**\($c.fail) check(s) fail** on \($c.hosts | map(md) | join(", ")); \($c.warn) warn."
   else "No check fails; \($c.warn) warn." end),
"",
"| host | checks | fail or warn |",
"|---|---|---|",
(.hosts[] | "| \(.label | md) | \(.stack_verdict) | \(if .stack == null then .stack_note | md else (bad | map(short) | join("; ") | if . == "" then "-" else md end) end) |"),
"",
(.hosts[] | . as $h | bad[]
 | "- **\($h.label | md)** `\(.id)` **\(.verdict)**: \(.advice | md) (source: \(.source | md))"),
"",
"### How the hosts differ",
"",
(if (.check_groups | length) == 0 then "No host differs from the others in model, firmware, PCIe link, kernel or NUMA locality (where they could be read)."
 else (.check_groups[] | "- \(.name): " + (.groups | map("\(.value | md) (\(.hosts | map(md) | join(", ")))") | join("; "))) end),
"",
"### Hosts by GB/s, the lowest first",
"",
"| host | " + ($dirs | map("\(.) GB/s (% of fleet median)") | join(" | ")) + " | differs from the fleet's majority | failing checks |",
"|---|" + ($dirs | map("---|") | join("")) + "---|---|",
(.hosts | sort_by([.pct_of_median[$dirs[]] // 1e9] | min) | .[] | . as $h
 | "| \(.label | md) | "
   + ($dirs | map("\($h.best[.].gbs | g) (\($h.pct_of_median[.] | p0)%)") | join(" | "))
   + " | \(if .stack_differences == null then "metadata not collected" else (.stack_differences | map("\(.name) \(.value | md) (fleet: \(.majority | md))") | join(", ") | if . == "" then "-" else . end) end)"
   + " | \([.stack_checks[] | select(.verdict == "fail") | "`\(.id)`"] | join(", ") | if . == "" then "-" else . end) |"),
""
