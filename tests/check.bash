# shellcheck shell=bash
# tests/check.bash - sysfs/procfs fixture trees for tests/check.bats:
# tswap-check reads them through TSWAP_SYSROOT=DIR (sweep/lib/meta-collect.sh).
# The trees are laid out as the kernel lays out sysfs (relative symlinks
# from /sys/block and /sys/class/block into /sys/devices), so the collector
# walks them the way it walks a real host.
#
#   sysroot_pcie DIR     a healthy host: /data (xfs) on nvme0n1, a PCIe Gen4
#                        x4 drive at 0000:01:00.0 trained at full speed and
#                        width, on NUMA node 0 (CPUs 0-3; node 1: 4-7), this
#                        process allowed CPUs 0-3, scheduler none,
#                        nr_requests 1023, max_sectors_kb 1024 (hw 2048),
#                        fs.aio-max-nr 1048576, io_uring enabled, memlock
#                        64 MiB without CAP_IPC_LOCK
#   sysroot_nvmf DIR     the same host, /data on nvme1n1: an NVMe/TCP
#                        namespace over two controllers (native multipath,
#                        iopolicy numa): nvme1 ANA optimized, nvme2 ANA
#                        non-optimized
#   put DIR/FILE VALUE   write one sysfs/procfs value (a mutation)
#   pcie_dev DIR         the fixture drive's PCI device folder
#   status_line KEY VAL  DIR/proc/self/status with KEY changed

PCI_DEV=sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0

put() {
	mkdir -p "$(dirname -- "$1")"
	printf '%s\n' "$2" >"$1"
}

pcie_dev() { printf '%s/%s\n' "$1" "${PCI_DEV}"; }

# host_common DIR SOURCE: procfs and the NUMA nodes; /data on SOURCE
host_common() {
	local r=$1
	put "${r}/proc/self/mountinfo" "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
30 22 259:1 / /data rw,noatime shared:2 - xfs $2 rw,attr2,inode64,noquota"
	put "${r}/proc/self/status" "Name:	tswap-check
Cpus_allowed_list:	0-3
CapEff:	0000000000000000"
	put "${r}/proc/self/limits" "Limit                     Soft Limit           Hard Limit           Units
Max locked memory         67108864             67108864             bytes"
	put "${r}/proc/meminfo" "MemTotal:       65536000 kB"
	put "${r}/proc/sys/fs/aio-max-nr" 1048576
	put "${r}/proc/sys/fs/aio-nr" 0
	put "${r}/proc/sys/kernel/io_uring_disabled" 0
	put "${r}/sys/devices/system/node/online" 0-1
	put "${r}/sys/devices/system/node/node0/cpulist" 0-3
	put "${r}/sys/devices/system/node/node1/cpulist" 4-7
	put "${r}/sys/module/nvme/parameters/poll_queues" 0
	mkdir -p "${r}/sys/block" "${r}/sys/class/block" "${r}/sys/class/nvme-subsystem"
}

# queue DIR: a block device's queue folder, healthy values
queue() {
	put "$1/queue/scheduler" "[none] mq-deadline kyber bfq"
	put "$1/queue/nr_requests" 1023
	put "$1/queue/max_sectors_kb" 1024
	put "$1/queue/max_hw_sectors_kb" 2048
	put "$1/queue/logical_block_size" 512
	put "$1/queue/physical_block_size" 512
	put "$1/queue/rotational" 0
	put "$1/size" 3907029168
}

# disk_links DIR NAME TARGET: /sys/block/NAME and /sys/class/block/NAME
# to sys/TARGET, relative as the kernel makes them
disk_links() {
	ln -s "../$3" "$1/sys/block/$2"
	ln -s "../../$3" "$1/sys/class/block/$2"
}

sysroot_pcie() {
	local r=$1 pci ns
	host_common "${r}" /dev/nvme0n1
	pci=$(pcie_dev "${r}")
	put "${pci}/current_link_speed" "16.0 GT/s PCIe"
	put "${pci}/max_link_speed" "16.0 GT/s PCIe"
	put "${pci}/current_link_width" 4
	put "${pci}/max_link_width" 4
	put "${pci}/numa_node" 0
	put "${pci}/nvme/nvme0/transport" pcie
	put "${pci}/nvme/nvme0/state" live
	put "${pci}/nvme/nvme0/address" 0000:01:00.0
	ns=${pci}/nvme/nvme0/nvme0n1
	queue "${ns}"
	ln -s ../../nvme0 "${ns}/device"
	disk_links "${r}" nvme0n1 "${PCI_DEV#sys/}/nvme/nvme0/nvme0n1"
}

sysroot_nvmf() {
	local r=$1 sub=sys/devices/virtual/nvme-subsystem/nvme-subsys1 c
	host_common "${r}" /dev/nvme1n1
	for c in 1 2; do
		put "${r}/sys/devices/virtual/nvme-fabrics/ctl/nvme${c}/transport" tcp
		put "${r}/sys/devices/virtual/nvme-fabrics/ctl/nvme${c}/state" live
		put "${r}/sys/devices/virtual/nvme-fabrics/ctl/nvme${c}/address" "traddr=192.0.2.${c},trsvcid=4420,src_addr=192.0.2.100"
	done
	put "${r}/sys/devices/virtual/nvme-fabrics/ctl/nvme1/nvme1c1n1/ana_state" optimized
	put "${r}/sys/devices/virtual/nvme-fabrics/ctl/nvme2/nvme1c2n1/ana_state" non-optimized
	put "${r}/${sub}/iopolicy" numa
	put "${r}/${sub}/subsysnqn" nqn.2014-08.org.example:swap
	ln -s ../../nvme-fabrics/ctl/nvme1 "${r}/${sub}/nvme1"
	ln -s ../../nvme-fabrics/ctl/nvme2 "${r}/${sub}/nvme2"
	queue "${r}/${sub}/nvme1n1"
	ln -s ../../../devices/virtual/nvme-subsystem/nvme-subsys1 "${r}/sys/class/nvme-subsystem/nvme-subsys1"
	disk_links "${r}" nvme1n1 "${sub#sys/}/nvme1n1"
}

# status_line DIR KEY VALUE: DIR/proc/self/status with KEY's value changed
status_line() {
	sed -i "s/^$2:.*/$2:\t$3/" "$1/proc/self/status"
}
