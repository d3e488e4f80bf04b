#!/usr/bin/env bats
# tests/fleet-check.bats - the stack checks of a fleet run (docs/fleet.md,
# "Checks"): tswap-check's checks of each host, from the metadata the
# probe brings back, judged across the fleet (tswap.stats.fleet_check),
# in report.md and junit.xml. Each fio server reads its own sysfs/procfs
# fixture tree (tests/check.bash) through TSWAP_SYSROOT; the servers are
# tests/fleet.bash's. About 30 s.

# '$...' in single quotes are jq's; a $(...) inside a test's condition
# that fails gives a value that does not match, which fails the test;
# SERVER_SYSROOT is read by fleet.bash's start_server.
# shellcheck disable=SC2016,SC2312,SC2034

bats_require_minimum_version 1.5.0

load helpers
load fleet
load check

# fixture_host DIR TARGET_DIR: a healthy PCIe host (sysroot_pcie) whose
# NVMe filesystem holds TARGET_DIR, with model and firmware 1.0
fixture_host() {
	local ctrl
	sysroot_pcie "$1"
	put "$1/proc/self/mountinfo" "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
30 22 259:1 / $2 rw,noatime shared:2 - xfs /dev/nvme0n1 rw,attr2,inode64,noquota"
	ctrl=$(pcie_dev "$1")/nvme/nvme0
	put "$ctrl/model" "TSWAP TEST NVMe 1TB"
	put "$ctrl/firmware_rev" 1.0
}

# stack_fails SUITE: junit.xml's check testcases of SUITE that fail, sorted
stack_fails() {
	xmllint --xpath "//testsuite[@name='$1']/testcase[failure/@type='check']/@name" "$RD/junit.xml" 2>/dev/null |
		sed 's/ *name="\([^"]*\)"/\1\n/g' | grep . | sort | xargs
}

@test "fleet checks: three fixture hosts; the downtrained link, the firmware mismatch and the remote NUMA node in report.md and JUnit" {
	command -v xmllint >/dev/null || skip "requires xmllint (libxml2-utils, make deps)"
	local n pci
	for n in 2 3 4; do
		mkdir -p "$SCRATCH/host$n"
		fixture_host "$SCRATCH/root$n" "$SCRATCH/host$n"
		SERVER_SYSROOT[n]=$SCRATCH/root$n
	done
	# host 3 trained at x2 of x4, 8 GT/s of 16
	pci=$(pcie_dev "$SCRATCH/root3")
	put "$pci/current_link_width" 2
	put "$pci/current_link_speed" "8.0 GT/s PCIe"
	# host 4: firmware 2.0, and its drive on node 1 (the server runs on
	# node 0's CPUs 0-3)
	pci=$(pcie_dev "$SCRATCH/root4")
	put "$pci/nvme/nvme0/firmware_rev" 2.0
	put "$pci/numa_node" 1
	start_servers
	hosts_file "127.0.0.2,$PORT target=$SCRATCH/host2/t.swap name=good" \
		"127.0.0.3,$PORT target=$SCRATCH/host3/t.swap name=downtrained" \
		"127.0.0.4,$PORT target=$SCRATCH/host4/t.swap name=oddfw"
	# one tensor per point, no outliers (the hosts share this machine's
	# disk): the checks fail, and do not change the exit status
	RD=$SCRATCH/run
	fleet --hosts "$SCRATCH/hosts.txt" --grid fleet "${SMALL[@]}" --io-size 4m --outlier-pct 100 --out "$RD"
	expect_status 0
	assert_output --partial 'stack checks: 4 fail (downtrained, oddfw), 1 warn (report.md, Checks)'
	# the checks ran on what each host's probe read: its own fixture tree
	assert_equal "$(jq -r '[.hosts[].stack | .firmware, .pcie_link, .numa_node] | map(tostring) | join(" ")' "$RD/fleet.json")" \
		"1.0 16.0 GT/s PCIe x4 0 1.0 8.0 GT/s PCIe x2 0 2.0 16.0 GT/s PCIe x4 1"
	# report.md: each failing check, named per host, with its advice
	local md=$RD/report.md
	grep -qxF '**4 check(s) fail** on downtrained, oddfw; 1 warn.' "$md" || fail "$(sed -n '/^## Checks/,$p' "$md")"
	grep -qF -- '- **downtrained** `pcie.link_width` **fail**: 0000:01:00.0 trained at x2 of x4' "$md" || fail "no downtrained link in report.md"
	grep -qF -- '- **downtrained** `pcie.link_speed` **fail**: only this host warns (2 of 3 hosts ok): 0000:01:00.0 runs at 8.0 GT/s PCIe of 16.0 GT/s PCIe' "$md" ||
		fail "no escalated link speed in report.md"
	grep -qF -- '- **oddfw** `fleet.firmware` **fail**: firmware 2.0 differs from 1.0 on most hosts with model TSWAP TEST NVMe 1TB' "$md" ||
		fail "no firmware mismatch in report.md"
	grep -qF -- '- **oddfw** `numa.node` **fail**: only this host warns (2 of 3 hosts ok): remote: no allowed CPU is on node 1' "$md" ||
		fail "no remote NUMA node in report.md"
	grep -qxF '| good | ok | - |' "$md" || fail "the healthy host is not clean in report.md"
	# the hosts grouped by what differs; what differs next to each host's GB/s
	grep -qxF -- '- firmware: 1.0 (good, downtrained); 2.0 (oddfw)' "$md" || fail "no firmware groups in report.md"
	grep -qxF -- '- PCIe link: 16.0 GT/s PCIe x4 (good, oddfw); 8.0 GT/s PCIe x2 (downtrained)' "$md" || fail "no link groups in report.md"
	grep -qxF -- '- NUMA: local (good, downtrained); remote (oddfw)' "$md" || fail "no NUMA groups in report.md"
	! grep -q '^- \(model\|kernel\): ' "$md" || fail "hosts grouped by a field they share"
	grep -q '^| downtrained | [0-9.]* ([0-9.]*%) | [0-9.]* ([0-9.]*%) | PCIe link 8.0 GT/s PCIe x2 (fleet: 16.0 GT/s PCIe x4) | `pcie.link_width`, `pcie.link_speed` |$' "$md" ||
		fail "no GB/s row of downtrained with its link: $(sed -n '/^### Hosts by GB\/s/,$p' "$md")"
	grep -q '^| oddfw | .* | firmware 2.0 (fleet: 1.0), NUMA remote (fleet: local) | `numa.node`, `fleet.firmware` |$' "$md" ||
		fail "no GB/s row of oddfw with its firmware and node: $(sed -n '/^### Hosts by GB\/s/,$p' "$md")"
	# junit.xml: each check a testcase per host; the failing ones <failure type="check">
	xmllint --noout "$RD/junit.xml"
	assert_equal "$(stack_fails downtrained)" "pcie.link_speed pcie.link_width"
	assert_equal "$(stack_fails oddfw)" "fleet.firmware numa.node"
	assert_equal "$(stack_fails good)" ""
	assert_equal "$(xmllint --xpath "count(//testsuite[@name='good']/testcase[@classname='tswap-check.h01-good'])" "$RD/junit.xml")" 16
	assert_equal "$(xmllint --xpath "string(//testsuite[@name='oddfw']/testcase[@name='numa.node']/failure/@message)" "$RD/junit.xml")" \
		"only this host warns (2 of 3 hosts ok): remote: no allowed CPU is on node 1; run the job under numactl --cpunodebind=1 --membind=1"
	assert_equal "$(xmllint --xpath 'string(/testsuites/@failures)' "$RD/junit.xml")" 4
}

# fleet_checks FLEET SETTINGS CHECK...: FLEET (a fleet.json) with each
# host's stack checks (tswap-check's outputs CHECK..., in host order)
# judged across the fleet against the aio SETTINGS (JSON), as the fleet's
# finish judges them (tswap.stats.fleet_check with_checks).
fleet_checks() {
	fleet_py 'from tswap.stats.fleet_check import with_checks
out(with_checks(doc(1), [doc(n) for n in range(3, len(sys.argv))], jqjson.loads(sys.argv[2])))' "$@"
}

@test "fleet checks (tswap.stats.fleet_check): a warn is a fail only when most hosts pass; firmware is compared within a model" {
	local n
	for n in 1 2 3; do
		sysroot_pcie "$SCRATCH/r$n"
		put "$(pcie_dev "$SCRATCH/r$n")/nvme/nvme0/model" "MODEL A"
		put "$(pcie_dev "$SCRATCH/r$n")/nvme/nvme0/firmware_rev" 1.0
	done
	# r2: its drive on the far node; r3: another model, another firmware
	put "$(pcie_dev "$SCRATCH/r2")/numa_node" 1
	put "$(pcie_dev "$SCRATCH/r3")/nvme/nvme0/model" "MODEL B"
	put "$(pcie_dev "$SCRATCH/r3")/nvme/nvme0/firmware_rev" 9.9
	for n in 1 2 3; do
		TSWAP_SYSROOT=$SCRATCH/r$n "$REPO/sweep/tswap-check" --target /data/swap --json "$SCRATCH/c$n.json" >/dev/null
	done
	local settings='{"block_size": 1048576, "queue_depth": 8, "threads": 1, "backend": "libaio", "from": "test"}'
	# two hosts: one ok of two is no majority, the warn stays a warn
	printf '%s\n' '{"directions": [], "hosts": [{"label": "a"}, {"label": "b"}]}' >"$SCRATCH/fl2.json"
	run -0 fleet_checks "$SCRATCH/fl2.json" "$settings" "$SCRATCH/c1.json" "$SCRATCH/c2.json"
	assert_equal "$(jq -r '.hosts[1].stack_checks[] | select(.id == "numa.node") | .verdict' <<<"$output")" warn
	# three: the warn is a fail; r3's model warns, its firmware has no peer
	printf '%s\n' '{"directions": ["read"], "hosts": [{"label": "a", "best": {"read": {"gbs": 2}}, "pct_of_median": {"read": 100}},
			{"label": "b", "best": {"read": {"gbs": 1}}, "pct_of_median": {"read": 50}},
			{"label": "c", "best": {"read": {"gbs": 2.2}}, "pct_of_median": {"read": 110}}]}' >"$SCRATCH/fl3.json"
	run -0 fleet_checks "$SCRATCH/fl3.json" "$settings" "$SCRATCH/c1.json" "$SCRATCH/c2.json" "$SCRATCH/c3.json"
	local out=$output
	assert_equal "$(jq -r '.hosts[1].stack_checks[] | select(.id == "numa.node") | "\(.verdict) \(.escalated)"' <<<"${out}")" "fail warn"
	assert_equal "$(jq -r '.hosts[2].stack_checks[] | select(.id | startswith("fleet.")) | "\(.id) \(.verdict)"' <<<"${out}" | xargs)" \
		"fleet.model warn fleet.firmware n/a fleet.pcie_link ok fleet.kernel ok"
	assert_equal "$(jq -r '.hosts[0].stack_checks[] | select(.id == "fleet.firmware") | .verdict' <<<"${out}")" ok
	assert_equal "$(jq -c '.hosts[2].stack_differences | map(.field)' <<<"${out}")" '["model"]'
	assert_equal "$(jq -c '.check_groups | map(.field)' <<<"${out}")" '["model","firmware","numa"]'
	assert_equal "$(jq -c '.check_summary' <<<"${out}")" '{"fail":1,"warn":1,"hosts":["b"]}'
	# the report: the slowest host first, next to what differs on it
	run -0 fleet_py 'from tswap.report.fleet_text import check_report; print("\n".join(check_report(doc(1))))' \
		<(printf '%s\n' "${out}")
	assert_equal "$(sed -n '/^### Hosts by GB\/s/,$p' <<<"${output}" | grep '^| [abc] ' | cut -d '|' -f 2-5)" \
		"$(printf '%s\n' ' b | 1 (50%) | NUMA remote (fleet: local) | `numa.node` ' \
			' a | 2 (100%) | - | - ' ' c | 2.2 (110%) | model MODEL B (fleet: MODEL A) | - ')"
	assert_line -- '- model: MODEL A (a, b); MODEL B (c)'
}
