# compare-ceiling.jq - compare.md: the two runs' ceilings. Used by report.sh
# write_compare.
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
. as $a | ("read", "write") as $rw | "| \($rw) | \($a.ceiling[$rw] | g) | \($b[0].ceiling[$rw] | g) |"
