# shellcheck shell=sh
# meta-collect.sh - read what a target is and what host it is on, read-only,
# in POSIX sh with standard tools only (no jq, no bash, no tswap): the one
# collector of the metadata, run by meta.sh on this machine and shipped to
# each fleet host inside the probe job (fleet-meta.sh), where /bin/sh may be
# dash and jq may be absent.
#
#   sh meta-collect.sh TARGET
#       "key<TAB>value" lines on stdout, the first "tswap-meta<TAB>1". JSON
#       of lsblk -J, findmnt -J, lscpu -J and nvme id-ctrl -o json comes as
#       one line (those tools escape newlines inside strings, so the others
#       are only layout); an absent value is empty, and a file that exists
#       but cannot be read adds "unreadable.PATH<TAB>1" (PATH without
#       TSWAP_SYSROOT). A value is one line (newlines and CRs become
#       blanks), of at most 64 KiB read per file. meta.sh meta_from_kv
#       turns the lines into meta.json (tswap.results.meta).
#   sh meta-collect.sh --fio-job NAME TARGET
#       the same lines, gzip'd and base64'd, as a fio job file: one job
#       NAME-NNN per 240 characters, each with the chunk as its description
#       (fio sends a job's description back to the client: "desc" in
#       client_stats). fleet-meta.sh reads it back with --remote-config.
#
# The device's serial number never leaves the host: only its SHA-256 (first
# 12 hex digits) does; it is blanked in the nvme id-ctrl JSON. Nothing is
# written but stdout; errors of the tools are dropped (a field the host
# cannot read is empty, and meta.json says why).
#
# Fleet hosts get this file without its comment lines on one line of a fio
# job file, gzip'd and base64'd (fleet-meta.sh), which fio reads up to 8
# KiB: the code must stay small.
#
# TSWAP_SYSROOT=DIR (default /): read sysfs and procfs under DIR instead,
# a fixture tree for tests (tests/fixtures/sysroot/). Block devices are
# then known by their DIR/sys/class/block entry, the mount table is
# DIR/proc/self/mountinfo (looked up by path name), lsblk, nvme and lscpu
# are not run on the real machine's devices.
exec 2>/dev/null
R=${TSWAP_SYSROOT:-}
R=${R%/}

NL='
'
CR=$(printf '\r')
# kv KEY VALUE: one line; a newline or CR in either would start another
# key's line (a fixture's or a hostile file's value), so each is a blank
kv() {
	case $1$2 in
	*"${NL}"* | *"${CR}"*)
		kv_k=$(printf '%s' "$1" | tr '\r\n' '  ') || true
		kv_v=$(printf '%s' "$2" | tr '\r\n' '  ') || true
		printf '%s\t%s\n' "${kv_k}" "${kv_v}"
		;;
	*) printf '%s\t%s\n' "$1" "$2" ;;
	esac
}

# oneline: JSON without its layout newlines
oneline() { tr -d '\n\r'; }

# rd FILE...: the contents of those of FILE... that are regular files:
# nothing else is opened (a FIFO or a device in a fixture tree would
# block the read; sysfs and procfs values are regular files), at most
# 64 KiB of each (a sysfs value is at most a page, 64 KiB the largest);
# one that exists but cannot be read is said on fd 3 (collect's stdout,
# from inside $(...)): "unreadable.PATH<TAB>1", never taken as absent
rd() {
	for rd_f in "$@"; do
		[ -f "${rd_f}" ] || continue
		if [ ! -r "${rd_f}" ] || ! head -c 65536 -- "${rd_f}"; then
			kv "unreadable.${rd_f#"${R}"}" 1 >&3
		fi
	done
}

# trim: leading and trailing blanks off stdin's one line
trim() { sed 's/^[[:space:]]*//; s/[[:space:]]*$//'; }

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

# nvmf DISK: the NVMe paths of DISK (nvmeXnY): "nvmf.*" lines, from the
# nvme-subsystem DISK belongs to (native multipath: one path per
# controller, each with its ANA state) or its one controller
# shellcheck disable=SC2312 # best effort, as collect
nvmf() {
	head=$(readlink -f -- "${R}/sys/block/$1")
	case ${head} in
	*/nvme-subsystem/*)
		sub=$(dirname -- "${head}")
		kv nvmf.subsystem "${sub##*/}"
		kv nvmf.iopolicy "$(rd "${sub}/iopolicy")"
		for c in "${sub}"/nvme*; do
			n=${c##*/}
			case ${n} in
			nvme*[0-9]n[0-9]*) continue ;; # a namespace, not a controller
			*) ;;
			esac
			for a in transport state address; do
				kv "nvmf.path.${n}.${a}" "$(rd "${c}/${a}")"
			done
			kv "nvmf.path.${n}.ana_state" "$(rd "${c}/${1%n*}c"*"n${1##*n}/ana_state")"
		done
		;;
	*)
		c=$(readlink -f -- "${R}/sys/block/$1/device")
		n=${c##*/}
		[ -f "${c}/transport" ] || return 0
		for a in transport state address; do
			kv "nvmf.path.${n}.${a}" "$(rd "${c}/${a}")"
		done
		kv "nvmf.path.${n}.ana_state" "$(rd "${R}/sys/block/$1/ana_state")"
		;;
	esac
}

# shellcheck disable=SC2312 # best effort: a value it cannot read is empty (meta.json says why)
collect() {
	exec 3>&1
	target=$1 kind=file dev='' disk='' pci='' fs='' blk='' nvme='' serial=''
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
		fs=$(mounts "${probe}" | oneline)
		d=$(printf '%s\n' "${fs}" | sed -n 's/.*"source"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')
		# btrfs and bind mounts name a subvolume: /dev/x[/sub]
		d=${d%%\[*}
		isblk "${d}" && dev=${d}
	fi
	if [ -n "${dev}" ]; then
		# SERIAL is left out of the JSON: only its hash leaves the host
		# (not under TSWAP_SYSROOT: lsblk would read this machine's $dev)
		if [ -z "${R}" ]; then
			blk=$(lsblk -J -b -d -o NAME,KNAME,PATH,TYPE,MODEL,REV,SIZE,LOG-SEC,PHY-SEC,ROTA,SCHED,RQ-SIZE,TRAN,PKNAME,MAJ:MIN -- "${dev}" | oneline)
			serial=$(lsblk -d -n -o SERIAL -- "${dev}" | trim)
		fi
		# the queue is the whole disk's: a partition's parent (lsblk PKNAME)
		if [ -n "${R}" ]; then
			disk=${dev##*/}
			[ ! -f "${R}/sys/class/block/${disk}/partition" ] ||
				disk=$(basename -- "$(dirname -- "$(readlink -f -- "${R}/sys/class/block/${disk}")")")
		elif [ "$(lsblk -d -n -o TYPE -- "${dev}" | trim)" = part ]; then
			disk=$(lsblk -d -n -o PKNAME -- "${dev}" | trim)
		else
			disk=$(lsblk -d -n -o KNAME -- "${dev}" | trim)
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
				c=$(dirname -- "${c}")
			done
			ctrl=$(printf '%s\n' "${disk}" | sed -n 's/^\(nvme[0-9][0-9]*\)\(c[0-9][0-9]*\)\{0,1\}n[0-9][0-9]*$/\1/p')
			if [ -n "${ctrl}" ] && [ -z "${R}" ] && command -v nvme >/dev/null; then
				nvme=$(nvme id-ctrl -o json "/dev/${ctrl}" | oneline)
				sn=$(printf '%s\n' "${nvme}" | sed -n 's/.*"sn"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' | trim)
				[ -z "${sn}" ] || serial=${sn}
				nvme=$(printf '%s\n' "${nvme}" | sed 's/"sn"[[:space:]]*:[[:space:]]*"[^"]*"/"sn":""/')
			fi
		fi
	fi
	kv tswap-meta 1
	kv kind "${kind}"
	kv dev "${dev}"
	kv fs "${fs}"
	kv blk "${blk}"
	kv nvme "${nvme}"
	if [ -n "${serial}" ]; then
		kv serial_hash "$(printf '%s' "${serial}" | sha256sum | cut -c1-12)"
	else
		kv serial_hash ''
	fi
	kv nvme_cli "$(command -v nvme)"
	sys=${disk:+${R}/sys/block/${disk}}
	for f in logical_block_size physical_block_size rotational scheduler nr_requests \
		max_sectors_kb max_hw_sectors_kb io_poll dma_alignment; do
		kv "queue.${f}" "$([ -z "${sys}" ] || rd "${sys}/queue/${f}")"
	done
	kv size_sectors "$([ -z "${sys}" ] || rd "${sys}/size")"
	# model and firmware as sysfs has them (NVMe: the controller's
	# firmware_rev; SCSI: rev): without nvme-cli, and in fixture trees
	kv dev.model "$([ -z "${sys}" ] || rd "${sys}/device/model" | trim)"
	kv dev.firmware "$([ -z "${sys}" ] || rd "${sys}/device/firmware_rev" "${sys}/device/rev" | head -n 1 | trim)"
	kv poll_queues "$(rd "${R}/sys/module/nvme/parameters/poll_queues")"
	for f in current_link_speed current_link_width max_link_speed max_link_width numa_node; do
		kv "pci.${f}" "$([ -z "${pci}" ] || rd "${pci}/${f}")"
	done
	kv pci.address "${pci##*/}"
	if [ -n "${R}" ]; then
		cpus=$(rd "${R}/proc/self/status" | sed -n 's/^Cpus_allowed_list:[[:space:]]*//p')
	else
		cpus=$(taskset -pc "$$")
	fi
	kv cpus_allowed "${cpus##*: }"
	kv online_nodes "$(rd "${R}/sys/devices/system/node/online")"
	kv lscpu "$(lscpu -J ${R:+--sysroot "${R}"} | oneline)"
	kv kernel "$(uname -r)"
	kv host "$(uname -n)"
	mem=$(rd "${R}/proc/meminfo" | sed -n 's/^MemTotal: *\([0-9]*\) kB$/\1/p')
	kv memtotal "${mem:+$((mem * 1024))}"
	kv aio_max_nr "$(rd "${R}/proc/sys/fs/aio-max-nr")"
	kv io_uring_disabled "$(rd "${R}/proc/sys/kernel/io_uring_disabled")"
	# what tswap-check reads besides (not in meta.json)
	kv disk "${disk}"
	kv aio_nr "$(rd "${R}/proc/sys/fs/aio-nr")"
	kv memlock "$(rd "${R}/proc/self/limits" | sed -n 's/^Max locked memory *\([0-9a-z]*\) .*/\1/p')"
	kv cap_eff "$(rd "${R}/proc/self/status" | sed -n 's/^CapEff:[[:space:]]*//p')"
	node=$([ -z "${pci}" ] || rd "${pci}/numa_node")
	# (a node that is not a number names no folder)
	case ${node} in
	'' | *[!0-9]*) kv numa.cpulist '' ;;
	*) kv numa.cpulist "$(rd "${R}/sys/devices/system/node/node${node}/cpulist")" ;;
	esac
	case ${disk} in
	nvme*) nvmf "${disk}" ;;
	*) ;;
	esac
	# the sweep's own `fio --version` (TSWAP_FIO_VERSION), else fio's
	if [ -n "${TSWAP_FIO_VERSION:-}" ]; then
		kv fio "${TSWAP_FIO_VERSION}"
	else
		kv fio "$(fio --version)"
	fi
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
