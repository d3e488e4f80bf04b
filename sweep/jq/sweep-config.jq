# sweep-config.jq - sweep.json: the run settings (--arg/--argjson) and the
# fleet part ($fleet). steady_state: on/off (steady.sh); precondition:
# on/off/auto (precondition.sh). Used by settings.sh save_config.
{target: $target, target_kind: $target_kind, size: $size, size_bytes: $size_bytes,
 grid: $grid, grid_description: $grid_desc, runtime: $runtime, ramp: $ramp,
 io_size: $io_size, repeat: $repeat, engine: $engine, ceiling: ($ceiling == 1),
 ceiling_bs: $ceiling_bs, ceiling_qd: $ceiling_qd, ceiling_jobs: $ceiling_jobs,
 ds_version: (if $ds_version == "" then null else $ds_version end),
 # steady.sh, precondition.sh
 steady_state: $steady, fixed_runtime: ($fixed_runtime == 1),
 ss: (if $steady == "on" then $ss_crit else null end),
 ss_dur: (if $steady == "on" then $ss_dur else null end),
 precondition: $precondition,
 created: $created, host: $host, kernel: $kernel, fio_version: $fio}
+ {targets: $targets}
+ (if $fleet[0] then {fleet: $fleet[0]} else {} end)
