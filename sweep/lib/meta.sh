# shellcheck shell=bash
# meta.sh - what was measured: the target's storage stack and the host, read
# from sysfs and from the JSON of standard tools (lsblk -J, findmnt -J,
# lscpu -J, nvme id-ctrl -o json when nvme-cli is installed), and the
# versions of tswap, the engine and fio.
#
# Owns: meta_json (the object; shape in jq/meta.jq), write_meta (RUN/meta.json
# and the "meta" key of sweep.json), meta_into_aggregate (the "meta" key of
# aggregate.json), tswap_version, print_version (--version). Reads: TARGET,
# ENGINE, RUN, ROOT, SWEEP_HOME. Writes: RUN/meta.json, RUN/sweep.json,
# RUN/aggregate.json. Nothing here writes to the target or needs root; a
# field that cannot be read is null with the reason next to it.
# shellcheck disable=SC2153 # TARGET, ENGINE: globals of state.sh

# tswap_version: the release (the Makefile's TSWAP_VERSION in a checkout,
# PREFIX/share/tswap/VERSION when installed) and, in a git checkout, the
# commit (git describe).
tswap_version() {
	local v=unknown c=''
	if [ -n "$ROOT" ]; then
		v=$(sed -n 's/^TSWAP_VERSION[[:space:]]*:=[[:space:]]*//p' "$ROOT/Makefile")
		c=$(git -C "$ROOT" describe --always --dirty --tags 2>/dev/null) || c=''
	elif [ -f "$SWEEP_HOME/VERSION" ]; then
		v=$(cat -- "$SWEEP_HOME/VERSION")
	fi
	printf '%s%s\n' "${v:-unknown}" "${c:+ (commit $c)}"
}

# print_version PROG: the --version text (first line as GNU tools, for
# help2man), then the engine's and fio's.
print_version() {
	local fio engine=${ENGINE:-$(default_engine 2>/dev/null || true)}
	fio=$(fio --version 2>/dev/null) || fio='not installed'
	printf '%s (tswap) %s\n' "$1" "$(tswap_version)"
	if [ -z "$engine" ]; then
		printf 'engine: none found\n'
	elif [ -f "$engine" ]; then
		printf 'engine: %s (built with this tswap version; its stats JSON says tswap_version)\n' "$engine"
	else
		printf 'engine: %s (not built)\n' "$engine"
	fi
	printf 'fio: %s\n' "$fio"
}

# meta_sysfs_kv DISKDIR PCIDIR: "key<TAB>value" lines of sysfs files (empty
# when absent): the disk's queue, the PCI device's link and NUMA node.
meta_sysfs_kv() {
	local disk=$1 pci=$2 f
	for f in logical_block_size physical_block_size rotational scheduler nr_requests \
		max_sectors_kb max_hw_sectors_kb io_poll dma_alignment; do
		printf 'queue.%s\t%s\n' "$f" "$(cat -- "$disk/queue/$f" 2>/dev/null || true)"
	done
	printf 'size_sectors\t%s\n' "$(cat -- "$disk/size" 2>/dev/null || true)"
	printf 'poll_queues\t%s\n' "$(cat /sys/module/nvme/parameters/poll_queues 2>/dev/null || true)"
	for f in current_link_speed current_link_width max_link_speed max_link_width numa_node; do
		printf 'pci.%s\t%s\n' "$f" "$([ -z "$pci" ] || cat -- "$pci/$f" 2>/dev/null || true)"
	done
	printf 'pci.address\t%s\n' "${pci##*/}"
}

# meta_json TARGET: the metadata object on stdout (jq/meta.jq). TARGET is a
# block device, or a file (that may not exist yet: its nearest existing
# directory gives the filesystem).
meta_json() {
	local target=$1 probe dev='' fs='{}' blk='{}' nvme='null' kind=file
	local disk='' pci='' d ctrl sysfs serial_hash='' cpus
	local lsblk_cols=NAME,KNAME,PATH,TYPE,MODEL,SERIAL,REV,SIZE,LOG-SEC,PHY-SEC,ROTA,SCHED,RQ-SIZE,TRAN,PKNAME,MAJ:MIN
	if [ -b "$target" ]; then
		kind=block
		dev=$target
	else
		probe=$target
		while [ ! -e "$probe" ] && [ "$probe" != / ]; do probe=$(dirname -- "$probe"); done
		fs=$(findmnt -J -T "$probe" -o TARGET,SOURCE,FSTYPE,OPTIONS 2>/dev/null) || fs='{}'
		d=$(jq -r '.filesystems[0].source // empty' <<<"$fs")
		# btrfs and bind mounts name a subvolume: /dev/x[/sub]
		d=${d%%\[*}
		[ -b "$d" ] && dev=$d
	fi
	if [ -n "$dev" ]; then
		blk=$(lsblk -J -b -d -o "$lsblk_cols" -- "$dev" 2>/dev/null) || blk='{}'
		# the queue is the whole disk's: a partition's parent (lsblk PKNAME)
		d=$(jq -r '.blockdevices[0] | if .type == "part" then .pkname else .kname end // empty' <<<"$blk")
		if [ -n "$d" ] && [ -d "/sys/block/$d" ]; then
			disk=/sys/block/$d
			# the controller's PCI device: the nearest ancestor of the disk's
			# device with a PCI address (nvme0n1 -> nvme0 -> 0000:01:00.0)
			ctrl=$(readlink -f -- "$disk/device" 2>/dev/null) || ctrl=''
			while [ -n "$ctrl" ] && [ "$ctrl" != /sys/devices ] && [ "$ctrl" != / ]; do
				if [[ ${ctrl##*/} =~ ^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$ ]]; then
					pci=$ctrl
					break
				fi
				ctrl=$(dirname -- "$ctrl")
			done
			if [[ $d =~ ^(nvme[0-9]+)(c[0-9]+)?n[0-9]+$ ]] && command -v nvme >/dev/null 2>&1; then
				nvme=$(nvme id-ctrl -o json "/dev/${BASH_REMATCH[1]}" 2>/dev/null) || nvme='null'
				jq -e 'type == "object"' >/dev/null 2>&1 <<<"$nvme" || nvme='null'
			fi
		fi
	fi
	sysfs=$(meta_sysfs_kv "$disk" "$pci" | jq -R -n '[inputs | split("\t") | {(.[0]): .[1]}] | add')
	serial_hash=$(jq -r --argjson n "$nvme" '($n.sn // .blockdevices[0].serial // "") | gsub("^\\s+|\\s+$"; "")' <<<"$blk")
	[ -z "$serial_hash" ] || serial_hash=$(printf '%s' "$serial_hash" | sha256sum | cut -c1-12)
	cpus=$(taskset -pc "$$" 2>/dev/null) || cpus=''
	jq -n --arg target "$target" --arg kind "$kind" --arg dev "$dev" \
		--argjson fs "$fs" --argjson blk "$blk" --argjson nvme "$nvme" --argjson sysfs "$sysfs" \
		--arg serial_hash "$serial_hash" --arg nvme_cli "$(command -v nvme || true)" \
		--argjson lscpu "$(lscpu -J 2>/dev/null || echo '{}')" \
		--arg cpus_allowed "${cpus##*: }" --arg online_nodes "$(cat /sys/devices/system/node/online 2>/dev/null || true)" \
		--arg kernel "$(uname -r)" --arg host "$(hostname)" \
		--arg memtotal "$(awk '$1 == "MemTotal:" {printf "%.0f\n", $2 * 1024}' /proc/meminfo)" \
		--arg aio_max_nr "$(cat /proc/sys/fs/aio-max-nr 2>/dev/null || true)" \
		--arg io_uring_disabled "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || true)" \
		--arg fio "$(fio --version 2>/dev/null || true)" --arg tswap "$(tswap_version)" \
		--arg engine "${ENGINE:-}" \
		-f "$JQ_DIR/meta.jq"
}

# write_meta: RUN/meta.json and sweep.json's "meta" (a new run, once).
write_meta() {
	meta_json "$TARGET" >"$RUN/meta.json.tmp"
	mv -f "$RUN/meta.json.tmp" "$RUN/meta.json"
	jq --slurpfile m "$RUN/meta.json" '.meta = $m[0]' "$RUN/sweep.json" >"$RUN/sweep.json.tmp"
	mv -f "$RUN/sweep.json.tmp" "$RUN/sweep.json"
}

# meta_into_aggregate: aggregate.json carries the run's meta too, so one
# file says what was measured and how fast.
meta_into_aggregate() {
	[ -f "$RUN/meta.json" ] || return 0
	jq --slurpfile m "$RUN/meta.json" '.meta = $m[0]' "$RUN/aggregate.json" >"$RUN/aggregate.json.tmp"
	mv -f "$RUN/aggregate.json.tmp" "$RUN/aggregate.json"
}
