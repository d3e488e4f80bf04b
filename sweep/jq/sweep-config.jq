# sweep-config.jq - sweep.json: the run settings (--arg/--argjson) and the
# fleet part ($fleet). Used by settings.sh save_config.
{target: $target, target_kind: $target_kind, size: $size, size_bytes: $size_bytes,
 grid: $grid, grid_description: $grid_desc, runtime: $runtime, ramp: $ramp,
 io_size: $io_size, repeat: $repeat, engine: $engine, ceiling: ($ceiling == 1),
 ceiling_bs: $ceiling_bs, ceiling_qd: $ceiling_qd,
 ds_version: (if $ds_version == "" then null else $ds_version end),
 created: $created, host: $host, kernel: $kernel, fio_version: $fio}
+ {targets: $targets}
+ (if $fleet[0] then {fleet: $fleet[0]} else {} end)
