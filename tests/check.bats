#!/usr/bin/env bats
# tests/check.bats - tswap-check (sweep/tswap-check): each check's verdict
# and the exit status on sysfs/procfs fixture trees (tests/check.bash,
# through TSWAP_SYSROOT), the JSON and JUnit outputs, bad input, and a run
# on this machine's own disk. No fio, no root, no I/O; the file runs in a
# few seconds.

# '$...' in single quotes are jq's; stderr and stderr_lines are bats' run's;
# a $(...) inside a test's condition that fails gives a value that does not
# match, which fails the test (SC2312).
# shellcheck disable=SC2016,SC2154,SC2312

bats_require_minimum_version 1.5.0

bats_load_library bats-support
bats_load_library bats-assert

REPO=$(cd "${BATS_TEST_DIRNAME}/.." && pwd)
CHECK=${REPO}/sweep/tswap-check
load check

setup() {
	R=${BATS_TEST_TMPDIR}/root
	OUT=${BATS_TEST_TMPDIR}/check.json
}

# check_sys ARGS...: tswap-check on the fixture tree $R (target /data/swap
# unless ARGS give one), its JSON in $OUT
check_sys() {
	local t=(--target /data/swap)
	[[ " $* " != *" --target "* ]] || t=()
	run --separate-stderr env TSWAP_SYSROOT="${R}" "${CHECK}" "${t[@]}" --json "${OUT}" "$@"
}

# verdict ID: the verdict of check ID in $OUT
verdict() { jq -r --arg id "$1" '.checks[] | select(.id == $id) | .verdict' "${OUT}"; }

# field ID KEY: a field of check ID in $OUT
field() { jq -r --arg id "$1" --arg k "$2" '.checks[] | select(.id == $id) | .[$k]' "${OUT}"; }

# only_bad ID...: the checks that warn or fail are exactly ID...
only_bad() {
	local got want
	got=$(jq -r '[.checks[] | select(.verdict == "warn" or .verdict == "fail") | .id] | sort | join(" ")' "${OUT}")
	want=$(printf '%s\n' "$@" | sort | xargs)
	[[ "${got}" = "${want}" ]] || fail "checks that warn or fail: '${got}', expected '${want}'"
}

@test "healthy PCIe fixture: every check ok or n/a, exit 0" {
	sysroot_pcie "${R}"
	check_sys
	assert_success
	only_bad
	[[ "$(verdict pcie.link_width)" = ok ]]
	[[ "$(verdict numa.node)" = ok ]]
	[[ "$(verdict queue.scheduler)" = ok ]]
	[[ "$(verdict fs.type)" = ok ]]
	[[ "$(field fs.type value)" = xfs ]]
	[[ "$(verdict nvmf.transport)" = n/a ]]
	assert_line --regexp '^ok +pcie\.link_width +x4 +x4$'
	assert_line '10 ok, 0 warn, 0 fail, 2 n/a: ok'
}

@test "downtrained link: width x2 of x4 fails, 8 GT/s of 16 warns, exit 1" {
	sysroot_pcie "${R}"
	put "$(pcie_dev "${R}")/current_link_width" 2
	put "$(pcie_dev "${R}")/current_link_speed" "8.0 GT/s PCIe"
	check_sys
	assert_failure 1
	only_bad pcie.link_width pcie.link_speed
	[[ "$(verdict pcie.link_width)" = fail ]]
	[[ "$(field pcie.link_width value)" = x2 ]]
	[[ "$(field pcie.link_width expected)" = x4 ]]
	[[ "$(verdict pcie.link_speed)" = warn ]]
	assert_line --regexp '^fail +pcie\.link_width +x2 +x4$'
	assert_line --partial 'advice: 0000:01:00.0 trained at x2 of x4'
	assert_line --regexp 'source: PCIe Base Spec'
}

@test "remote NUMA node: allowed CPUs all on node 1, drive on node 0, warn, exit 0" {
	sysroot_pcie "${R}"
	status_line "${R}" Cpus_allowed_list 4-7
	check_sys
	assert_success
	only_bad numa.node
	[[ "$(verdict numa.node)" = warn ]]
	run field numa.node advice
	assert_output --partial 'remote: no allowed CPU is on node 0'
	assert_output --partial 'numactl --cpunodebind=0'
}

@test "NUMA: CPUs on both nodes is partly remote, warn naming the remote ones" {
	sysroot_pcie "${R}"
	status_line "${R}" Cpus_allowed_list 0-7
	check_sys
	assert_success
	[[ "$(verdict numa.node)" = warn ]]
	run field numa.node advice
	assert_output --partial 'partly remote: CPUs 4-7 are off node 0'
}

@test "NVMe/TCP, one path ANA non-optimized: that path warns, exit 0" {
	sysroot_nvmf "${R}"
	check_sys
	assert_success
	only_bad nvmf.path.nvme2
	[[ "$(verdict nvmf.transport)" = ok ]]
	[[ "$(field nvmf.transport value)" = tcp ]]
	[[ "$(verdict nvmf.path.nvme1)" = ok ]]
	run field nvmf.path.nvme2 value
	assert_output 'tcp traddr=192.0.2.2,trsvcid=4420,src_addr=192.0.2.100 live, non-optimized'
	[[ "$(verdict nvmf.iopolicy)" = ok ]]
	# no PCIe link above a fabrics namespace: not applicable, not a failure
	[[ "$(verdict pcie.link_width)" = n/a ]]
}

@test "NVMe/TCP: an inaccessible path fails; numa iopolicy over two optimized paths warns" {
	sysroot_nvmf "${R}"
	put "${R}/sys/devices/virtual/nvme-fabrics/ctl/nvme2/nvme1c2n1/ana_state" inaccessible
	check_sys
	assert_failure 1
	[[ "$(verdict nvmf.path.nvme2)" = fail ]]
	put "${R}/sys/devices/virtual/nvme-fabrics/ctl/nvme2/nvme1c2n1/ana_state" optimized
	check_sys
	assert_success
	only_bad nvmf.iopolicy
	run field nvmf.iopolicy advice
	assert_output --partial '/sys/class/nvme-subsystem/nvme-subsys1/iopolicy'
	put "${R}/sys/devices/virtual/nvme-subsystem/nvme-subsys1/iopolicy" queue-depth
	check_sys
	assert_success
	only_bad
}

@test "fs.aio-max-nr below queue_depth x (threads + 1) fails, exit 1" {
	sysroot_pcie "${R}"
	put "${R}/proc/sys/fs/aio-max-nr" 31
	check_sys --queue-depth 8 --threads 3
	assert_failure 1
	only_bad sysctl.aio_max_nr
	[[ "$(field sysctl.aio_max_nr expected)" = '>= 32 per handle' ]]
	put "${R}/proc/sys/fs/aio-max-nr" 32
	check_sys --queue-depth 8 --threads 3
	assert_success
	# free = max - in use: another process holding events makes it a warning
	put "${R}/proc/sys/fs/aio-nr" 1
	check_sys --queue-depth 8 --threads 3
	assert_success
	only_bad sysctl.aio_max_nr
	[[ "$(verdict sysctl.aio_max_nr)" = warn ]]
}

@test "scheduler mq-deadline on NVMe warns, exit 0" {
	sysroot_pcie "${R}"
	put "$(pcie_dev "${R}")/nvme/nvme0/nvme0n1/queue/scheduler" "none [mq-deadline] kyber bfq"
	check_sys
	assert_success
	only_bad queue.scheduler
	[[ "$(field queue.scheduler value)" = mq-deadline ]]
	run field queue.scheduler advice
	assert_output --partial 'echo none > /sys/block/nvme0n1/queue/scheduler'
}

@test "hostile: a scheduler line that is no list ('[mq-deadline', '[]') is n/a naming it, not 'no queue'" {
	local v
	sysroot_pcie "${R}"
	for v in '[mq-deadline' '[]' 'none [kyber'; do
		put "$(pcie_dev "${R}")/nvme/nvme0/nvme0n1/queue/scheduler" "${v}"
		check_sys
		assert_success
		[[ "$(verdict queue.scheduler)" = n/a ]] || fail "'${v}': $(verdict queue.scheduler)"
		run field queue.scheduler advice
		assert_output "scheduler '${v}' is not a scheduler list (names, the one in use in [])"
	done
}

@test "a block above max_sectors_kb is split; nr_requests counts the pieces" {
	sysroot_pcie "${R}"
	status_line "${R}" CapEff 0000000000004000 # memlock: not this test's
	check_sys --block-size 2m --queue-depth 256 --threads 4
	assert_success
	only_bad queue.max_sectors_kb queue.nr_requests
	run field queue.max_sectors_kb advice
	assert_output --partial 'a 2m block is split into 2 requests'
	# 256 x 4 threads x 2 pieces
	[[ "$(field queue.nr_requests expected)" = '>= 2048' ]]
	check_sys --block-size 4m
	run field queue.max_sectors_kb advice
	assert_output --partial 'at most 2048 KiB'
}

@test "memlock below queue_depth x block x threads fails; CAP_IPC_LOCK lifts it" {
	sysroot_pcie "${R}"
	check_sys --queue-depth 128
	assert_failure 1
	only_bad limits.memlock
	[[ "$(field limits.memlock value)" = 64m ]]
	[[ "$(field limits.memlock expected)" = '>= 128m' ]]
	status_line "${R}" CapEff 0000000000004000
	check_sys --queue-depth 128
	assert_success
	[[ "$(field limits.memlock value)" = '64m (CAP_IPC_LOCK)' ]]
}

@test "io_uring_disabled: n/a with libaio, fail at 2 and warn at 1 with --backend io_uring" {
	sysroot_pcie "${R}"
	put "${R}/proc/sys/kernel/io_uring_disabled" 2
	check_sys
	assert_success
	[[ "$(verdict sysctl.io_uring_disabled)" = n/a ]]
	check_sys --backend io_uring
	assert_failure 1
	only_bad sysctl.io_uring_disabled
	put "${R}/proc/sys/kernel/io_uring_disabled" 1
	check_sys --backend io_uring
	assert_success
	[[ "$(verdict sysctl.io_uring_disabled)" = warn ]]
}

@test "fs: read-only mount fails, ramfs fails, a block device target is n/a" {
	sysroot_pcie "${R}"
	sed -i 's| rw,noatime shared:2 - xfs| ro,noatime shared:2 - xfs|; s|rw,attr2|ro,attr2|' "${R}/proc/self/mountinfo"
	check_sys
	assert_failure 1
	only_bad fs.mount_options
	sed -i 's| - xfs /dev/nvme0n1| - ramfs none|; s|ro,attr2|rw,attr2|' "${R}/proc/self/mountinfo"
	check_sys
	assert_failure 1
	[[ "$(verdict fs.type)" = fail ]]
	rm -rf "${R}"
	sysroot_pcie "${R}"
	check_sys --target /dev/nvme0n1
	assert_success
	[[ "$(verdict fs.type)" = n/a ]]
	[[ "$(verdict pcie.link_width)" = ok ]]
}

@test "hostile: garbage in Cpus_allowed_list is numa.node n/a with a note, in table, JSON and JUnit" {
	sysroot_pcie "${R}"
	status_line "${R}" Cpus_allowed_list '0-3,zz'
	check_sys --junit "${BATS_TEST_TMPDIR}/junit.xml"
	assert_success
	[[ "$(verdict numa.node)" = n/a ]]
	run field numa.node advice
	assert_output --partial "Cpus_allowed_list '0-3,zz' is not a CPU list"
	run --separate-stderr env TSWAP_SYSROOT="${R}" "${CHECK}" --target /data/swap
	assert_line --regexp '^n/a +numa\.node '
	assert_line --partial "not applicable: Cpus_allowed_list '0-3,zz' is not a CPU list"
	run grep -c '<testcase classname="tswap-check.[^"]*" name="numa.node" time="0"><skipped message="Cpus_allowed_list' \
		"${BATS_TEST_TMPDIR}/junit.xml"
	assert_output 1
}

@test "hostile: a CPU list of 0-1000000 is read as ranges, never expanded" {
	sysroot_pcie "${R}"
	status_line "${R}" Cpus_allowed_list 0-1000000
	# (timeout: a hang guard only; the jq version expanded the list and
	# ran for minutes)
	run --separate-stderr timeout 120 env TSWAP_SYSROOT="${R}" "${CHECK}" --target /data/swap --json "${OUT}"
	assert_success
	[[ "$(verdict numa.node)" = warn ]]
	[[ "$(field numa.node value)" = "node 0; CPUs 0-1000000" ]]
	run field numa.node advice
	assert_output --partial 'partly remote: CPUs 4-1000000 are off node 0'
}

@test "hostile: a FIFO in place of current_link_width is not read (never blocks): n/a" {
	sysroot_pcie "${R}"
	rm "$(pcie_dev "${R}")/current_link_width"
	mkfifo "$(pcie_dev "${R}")/current_link_width"
	# (timeout: a hang guard only; the FIFO is never opened)
	run --separate-stderr timeout 120 env TSWAP_SYSROOT="${R}" "${CHECK}" --target /data/swap --json "${OUT}"
	assert_success
	[[ "$(verdict pcie.link_width)" = n/a ]]
	[[ "$(verdict pcie.link_speed)" = n/a ]]
	[[ "$(verdict numa.node)" = ok ]]
	[[ -p "$(pcie_dev "${R}")/current_link_width" ]]
}

@test "hostile: link width 1e+23 and nr_requests 1e+23 are n/a with a note; x16 on an x4 link fails" {
	sysroot_pcie "${R}"
	put "$(pcie_dev "${R}")/current_link_width" 1e+23
	put "$(pcie_dev "${R}")/nvme/nvme0/nvme0n1/queue/nr_requests" 1e+23
	check_sys
	assert_success
	[[ "$(verdict pcie.link_width)" = n/a ]]
	[[ "$(verdict pcie.link_speed)" = n/a ]]
	run field pcie.link_width advice
	assert_output --partial "current_link_width '1e+23' is not an integer 1 to 32"
	[[ "$(verdict queue.nr_requests)" = n/a ]]
	run field queue.nr_requests advice
	assert_output --partial "nr_requests '1e+23' is not an integer 1 to 4294967295"
	put "$(pcie_dev "${R}")/current_link_width" 16
	put "$(pcie_dev "${R}")/nvme/nvme0/nvme0n1/queue/nr_requests" 1023
	check_sys
	assert_failure 1
	only_bad pcie.link_width
	[[ "$(field pcie.link_width value)" = x16 ]]
	[[ "$(field pcie.link_width expected)" = x4 ]]
	run field pcie.link_width advice
	assert_output --partial 'reports x16 on a link of at most x4'
}

@test "hostile: values of 5000 digits are n/a with a note, never a traceback" {
	local nines
	nines=$(printf '9%.0s' {1..5000})
	sysroot_pcie "${R}"
	put "$(pcie_dev "${R}")/nvme/nvme0/nvme0n1/queue/nr_requests" "${nines}"
	status_line "${R}" Cpus_allowed_list "${nines}"
	check_sys
	assert_success
	[[ -z "${stderr}" ]] || fail "stderr: ${stderr:0:300}"
	[[ "$(verdict queue.nr_requests)" = n/a ]]
	run field queue.nr_requests advice
	assert_output --partial "nr_requests '99999"
	assert_output --partial 'is not an integer 1 to 4294967295'
	[[ "$(verdict numa.node)" = n/a ]]
	run field numa.node advice
	assert_output --partial 'is not a CPU list'
	# leading zeros are still the number they spell: x4 of x4
	put "$(pcie_dev "${R}")/current_link_width" "$(printf '0%.0s' {1..5000})4"
	status_line "${R}" Cpus_allowed_list "$(printf '0%.0s' {1..5000})-3"
	check_sys
	assert_success
	[[ "$(verdict pcie.link_width)" = ok ]]
	[[ "$(field pcie.link_width value)" = x4 ]]
	[[ "$(verdict numa.node)" = ok ]]
}

@test "hostile: a target and TSWAP_SYSROOT not in UTF-8: JSON and JUnit written, each bad byte U+FFFD" {
	local root=${BATS_TEST_TMPDIR}/r$'\xff'oot
	sysroot_pcie "${root}"
	run --separate-stderr env TSWAP_SYSROOT="${root}" "${CHECK}" --target $'/data/sw\xffap' --json "${OUT}" \
		--junit "${BATS_TEST_TMPDIR}/junit.xml"
	assert_success
	[[ -z "${stderr}" ]] || fail "stderr: ${stderr:0:300}"
	[[ "$(jq -r .target "${OUT}")" = $'/data/sw\uFFFDap' ]]
	[[ "$(jq -r .sysroot "${OUT}")" = "${BATS_TEST_TMPDIR}/r"$'\uFFFD'oot ]]
	[[ "$(verdict fs.type)" = ok ]]
	assert_line --regexp $'^tswap-check: /data/sw\uFFFDap '
	grep -q $'value="/data/sw\uFFFDap"' "${BATS_TEST_TMPDIR}/junit.xml"
	if command -v xmllint >/dev/null; then
		run xmllint --noout "${BATS_TEST_TMPDIR}/junit.xml"
		assert_success
	fi
	run ls -A "${BATS_TEST_TMPDIR}"
	refute_output --partial .tmp
}

@test "--json, --junit: a FIFO or a symlink is written through, never replaced; one file for both is refused" {
	sysroot_pcie "${R}"
	local d=${BATS_TEST_TMPDIR}/o
	mkdir "${d}"
	# a FIFO (as /dev/stdout into a pipe): written into, stays a FIFO
	mkfifo "${d}/fifo"
	timeout 30 cat "${d}/fifo" >"${d}/got" &
	check_sys --junit "${d}/fifo"
	wait
	assert_success
	[[ -p "${d}/fifo" ]] || fail "the FIFO was replaced: $(ls -l "${d}/fifo")"
	grep -q '<testsuites name="tswap-check"' "${d}/got"
	# a symlink: the file it names gets the JSON, the link stays
	printf 'old\n' >"${d}/real.json"
	ln -s real.json "${d}/link.json"
	run --separate-stderr env TSWAP_SYSROOT="${R}" "${CHECK}" --target /data/swap --json "${d}/link.json"
	assert_success
	[[ -L "${d}/link.json" ]] || fail "the symlink was replaced"
	[[ "$(jq -r .target "${d}/real.json")" = /data/swap ]]
	# a symlink to /dev/null: nothing replaced
	ln -s /dev/null "${d}/null.json"
	run --separate-stderr env TSWAP_SYSROOT="${R}" "${CHECK}" --target /data/swap --json "${d}/null.json"
	assert_success
	[[ -L "${d}/null.json" && -c /dev/null ]]
	run ls -A "${d}"
	refute_output --partial .tmp
	# --json and --junit into one file: refused before anything is written
	printf 'keep\n' >"${OUT}"
	run --separate-stderr env TSWAP_SYSROOT="${R}" "${CHECK}" --target /data/swap --json "${OUT}" \
		--junit "${BATS_TEST_TMPDIR}/./check.json"
	assert_failure 2
	[[ "${stderr}" = *"--junit: ${BATS_TEST_TMPDIR}/./check.json is the --json file"* ]] || fail "stderr: ${stderr}"
	[[ "$(cat "${OUT}")" = keep ]]
}

@test "--json: one object per check with id, verdict, value, expected, advice, source" {
	sysroot_nvmf "${R}"
	check_sys
	assert_success
	run jq -e '(.checks | length) >= 12
		and all(.checks[]; (keys == ["advice", "expected", "id", "source", "value", "verdict"])
			and (.verdict | IN("ok", "warn", "fail", "n/a")) and (.advice | length > 0) and (.source | length > 0))
		and ([.checks[].id] | unique | length) == (.checks | length)
		and .verdict == "warn" and .counts.warn == 1' "${OUT}"
	assert_success
}

@test "--junit: valid XML, one testcase per check, a failure names its check" {
	command -v xmllint >/dev/null || skip "xmllint is not installed (libxml2-utils, make deps)"
	sysroot_pcie "${R}"
	put "$(pcie_dev "${R}")/current_link_width" 2
	check_sys --junit "${BATS_TEST_TMPDIR}/junit.xml"
	assert_failure 1
	run xmllint --noout "${BATS_TEST_TMPDIR}/junit.xml"
	assert_success
	n=$(jq '.checks | length' "${OUT}")
	run xmllint --xpath 'count(//testcase)' "${BATS_TEST_TMPDIR}/junit.xml"
	assert_output "${n}"
	run xmllint --xpath 'string(//testcase[failure]/@name)' "${BATS_TEST_TMPDIR}/junit.xml"
	assert_output pcie.link_width
	run xmllint --xpath 'count(//testcase[skipped])' "${BATS_TEST_TMPDIR}/junit.xml"
	assert_output "$(jq '.counts["n/a"]' "${OUT}")"
	run xmllint --xpath 'string(/testsuites/@failures)' "${BATS_TEST_TMPDIR}/junit.xml"
	assert_output 1
}

@test "bad input: one line naming the option, exit 2, the JSON file untouched" {
	sysroot_pcie "${R}"
	printf 'keep\n' >"${OUT}"
	local -a cases=("--target /data/swap --bogus" "" "--target" "--target /data/swap --queue-depth abc"
		"--target /data/swap --threads 0" "--target /data/swap --threads 1025"
		"--target /data/swap --block-size 1x" "--target /data/swap --block-size 100"
		"--target /data/swap --backend spdk" "--target /data/swap --junit ${BATS_TEST_TMPDIR}/no/such.xml")
	for args in "${cases[@]}"; do
		# shellcheck disable=SC2086 # the words of each case
		run --separate-stderr env TSWAP_SYSROOT="${R}" "${CHECK}" ${args} --json "${OUT}"
		[[ "${status}" -eq 2 ]] || fail "'${args}': exit ${status}, not 2"
		[[ "${#stderr_lines[@]}" -eq 1 ]] || fail "'${args}': ${#stderr_lines[@]} stderr lines: ${stderr}"
		[[ -z "${output}" ]] || fail "'${args}': printed on stdout: ${output}"
	done
	run --separate-stderr "${CHECK}" --target /data/swap --queue-depth abc
	assert_failure 2
	[[ "${stderr}" = "tswap-check: --queue-depth: not an integer 1 to 999999999: abc (see --help)" ]]
	run --separate-stderr "${CHECK}" --queue-depth 8
	assert_failure 2
	[[ ${stderr} == *"--target: required"* ]]
	run --separate-stderr "${CHECK}" --bogus
	[[ ${stderr} == *"unknown option: --bogus"* ]]
	run --separate-stderr env TSWAP_SYSROOT="${BATS_TEST_TMPDIR}/none" "${CHECK}" --target /x
	assert_failure 2
	[[ ${stderr} == *"TSWAP_SYSROOT"* ]]
	# an empty file name (--json "$UNSET") is no file, not "no --json"
	for opt in --json --junit; do
		run --separate-stderr env TSWAP_SYSROOT="${R}" "${CHECK}" --target /data/swap "${opt}" ''
		assert_failure 2
		assert_equal "${stderr}" "tswap-check: ${opt}: empty; a file to write (see --help)"
		[[ -z "${output}" ]] || fail "${opt} '': printed on stdout: ${output}"
	done
	[[ "$(cat "${OUT}")" = keep ]]
}

@test "this machine's own disk: runs, and says not applicable where it has no PCIe link" {
	mkdir -p "${BATS_TEST_TMPDIR}/swap"
	run --separate-stderr "${CHECK}" --target "${BATS_TEST_TMPDIR}/swap/x" --json "${OUT}"
	[[ "${status}" -eq 0 ]] || [[ "${status}" -eq 1 ]] || fail "exit ${status}: ${stderr}"
	[[ "$(jq -r '.verdict' "${OUT}")" != fail ]] || [[ "${status}" -eq 1 ]]
	# what the collector itself reads decides what the PCIe checks may say
	kv=$(sh "${REPO}/sweep/lib/meta-collect.sh" "${BATS_TEST_TMPDIR}/swap/x")
	cw=$(sed -n 's/^pci\.current_link_width\t//p' <<<"${kv}")
	mw=$(sed -n 's/^pci\.max_link_width\t//p' <<<"${kv}")
	if [[ -z "${cw}" ]]; then
		[[ "$(verdict pcie.link_width)" = n/a ]]
		[[ "$(verdict pcie.link_speed)" = n/a ]]
		assert_line --partial 'not applicable: '
	elif [[ "${cw}" -lt "${mw}" ]]; then
		[[ "$(verdict pcie.link_width)" = fail ]]
	else
		[[ "$(verdict pcie.link_width)" = ok ]]
	fi
	# the filesystem is the one findmnt names for the folder
	[[ "$(field fs.type value)" = "$(findmnt -n -o FSTYPE -T "${BATS_TEST_TMPDIR}/swap")" ]]
	# the default root is /: TSWAP_SYSROOT=/ reads the same
	cp "${OUT}" "${BATS_TEST_TMPDIR}/default.json"
	run --separate-stderr env TSWAP_SYSROOT=/ "${CHECK}" --target "${BATS_TEST_TMPDIR}/swap/x" --json "${OUT}"
	# (ids and verdicts: values such as fs.aio-nr in use may move between runs)
	run jq -n --slurpfile a "${BATS_TEST_TMPDIR}/default.json" --slurpfile b "${OUT}" \
		'[$a[0].checks[] | [.id, .verdict]] == [$b[0].checks[] | [.id, .verdict]]'
	assert_output true
}

# as_reader CMD...: CMD as a user who cannot read a mode-0000 file: this
# one when not root, else uid/gid 65534 (setpriv, no capabilities)
as_reader() {
	if [[ "$(id -u)" -ne 0 ]]; then
		"$@"
		return
	fi
	command -v setpriv >/dev/null || skip "requires setpriv (util-linux) to drop root"
	setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all --bounding-set=-all -- "$@"
}

@test "hostile: an unreadable /proc/self/limits is said unreadable, not absent" {
	# a tree the other user can walk (BATS_TEST_TMPDIR's parents may not be)
	local r
	r=$(mktemp -d /tmp/tswap-check-unreadable.XXXXXX)
	sysroot_pcie "${r}"
	chmod -R a+rX "${r}"
	chmod 0000 "${r}/proc/self/limits"
	local kv
	kv=$(as_reader env TSWAP_SYSROOT="${r}" sh "${REPO}/sweep/lib/meta-collect.sh" /data/swap) || true
	run --separate-stderr as_reader env TSWAP_SYSROOT="${r}" "${CHECK}" --target /data/swap
	rm -rf "${r}"
	grep -qx "$(printf 'unreadable./proc/self/limits\t1')" <<<"${kv}" || fail "no unreadable line: ${kv}"
	grep -qx "$(printf 'memlock\t')" <<<"${kv}" || fail "memlock is not empty: ${kv}"
	assert_success
	assert_line --regexp '^ +not applicable: /proc/self/limits exists but is unreadable$'
	refute_output --partial 'no /proc/self/limits'
}

@test "hostile: a value with a newline and a tab is one line: it cannot set another key" {
	sysroot_pcie "${R}"
	# a model of "x\nmemlock\tunlimited": the line it would inject lifts
	# the memlock failure below
	put "${R}/sys/block/nvme0n1/device/model" "$(printf 'x\nmemlock\tunlimited\r\ncap_eff\t0000000000004000')"
	run --separate-stderr env TSWAP_SYSROOT="${R}" sh "${REPO}/sweep/lib/meta-collect.sh" /data/swap
	assert_line "$(printf 'dev.model\tx memlock\tunlimited cap_eff\t0000000000004000')"
	refute_line --regexp '^(memlock|cap_eff)	(unlimited|0000000000004000)$'
	check_sys --queue-depth 128
	assert_failure 1
	[[ "$(verdict limits.memlock)" = fail ]]
}

@test "hostile: a sysfs value is read up to 64 KiB, not whole" {
	sysroot_pcie "${R}"
	# 1 MiB of digits in place of nr_requests: the collector's line holds
	# at most 64 KiB of it
	head -c 1048576 /dev/zero | tr '\0' 7 >"${R}/sys/block/nvme0n1/queue/nr_requests"
	run --separate-stderr env TSWAP_SYSROOT="${R}" sh "${REPO}/sweep/lib/meta-collect.sh" /data/swap
	run -0 awk -F'\t' '$1 == "queue.nr_requests" { print length($2) }' <<<"${output}"
	assert_output 65536
}

@test "hostile: control characters in --target are escaped in the table; JUnit keeps a newline as &#10;" {
	sysroot_pcie "${R}"
	check_sys --target $'/data/\e]0;x\a\nsw' --junit "${BATS_TEST_TMPDIR}/j.xml"
	assert_success
	assert_line --index 0 --regexp '^tswap-check: /data/\\033\]0;x\\a\\nsw \('
	[[ "${output}" != *$'\e'* && "${output}" != *$'\a'* ]] || fail "a control character reached the table"
	run -0 grep -c '<property name="target" value="/data/ \]0;x &#10;sw"/>' "${BATS_TEST_TMPDIR}/j.xml"
	run -0 xmllint --noout "${BATS_TEST_TMPDIR}/j.xml"
}
