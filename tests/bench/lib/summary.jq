# summary.jq - results.json of tests/bench/tswap-bench from its runs.jsonl
# (slurped: one object per fio run, kind timed, null, count or geometry)
# and $meta (meta.json): per row and side the medians of GB/s, CPU s/GB
# (setup run subtracted) and syscalls/GB, the A/B ratios, the targets of
# docs/performance.md met or missed, the disk comparison, the noise.
def median: sort | if length == 0 then null
	elif length % 2 == 1 then .[(length - 1) / 2]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def ratio(a; b): if a == null or b == null or b == 0 then null else a / b end;
def ram(t): t != "disk";
. as $runs
| [ $runs[] | select(.kind == "timed") | {target, row} ]
| (reduce .[] as $x ([]; if index([$x]) then . else . + [$x] end)) as $keys
| [ $keys[] as $k
    | ($runs | map(select(.target == $k.target and .row == $k.row))) as $r
    | ($r | map(.side) | unique
       | if index("tswap2") then ["tswap2", "tswap1"]
         elif index("fio1") then ["fio1", "fio2"] else ["tswap", "fio"] end) as $sides
    | [ $sides[] as $s
        | ($r | map(select(.side == $s))) as $rs
        | ($rs | map(select(.kind == "null")) | first) as $null
        | (if $null == null then 0 else $null.cpu_usr_ms + $null.cpu_sys_ms end) as $null_ms
        | (if $null == null then 0 else $null.bytes end) as $null_bytes
        | ($rs | map(select(.kind == "count")) | first) as $c
        | ($rs | map(select(.kind == "geometry")) | first) as $g
        | { side: $s, bs: $g.bs, iodepth: $g.iodepth,
            gbs: ($rs | map(select(.kind == "timed") | .bw_bytes / 1e9) | median),
            gbs_spread: ($rs | map(select(.kind == "timed") | .bw_bytes / 1e9)
                | if length < 2 then null else (max - min) / median end),
            cpu_s_per_gb: ($rs | map(select(.kind == "timed")
                    | ((.cpu_usr_ms + .cpu_sys_ms - $null_ms) / 1000)
                      / ((.bytes - $null_bytes) / 1e9))
                | median),
            cpu_s_per_gb_raw: ($rs | map(select(.kind == "timed")
                    | ((.cpu_usr_ms + .cpu_sys_ms) / 1000) / (.bytes / 1e9)) | median),
            setup_cpu_s: ($null_ms / 1000),
            syscalls_per_gb: (if $c == null then null
                elif ($c.tswap_syscalls // -1) >= 0 then $c.tswap_syscalls / ($c.bytes / 1e9)
                elif $c.syscalls >= 0 then $c.syscalls / ($c.bytes / 1e9)
                else null end),
            counted_syscalls_per_gb: (if $c == null or $c.syscalls < 0 then null
                else $c.syscalls / ($c.bytes / 1e9) end),
            other_cpus: ($rs | map(select(.kind == "timed" and .wall_ms != null and .wall_ms > 0)
                    | .other_cpu_ms / .wall_ms) | median),
            runs: ($rs | map(select(.kind == "timed")) | length) } ] as $m
    | ($k.row | split("-")) as $f
    | { target: $k.target, row: $k.row, rw: $f[0], block_size: $f[1],
        queue_depth: ($f[2] | ltrimstr("q") | tonumber), backend: $f[3],
        variant: ($f[4] // "overlap"),
        a: $m[0], b: $m[1],
        ratio: { gbs: ratio($m[0].gbs; $m[1].gbs),
                 cpu_s_per_gb: ratio($m[0].cpu_s_per_gb; $m[1].cpu_s_per_gb),
                 syscalls_per_gb: ratio($m[0].syscalls_per_gb; $m[1].syscalls_per_gb) } }
    | .targets = (if .variant == "aa" then []
        elif .variant == "threads2" then
            (if ram(.target) then [{ name: "threads=2 GB/s >= 1.5x threads=1",
                met: ((.ratio.gbs // 0) >= 1.5) }] else [] end)
        elif ram(.target) then
            [{ name: "GB/s ratio >= 1.00", met: ((.ratio.gbs // 0) >= 1.0) },
             { name: "CPU/GB ratio <= 1.00", met: ((.ratio.cpu_s_per_gb // 99) <= 1.0) }]
        else [] end) ] as $rows
| { meta: $meta[0],
    rows: $rows,
    disk: ( [ $rows[] | select(.target == "disk" and .variant != "threads2" and .variant != "aa") ] as $d
        | if ($d | length) == 0 then null else
            ($d | max_by(.a.gbs)) as $ba | ($d | max_by(.b.gbs)) as $bb
            | { best_tswap: { row: $ba.row, gbs: $ba.a.gbs },
                best_fio: { row: $bb.row, gbs: $bb.b.gbs },
                ratio: ratio($ba.a.gbs; $bb.b.gbs),
                met: ((ratio($ba.a.gbs; $bb.b.gbs) // 0) >= 0.95) } end) }
| .noise = { gbs_spread_median: ([.rows[] | .a.gbs_spread, .b.gbs_spread | select(. != null)] | median),
             other_cpus_median: ([.rows[] | .a.other_cpus, .b.other_cpus | select(. != null)] | median),
             other_cpus_max: ([.rows[] | .a.other_cpus, .b.other_cpus | select(. != null)] | max) }
| .summary = { met: (([.rows[].targets[] | select(.met)] | length)
                  + (if .disk != null and .disk.met then 1 else 0 end)),
               missed: ([.rows[] | .row as $r | .target as $t | .targets[]
                  | select(.met | not) | "\($t) \($r): \(.name)"]
                  + (if .disk != null and (.disk.met | not)
                     then ["disk: best tswap >= 0.95x best fio"] else [] end)) }
