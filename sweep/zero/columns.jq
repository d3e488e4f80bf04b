# columns.jq - align the runs of tab-separated lines of the input (jq -R -r
# -s; plan.sh zero_columns): each column as wide as its widest cell plus
# two blanks, the last as is; lines of one field end a run, as they are.
def cols: if length == 0 then [] else
	. as $rows | [range([$rows[] | length] | max) as $j | [$rows[] | .[$j] // "" | length] | max] as $w
	| map(. as $r | [range($r | length) | if . < ($r | length) - 1 then $r[.] + " " * ($w[.] - ($r[.] | length)) + "  " else $r[.] end] | join(""))
	end;
(split("\n") | if .[-1] == "" then .[:-1] else . end)
| reduce .[] as $l ({out: [], run: []}; ($l | split("\t")) as $f
	| if ($f | length) <= 1 then .out += (.run | cols) + [$l] | .run = [] else .run += [$f] end)
| (.out + (.run | cols))[]
