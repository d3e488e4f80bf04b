# shellcheck shell=sh
# meta-collect.sh - read what a target is and what host it is on, read-only,
# in POSIX sh with standard tools only (no jq, no bash, no tswap): the one
# collector of the metadata, run by the sweep on this machine and shipped
# to each fleet host inside the probe job (tswap/executor/fleet_jobs.py),
# where /bin/sh may be dash and jq may be absent.
#
#   sh meta-collect.sh TARGET
#       "key<TAB>value" lines on stdout, the first "tswap-meta<TAB>1". JSON
#       of lsblk -J, findmnt -J, lscpu -J and nvme id-ctrl -o json comes as
#       one line (those tools escape newlines inside strings, so the others
#       are only layout); an absent value is empty, and a file that exists
#       but cannot be read adds "unreadable.PATH<TAB>1" (PATH without
#       TSWAP_SYSROOT). A value is one line (newlines and CRs become
#       blanks), of at most 64 KiB of each file (reading stops at the
#       first line end past 64 KiB). tswap/results/meta.py turns the lines
#       into meta.json.
#   sh meta-collect.sh --fio-job NAME TARGET
#       the same lines, gzip'd and base64'd, as a fio job file: one job
#       NAME-NNN per 240 characters, each with the chunk as its description
#       (fio sends a job's description back to the client: "desc" in
#       client_stats). tswap/executor/fleet_probe.py reads it back with
#       --remote-config.
#
# The device's serial number never leaves the host: only its SHA-256 (first
# 12 hex digits) does; it is blanked in the nvme id-ctrl JSON. Nothing is
# written but stdout; errors of the tools are dropped (a field the host
# cannot read is empty, and meta.json says why).
#
# Fleet hosts get this file without its comment lines on one line of a fio
# job file, gzip'd and base64'd (tswap/executor/fleet_jobs.py), which fio
# reads up to 8 KiB: the code must stay small.
#
# It runs at the start of every sweep: each tool is run once, and every
# file is read by the one awk that prints the lines (about 14 processes
# for a file on a disk with neither serial number nor NVMe, not one per
# file; tests/meta.bats counts them).
#
# TSWAP_SYSROOT=DIR (default /): read sysfs and procfs under DIR instead,
# a fixture tree for tests (tests/fixtures/sysroot/). Block devices are
# then known by their DIR/sys/class/block entry, the mount table is
# DIR/proc/self/mountinfo (looked up by path name), lsblk, nvme and lscpu
# are not run on the real machine's devices.
exec 2>/dev/null
R=${TSWAP_SYSROOT:-}
R=${R%/}

# trim: leading and trailing blanks off each line of stdin
trim() { sed 's/^[[:space:]]*//; s/[[:space:]]*$//'; }

# jstr KEY: the string value of KEY in the JSON on stdin (the last one, its
# layout newlines dropped); nothing if it has none
jstr() { sed -n 'H;$!d;x;s/\n//g;s/.*"'"$1"'"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p'; }

# isblk DEV: DEV is a block device (under TSWAP_SYSROOT: has a sysfs entry)
isblk() {
	if [ -n "${R}" ]; then [ -e "${R}/sys/class/block/${1##*/}" ]; else [ -b "$1" ]; fi
}

# mounts PATH: findmnt -J of the filesystem holding PATH (under
# TSWAP_SYSROOT: the longest mount point of its mountinfo that is a prefix)
mounts() {
	if [ -z "${R}" ]; then
		findmnt -J -T "$1" -o TARGET,SOURCE,FSTYPE,OPTIONS
		return
	fi
	p=$1
	[ -f "${R}/proc/self/mountinfo" ] || return 1
	until findmnt -J -F "${R}/proc/self/mountinfo" -M "${p}" -o TARGET,SOURCE,FSTYPE,OPTIONS; do
		[ "${p}" != / ] && [ "${p}" != . ] || return 1
		p=$(dirname -- "${p}")
	done
}

# LINES: the awk program that prints the lines, from what the tools said
# (environment: M_*) and the files it reads itself. Its arguments: the
# files it may read (the regular ones only: a FIFO or a device in a
# fixture tree would block the read; sysfs and procfs values are regular
# files), then "" KEY FILE... for each NVMe path value (nvmf.*).
#   rd(F): the first 64 KiB of F (bytes: LC_ALL=C; a sysfs value is at
#     most a page, 64 KiB the largest; the read stops at the first line
#     end past it), each line ended by a newline, NULs dropped (as "$(...)"
#     drops them); one that exists but cannot be read adds
#     "unreadable.PATH<TAB>1" before its value's line, never taken as absent
#   v(S): S without its trailing newlines, as "$(...)" gives it
#   j(S): JSON S without its layout newlines
#   tr(S): the lines of S without leading and trailing blanks (sed)
#   field(S, KEY): the values of S's "KEY:" lines (sed -n s/^KEY:...//p)
#   kv(K, V): one line; a newline or CR in either would start another
#     key's line (a fixture's or a hostile file's value), so each is a blank
# shellcheck disable=SC2016 # awk's $ and fields, not the shell's
LINES='
function kv(k, x) {
	gsub(/[\r\n]/, " ", k)
	gsub(/[\r\n]/, " ", x)
	printf "%s\t%s\n", k, x
}
function rd(f, x, l, r) {
	if (!(f in reg)) return ""
	while (length(x) < 65536 && (r = (getline l < f)) > 0) x = x l "\n"
	close(f)
	if (r < 0) kv("unreadable." (index(f, R) == 1 ? substr(f, length(R) + 1) : f), 1)
	x = substr(x, 1, 65536)
	gsub(/\000/, "", x)
	return x
}
function v(s) { sub(/\n+$/, "", s); return s }
function j(s) { gsub(/[\r\n]/, "", s); return s }
function tr(s, a, n, i, o) {
	n = split(s, a, "\n")
	for (i = 1; i <= n; i++) {
		sub(/^[[:space:]]+/, "", a[i])
		sub(/[[:space:]]+$/, "", a[i])
		o = o a[i] "\n"
	}
	return o
}
# sed -n s/^KEY:[[:space:]]*//p
function field(s, k, a, n, i, o) {
	n = split(s, a, "\n")
	for (i = 1; i <= n; i++) if (sub("^" k ":[[:space:]]*", "", a[i])) o = o a[i] "\n"
	return o
}
BEGIN {
	R = ENVIRON["M_R"]; sys = ENVIRON["M_sys"]; pci = ENVIRON["M_pci"]; nvme = j(ENVIRON["M_nvme"])
	for (i = 1; i < ARGC; i++) {
		if (ARGV[i] == "") {
			key[++nk] = ARGV[++i]
			continue
		}
		reg[ARGV[i]] = 1
		if (nk) fk[nk, ++nf[nk]] = ARGV[i]
	}
	kv("tswap-meta", 1)
	kv("kind", ENVIRON["M_kind"])
	kv("dev", ENVIRON["M_dev"])
	kv("fs", j(ENVIRON["M_fs"]))
	kv("blk", j(ENVIRON["M_blk"]))
	# the serial number is blanked: only its hash leaves the host
	sub(/"sn"[[:space:]]*:[[:space:]]*"[^"]*"/, "\"sn\":\"\"", nvme)
	kv("nvme", nvme)
	kv("serial_hash", ENVIRON["M_hash"])
	kv("nvme_cli", ENVIRON["M_nvme_cli"])
	n = split("logical_block_size physical_block_size rotational scheduler nr_requests max_sectors_kb max_hw_sectors_kb io_poll dma_alignment", q, " ")
	for (i = 1; i <= n; i++) kv("queue." q[i], sys == "" ? "" : v(rd(sys "/queue/" q[i])))
	kv("size_sectors", sys == "" ? "" : v(rd(sys "/size")))
	# model and firmware as sysfs has them (NVMe: firmware_rev of the
	# controller; SCSI: rev): without nvme-cli, and in fixture trees
	kv("dev.model", sys == "" ? "" : v(tr(rd(sys "/device/model"))))
	s = sys == "" ? "" : rd(sys "/device/firmware_rev") rd(sys "/device/rev")
	sub(/\n.*/, "", s)
	kv("dev.firmware", v(tr(s)))
	kv("poll_queues", v(rd(R "/sys/module/nvme/parameters/poll_queues")))
	n = split("current_link_speed current_link_width max_link_speed max_link_width numa_node", q, " ")
	for (i = 1; i <= n; i++) kv("pci." q[i], pci == "" ? "" : v(rd(pci "/" q[i])))
	s = pci
	sub(/.*\//, "", s)
	kv("pci.address", s)
	s = R == "" ? ENVIRON["M_cpus"] : v(field(rd(R "/proc/self/status"), "Cpus_allowed_list"))
	sub(/.*: /, "", s)
	kv("cpus_allowed", s)
	kv("online_nodes", v(rd(R "/sys/devices/system/node/online")))
	kv("lscpu", j(ENVIRON["M_lscpu"]))
	s = ENVIRON["M_uname"]
	kv("kernel", index(s, " ") ? substr(s, index(s, " ") + 1) : "")
	sub(/ .*/, "", s)
	kv("host", s)
	# sed -n s/^MemTotal: *\([0-9]*\) kB$/\1/p (its first line)
	n = split(rd(R "/proc/meminfo"), a, "\n")
	for (i = 1; i <= n && a[i] !~ /^MemTotal: *[0-9]* kB$/; i++) ;
	s = i > n ? "" : a[i]
	sub(/ kB$/, "", s)
	sub(/^MemTotal: */, "", s)
	kv("memtotal", s == "" ? "" : sprintf("%.0f", s * 1024))
	kv("aio_max_nr", v(rd(R "/proc/sys/fs/aio-max-nr")))
	kv("io_uring_disabled", v(rd(R "/proc/sys/kernel/io_uring_disabled")))
	# what tswap-check reads besides (not in meta.json)
	kv("disk", ENVIRON["M_disk"])
	kv("aio_nr", v(rd(R "/proc/sys/fs/aio-nr")))
	# sed -n s/^Max locked memory *\([0-9a-z]*\) .*/\1/p
	n = split(rd(R "/proc/self/limits"), a, "\n")
	s = ""
	for (i = 1; i <= n; i++) if (a[i] ~ /^Max locked memory *[0-9a-z]* /) {
		sub(/^Max locked memory */, "", a[i])
		s = s (a[i] ~ /^[0-9a-z]* / ? substr(a[i], 1, index(a[i], " ") - 1) : "") "\n"
	}
	kv("memlock", v(s))
	kv("cap_eff", v(field(rd(R "/proc/self/status"), "CapEff")))
	# (a node that is not a number names no folder)
	s = pci == "" ? "" : v(rd(pci "/numa_node"))
	kv("numa.cpulist", s ~ /^[0-9]+$/ ? v(rd(R "/sys/devices/system/node/node" s "/cpulist")) : "")
	if (ENVIRON["M_subsys"] != "") kv("nvmf.subsystem", ENVIRON["M_subsys"])
	for (k = 1; k <= nk; k++) {
		s = ""
		for (i = 1; i <= nf[k]; i++) s = s rd(fk[k, i])
		kv(key[k], v(s))
	}
	kv("fio", ENVIRON["M_fio"])
}'

# shellcheck disable=SC2312 # best effort: a value it cannot read is empty (meta.json says why)
collect() {
	target=$1 kind=file dev='' disk='' pci='' fs='' blk='' nvme='' serial='' hash='' sub='' cpus=''
	if isblk "${target}"; then
		kind=block
		dev=${target}
	else
		# a file that may not exist yet: its nearest existing directory
		# gives the filesystem
		probe=${target}
		# (under TSWAP_SYSROOT the path is looked up by name: mounts)
		while [ -z "${R}" ] && [ ! -e "${probe}" ] && [ "${probe}" != / ] && [ "${probe}" != . ]; do
			probe=$(dirname -- "${probe}")
		done
		fs=$(mounts "${probe}")
		d=$(printf '%s\n' "${fs}" | jstr source)
		# btrfs and bind mounts name a subvolume: /dev/x[/sub]
		d=${d%%\[*}
		isblk "${d}" && dev=${d}
	fi
	if [ -n "${dev}" ]; then
		# SERIAL is left out of the JSON: only its hash leaves the host
		# (not under TSWAP_SYSROOT: lsblk would read this machine's $dev)
		if [ -z "${R}" ]; then
			blk=$(lsblk -J -b -d -o NAME,KNAME,PATH,TYPE,MODEL,REV,SIZE,LOG-SEC,PHY-SEC,ROTA,SCHED,RQ-SIZE,TRAN,PKNAME,MAJ:MIN -- "${dev}")
			serial=$(lsblk -d -n -o SERIAL -- "${dev}" | trim)
			# the queue is the whole disk's: a partition's parent
			# (raw: one word each, PKNAME last, empty but for a part)
			read -r type kname pkname <<-EOF
				$(lsblk -d -n -r -o TYPE,KNAME,PKNAME -- "${dev}")
			EOF
			if [ "${type}" = part ]; then disk=${pkname}; else disk=${kname}; fi
		else
			disk=${dev##*/}
			[ ! -f "${R}/sys/class/block/${disk}/partition" ] ||
				disk=$(basename -- "$(dirname -- "$(readlink -f -- "${R}/sys/class/block/${disk}")")")
		fi
		if [ -n "${disk}" ] && [ -d "${R}/sys/block/${disk}" ]; then
			# the controller's PCI device: the nearest ancestor of the
			# disk's device with a PCI address (nvme0n1 -> nvme0 -> 0000:01:00.0)
			c=$(readlink -f -- "${R}/sys/block/${disk}/device")
			while [ -n "${c}" ] && [ "${c}" != "${R}/sys/devices" ] && [ "${c}" != / ]; do
				case ${c##*/} in
				[0-9a-f][0-9a-f][0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f].[0-7])
					pci=${c}
					break
					;;
				*) ;;
				esac
				c=${c%/*}
			done
			case ${disk} in
			nvme*)
				ctrl=$(printf '%s\n' "${disk}" | sed -n 's/^\(nvme[0-9][0-9]*\)\(c[0-9][0-9]*\)\{0,1\}n[0-9][0-9]*$/\1/p')
				if [ -n "${ctrl}" ] && [ -z "${R}" ] && command -v nvme >/dev/null; then
					nvme=$(nvme id-ctrl -o json "/dev/${ctrl}")
					sn=$(printf '%s\n' "${nvme}" | jstr sn | trim)
					[ -z "${sn}" ] || serial=${sn}
				fi
				;;
			*) ;;
			esac
		fi
	fi
	[ -z "${serial}" ] || hash=$(printf '%s' "${serial}" | sha256sum | cut -c1-12)
	sys=${disk:+${R}/sys/block/${disk}}
	set -- "${sys}/queue/"* "${sys}/size" "${sys}/device/model" "${sys}/device/firmware_rev" \
		"${sys}/device/rev" "${pci}/"*_link_* "${pci}/numa_node" "${R}/sys/module/nvme/parameters/poll_queues" \
		"${R}/proc/self/status" "${R}/sys/devices/system/node/online" "${R}/proc/meminfo" \
		"${R}/proc/sys/fs/aio-max-nr" "${R}/proc/sys/kernel/io_uring_disabled" "${R}/proc/sys/fs/aio-nr" \
		"${R}/proc/self/limits" "${R}/sys/devices/system/node/node"*/cpulist
	# the NVMe paths of the disk (nvmeXnY): from the nvme-subsystem it
	# belongs to (native multipath: one path per controller, each with its
	# ANA state) or its one controller
	case ${disk} in
	nvme*)
		c=$(readlink -f -- "${R}/sys/block/${disk}")
		case ${c} in
		*/nvme-subsystem/*)
			sub=${c%/*}
			set -- "$@" "" nvmf.iopolicy "${sub}/iopolicy"
			for c in "${sub}"/nvme*; do
				n=${c##*/}
				case ${n} in
				nvme*[0-9]n[0-9]*) continue ;; # a namespace, not a controller
				*) ;;
				esac
				for a in transport state address; do
					set -- "$@" "" "nvmf.path.${n}.${a}" "${c}/${a}"
				done
				set -- "$@" "" "nvmf.path.${n}.ana_state" "${c}/${disk%n*}c"*"n${disk##*n}/ana_state"
			done
			;;
		*)
			c=$(readlink -f -- "${R}/sys/block/${disk}/device")
			n=${c##*/}
			if [ -f "${c}/transport" ]; then
				for a in transport state address; do
					set -- "$@" "" "nvmf.path.${n}.${a}" "${c}/${a}"
				done
				set -- "$@" "" "nvmf.path.${n}.ana_state" "${R}/sys/block/${disk}/ana_state"
			fi
			;;
		esac
		;;
	*) ;;
	esac
	# of the files, the regular ones (a key follows each "")
	n=$# prev=x
	for a in "$@"; do
		if [ -z "${prev}" ] || [ -z "${a}" ] || [ -f "${a}" ]; then set -- "$@" "${a}"; fi
		prev=${a}
	done
	shift "${n}"
	[ -n "${R}" ] || cpus=$(taskset -pc "$$")
	# the sweep's own `fio --version` (TSWAP_FIO_VERSION), else fio's
	M_R=${R} M_sys=${sys} M_pci=${pci} M_kind=${kind} M_dev=${dev} M_fs=${fs} M_blk=${blk} M_nvme=${nvme} \
		M_hash=${hash} M_nvme_cli=$(command -v nvme) M_cpus=${cpus} M_disk=${disk} M_subsys=${sub##*/} \
		M_lscpu=$(lscpu -J ${R:+--sysroot "${R}"}) M_uname=$(uname -n -r) \
		M_fio=${TSWAP_FIO_VERSION:-$(fio --version)} LC_ALL=C awk "${LINES}" "$@"
}

case ${1:-} in
--fio-job)
	[ $# -eq 3 ] || exit 2
	name=$2
	# the chunks never hold ';', '#', '$' or blanks, which fio would cut
	printf '[global]\nioengine=null\nsize=4k\nbs=4k\nrw=read\n'
	n=0
	collect "$3" | gzip -9 | base64 -w 240 | while IFS= read -r chunk; do
		n=$((n + 1))
		printf '[%s-%03d]\ndescription=%s\n' "${name}" "${n}" "${chunk}"
		# the first job removes this file (fio wrote it as NAME.prerun.txt
		# in the server's directory); its own prerun file goes with it
		[ "${n}" -gt 1 ] || printf 'exec_prerun=rm -f %s.prerun.txt && rm -f %s-001.prerun.txt\n' "${name}" "${name}"
	done
	;;
*)
	[ $# -eq 1 ] || exit 2
	collect "$1"
	;;
esac
