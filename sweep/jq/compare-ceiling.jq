def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
. as $a | ("read", "write") as $rw | "| \($rw) | \($a.ceiling[$rw] | g) | \($b[0].ceiling[$rw] | g) |"
