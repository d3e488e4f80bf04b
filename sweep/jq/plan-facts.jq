# plan-facts.jq - what the sweep asks of its plan at every point, once
# (grid.sh plan_facts). Input: the plan text (jq -Rrs), one
# tab-separated line per point, rw in field 3, ranks in field 12 (empty:
# 1; grid.sh). Output, a line each: 1 when a point writes (write,
# readwrite), else 0; true when a point of 1 rank reads or writes, else
# false; then the handles the multi-handle points use, "RANK<TAB>io" and,
# for readwrite's write handles, "RANK<TAB>write".
[split("\n")[] | select(. != "") | split("\t")
 | {rw: .[2], n: (.[11] // "" | if . == "" then 1 else tonumber end)}] as $p
| (if any($p[]; .rw == "write" or .rw == "readwrite") then 1 else 0 end),
  any($p[]; .rw != "readwrite" and .n == 1),
  ([$p[] | select(.rw == "readwrite" or .n > 1)] as $m
   | ([$m[] | select(.rw == "readwrite") | .n] | max // 0) as $w
   | range([$m[].n] | max // 0) | "\(.)\tio", (select(. < $w) | "\(.)\twrite"))
