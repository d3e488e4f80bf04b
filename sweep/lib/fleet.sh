# shellcheck shell=bash
# fleet.sh - fleet mode's hosts (--hosts, docs/fleet.md): the check of
# their targets before anything is written.
#
# Each point runs as one `fio --client=HOST,PORT job.fio` per host, all
# started at once (exec-fleet.sh), so each host's output, exit status and
# time limit are its own (fio's multi-client mode connects one host after
# the other, with no timeout). Results: fio's client JSON (client_stats).
# The hosts file, its checks and the fleet settings are the front end's
# (tswap/cli/sweep_fleet.py, tswap.plan.hosts), which hands over the H_*
# arrays and sweep.json's "fleet" (--resume reads it back:
# tswap/cli/sweep_resume.py).
#
# Owns: fleet_check_targets. Reads: the H_* arrays, DESTRUCTIVE, FORCE.

# fleet_check_targets WRITES: a target under /dev/ is taken for a block
# device. The sweep cannot look at a device on another host (mounted? a
# filesystem?), so writing to one needs both --destructive and --force.
fleet_check_targets() {
	local writes=$1 i
	[ "$writes" = 1 ] || return 0
	for ((i = 0; i < ${#H_ADDR[@]}; i++)); do
		[[ ${H_TARGET[i]} == /dev/* ]] || continue
		if [ "$DESTRUCTIVE" = 0 ] || [ "$FORCE" = 0 ]; then
			die "$EXIT_USAGE" "refusing target ${H_TARGET[i]} on ${H_LABEL[i]}: a device on a host, and the sweep writes to it (destroying its data); the sweep cannot check it there for mounts or signatures, so pass --destructive --force, or --rw read"
		fi
		warn "writing to ${H_TARGET[i]} on ${H_LABEL[i]} because of --destructive --force"
	done
	return 0
}
