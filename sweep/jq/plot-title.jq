# plot-title.jq - A plot title that fits its PNG ($size "W,H" pixels): the
# words of $t in lines of at most (W - 40) / 9.5 characters (the png
# terminal's default font, arial 12, found as DejaVu Sans, takes about 8.7
# pixels a character of these titles), as a gnuplot string expression:
# each line single-quoted ('' for a quote: in double quotes gnuplot runs
# `...`), joined by "\n". Used by plot.sh gp_plot.
((($size | split(",")[0] | tonumber) - 40) / 9.5 | floor) as $n
| reduce ($t | split(" ")[] | select(. != "")) as $w ([];
	if length > 0 and ((.[-1] | length) + 1 + ($w | length)) <= $n then .[-1] += " " + $w else . + [$w] end)
| if length == 0 then "''" else map("'" + gsub("'"; "''") + "'") | join(".\"\\n\".") end
