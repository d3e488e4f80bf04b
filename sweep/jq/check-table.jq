# check-table.jq - tswap-check's table on stdout, from check.jq's object:
# a heading (target, stack, settings), one line per check (verdict, id,
# value, expected), the advice and source under each warn and fail, and
# the counts.
# a column of $w characters and a blank; "~" ends a value cut short
def cell($w): (. // "-" | tostring) as $s
	| (if ($s | length) > $w then $s[:$w - 1] + "~" else $s + (" " * ($w - ($s | length))) end) + " ";
"tswap-check: \(.target)"
+ (if .stack.filesystem then " (\(.stack.filesystem) at \(.stack.mountpoint))" else "" end)
+ (if .stack.device then " on \(.stack.device)" else "" end)
+ (if .sysroot then ", sysroot \(.sysroot)" else "" end),
"settings: block_size \(.settings.block_size) B, queue_depth \(.settings.queue_depth), threads \(.settings.threads), backend \(.settings.backend)",
"",
"\("VERDICT" | cell(7))\("CHECK" | cell(24))\("VALUE" | cell(27))EXPECTED",
(.checks[]
 | "\(.verdict | cell(7))\(.id | cell(24))\(.value | cell(27))\(.expected // "-")",
   (select(.verdict == "warn" or .verdict == "fail") | "         advice: \(.advice)", "         source: \(.source)"),
   (select(.verdict == "n/a") | "         not applicable: \(.advice)")),
"",
"\(.counts.ok) ok, \(.counts.warn) warn, \(.counts.fail) fail, \(.counts["n/a"]) n/a: \(.verdict)"
