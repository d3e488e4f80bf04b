# report-ranks.jq - report.md's section on points of several handles
# (ranks > 1, readwrite) from aggregate.json: aggregate GB/s (the sum of
# the handles'), the slowest rank's GB/s (a ZeRO step waits for it), read,
# write, per-target GB/s and % of the ceiling (fio libaio, as many jobs).
# Empty without such points. Used by report.sh write_report.
def g: if . == null then "-" else (. * 1000 | round / 1000 | tostring) end;
def p1: if . == null then "-" else (. * 10 | round / 10 | tostring) end;
[.points[] | select((.ranks // 1) > 1 or .rw == "readwrite")] as $m
| if ($m | length) == 0 then empty else
  "\n## Ranks, targets and mixed direction\n",
  "One fio job (one tswap handle) per rank and direction, all at once in one group. Aggregate: the sum of the handles' GB/s. Slowest rank: the GB/s of the rank that moved the least (a read and a write handle of a readwrite rank count together): a ZeRO step waits for its slowest rank. % of ceiling: against fio's libaio with as many jobs.\n",
  "| point | ranks | aggregate GB/s | slowest rank GB/s | read GB/s | write GB/s | per target GB/s | % of ceiling | status |",
  "|---|---|---|---|---|---|---|---|---|",
  ($m | sort_by([.rw, .ranks, -(.gbs // -1)])[]
   | "| \(.point) | \(.ranks // 1) | \(.gbs | g) | \(.slowest_rank_gbs | g) | \(.read_gbs | g) | \(.write_gbs | g) | \([(.targets // [])[] | "`\(.target)` \(.gbs | g)"] | if length == 0 then "-" else join("<br>") end) | \(.pct_ceiling | p1) | \(.status) |")
  end
