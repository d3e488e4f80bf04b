# fleet-check.jq - fleet.json (input) with each host's stack checks: the
# checks of tswap-check (check.jq, run on the controller on the
# collector's output that the probe brought back, fleet-meta.sh), judged
# across the fleet. $hc[0]: one object per host, in host order: check.jq's
# output, or {collected: false, note} without metadata. $settings: the aio
# settings checked against ({block_size, queue_depth, threads, backend,
# from}). Used by fleet-report.sh fleet_checks.
#
# Across the fleet ("the majority": more than half of the hosts that have
# the value, as fleet-meta.jq):
#  - a host's warn becomes a fail (escalated: "warn") when the majority of
#    the hosts with checks pass that check: the odd host is misconfigured;
#  - four checks compare the hosts: fleet.model (warn: another model),
#    fleet.firmware (fail: another firmware than the majority of the hosts
#    of its model), fleet.pcie_link (warn: another link speed or width),
#    fleet.kernel (warn). n/a without a value or a majority.
#
# Adds to each host: stack (check.jq's stack, null without metadata),
# stack_note, stack_checks ([{id, verdict, value, expected, advice, source,
# escalated?}]), stack_verdict (worst; "n/a" without metadata),
# stack_differences ([{field, name, value, majority}]). Adds to the fleet:
# check_settings, check_majority ({field: value}), check_groups ([{field,
# name, groups: [{value, hosts: [LABEL...]}]}] for each field on which the
# hosts differ, largest group first), check_summary ({fail, warn, hosts:
# [LABEL...] with a fail}).
def chk($id; $verdict; $value; $expected; $advice; $source):
	{id: $id, verdict: $verdict, value: $value, expected: $expected, advice: $advice, source: $source};
def worst: map(.verdict) | if index("fail") then "fail" elif index("warn") then "warn"
	elif index("ok") then "ok" else "n/a" end;
# the value more than half of the non-null values agree on, or null
def majority: map(select(. != null)) as $v
	| ($v | group_by(.) | max_by(length) // []) as $top
	| if ($top | length) * 2 > ($v | length) then $top[0] else null end;
# NUMA locality from the numa.node check
def locality: if . == null then null elif .verdict == "ok" then "local"
	elif .verdict == "n/a" then null elif (.advice | startswith("remote")) then "remote" else "partly remote" end;
def fields($c): if $c == null then {} else
	($c.stack + {numa: ([$c.checks[] | select(.id == "numa.node")][0] | locality)})
	| {model, firmware, pcie_link, kernel, numa} end;
def fname: {model: "model", firmware: "firmware", pcie_link: "PCIe link", kernel: "kernel", numa: "NUMA"}[.] // .;
def src($what): "\($what); the fleet's majority (more than half of the hosts with a value)";

($hc[0] | map(if .collected == false then null else . end)) as $C
| ([$C[] | select(. != null)] | length) as $n
| [$C[] | fields(.)] as $F
| (reduce ("model", "pcie_link", "kernel", "numa") as $f ({}; .[$f] = ([$F[][$f]] | majority))) as $maj
# each check id: how many hosts pass it
| (reduce ($C[] | select(. != null) | .checks[] | select(.verdict == "ok") | .id) as $id ({}; .[$id] += 1)) as $okn
| .check_settings = $settings
| .check_majority = $maj
| .hosts |= [to_entries[] | .key as $i | .value + (
    $C[$i] as $c | $F[$i] as $f
    | if $c == null then
        {stack: null, stack_note: ($hc[0][$i].note // "metadata: not collected"), stack_checks: [],
         stack_verdict: "n/a", stack_differences: null}
      else
        ([$C[] | select(. != null and .stack.model == $f.model) | .stack.firmware] | majority) as $fw
        | ([$C[] | select(. != null and .stack.model == $f.model)] | length) as $same
        | ([$c.checks[]
            | if .verdict == "warn" and ($okn[.id] // 0) * 2 > $n then
                . + {verdict: "fail", escalated: "warn",
                     advice: "only this host warns (\($okn[.id]) of \($n) hosts ok): \(.advice)"}
              else . end]
           + [(if $f.model == null then chk("fleet.model"; "n/a"; null; $maj.model; "the model could not be read"; src("NVMe Identify Controller MN"))
               elif $maj.model == null then chk("fleet.model"; "n/a"; $f.model; null; "no model is shared by more than half of the \($n) hosts"; src("NVMe Identify Controller MN"))
               elif $f.model != $maj.model then
                 chk("fleet.model"; "warn"; $f.model; $maj.model; "another drive than the fleet's \($maj.model): its own GB/s, firmware line and limits"; src("NVMe Identify Controller MN"))
               else chk("fleet.model"; "ok"; $f.model; $maj.model; "the fleet's model"; src("NVMe Identify Controller MN")) end),
              (if $f.firmware == null then chk("fleet.firmware"; "n/a"; null; $fw; "the firmware revision could not be read"; src("NVMe Identify Controller FR"))
               elif $same < 2 then chk("fleet.firmware"; "n/a"; $f.firmware; null; "the only host with model \($f.model // "unknown")"; src("NVMe Identify Controller FR"))
               elif $fw == null then chk("fleet.firmware"; "n/a"; $f.firmware; null; "no firmware is shared by more than half of the \($same) hosts with model \($f.model // "unknown")"; src("NVMe Identify Controller FR"))
               elif $f.firmware != $fw then
                 chk("fleet.firmware"; "fail"; $f.firmware; $fw; "firmware \($f.firmware) differs from \($fw) on most hosts with model \($f.model // "unknown"): bring it to the fleet's revision (nvme fw-download, fw-commit) or check the vendor's notes between them"; src("NVMe Identify Controller FR"))
               else chk("fleet.firmware"; "ok"; $f.firmware; $fw; "the firmware of most hosts with this model"; src("NVMe Identify Controller FR")) end),
              (if $f.pcie_link == null or $maj.pcie_link == null then chk("fleet.pcie_link"; "n/a"; $f.pcie_link; $maj.pcie_link; "no PCIe link, or none shared by most hosts"; src("sysfs current_link_speed, current_link_width"))
               elif $f.pcie_link != $maj.pcie_link then
                 chk("fleet.pcie_link"; "warn"; $f.pcie_link; $maj.pcie_link; "another link than most hosts: the slot's generation or lanes, or a link trained below its capability (pcie.link_*)"; src("sysfs current_link_speed, current_link_width"))
               else chk("fleet.pcie_link"; "ok"; $f.pcie_link; $maj.pcie_link; "the link of most hosts"; src("sysfs current_link_speed, current_link_width")) end),
              (if $f.kernel == null or $maj.kernel == null then chk("fleet.kernel"; "n/a"; $f.kernel; $maj.kernel; "no kernel shared by most hosts"; src("uname -r"))
               elif $f.kernel != $maj.kernel then
                 chk("fleet.kernel"; "warn"; $f.kernel; $maj.kernel; "another kernel than most hosts: aio, io_uring and the block layer change with it"; src("uname -r"))
               else chk("fleet.kernel"; "ok"; $f.kernel; $maj.kernel; "the kernel of most hosts"; src("uname -r")) end)]) as $checks
        | {stack: $c.stack, stack_note: null, stack_checks: $checks, stack_verdict: ($checks | worst),
           stack_differences: [($maj + {firmware: $fw}) as $m | ("model", "firmware", "pcie_link", "kernel", "numa") as $k
                               | select($m[$k] != null and $f[$k] != null and $f[$k] != $m[$k])
                               | {field: $k, name: ($k | fname), value: $f[$k], majority: $m[$k]}]}
      end)]
| .check_groups = [("model", "firmware", "pcie_link", "kernel", "numa") as $k
    | [range(0; $C | length) as $i | select($C[$i] != null) | {label: .hosts[$i].label, v: ($F[$i][$k] // "unknown")}]
    | group_by(.v) | select(length > 1)
    | {field: $k, name: ($k | fname),
       groups: (map({value: .[0].v, hosts: map(.label)}) | sort_by(-(.hosts | length)))}]
| .check_summary = {fail: ([.hosts[].stack_checks[] | select(.verdict == "fail")] | length),
                    warn: ([.hosts[].stack_checks[] | select(.verdict == "warn")] | length),
                    hosts: [.hosts[] | select(.stack_verdict == "fail") | .label]}
