# fixed.jq - def fixed(p): a number as text with p (0 to 6) decimals, as
# C's printf("%.pf") prints it: the binary value rounded, exact ties to
# even. Dekker's split makes x * 10^p exact enough to see a tie.
def fixed($p):
	[1, 10, 100, 1000, 10000, 100000, 1000000][$p] as $m
	| (if . < 0 then "-" else "" end) as $s
	| (if . < 0 then -. else . end) as $x
	| (134217729 * $x) as $t | ($t - ($t - $x)) as $hi | ($x - $hi) as $lo
	| ($x * $m | floor) as $l
	| (($hi * $m - ($l + 0.5)) + $lo * $m) as $r
	| (if $r > 0 or ($r == 0 and $l % 2 == 1) then $l + 1 else $l end) as $c
	| $s + "\($c / $m | floor)" + (if $p > 0 then "." + ("\($c % $m)" | ("0" * ($p - length)) + .) else "" end);
