# shellcheck shell=bash
# fioproc.sh - tswap-zero's fio guard (tswap/cli/zero_fio.py runs
# `setsid setpriv --pdeathsig USR1 -- bash fioproc.sh guard PARENT TAG
# CMD...`): fio in its own process group, killed with its job processes
# if tswap-zero dies. tswap-sweep's fio runs under the point stage's
# process control instead (tswap/executor/fioproc.py, the same rules).
#
# The guard is the leader of a new process group (setsid), and gets
# SIGUSR1 when PARENT, the process that started it, dies, SIGKILL
# included (prctl PR_SET_PDEATHSIG, which setpriv sets before it execs the
# guard). The guard starts CMD (fio) with TSWAP_FIO_GUARD=TAG in its
# environment only, waits for it and exits with its status. On SIGUSR1 it
# SIGKILLs fio, every process that carries the tag, then its own process
# group, itself included. A guard whose PARENT is already gone when it
# starts (its parent pid is no longer PARENT) starts nothing.
#
# Why the tag: fio's job processes call setsid() (fio backend.c,
# thread_main), so they leave fio's process group and session, and once
# fio's main process is killed they are re-parented away from it. A group
# kill (coreutils timeout's included) misses them; the environment they
# inherit from fio does not change, so /proc/PID/environ finds them.
# PR_SET_PDEATHSIG is cleared across fork and so never reaches them: the
# guard does the killing.
#
# Owns: fio_tagged_alive, fio_kill_tagged, fio_reap_tagged, fio_guard.
# Run as `bash fioproc.sh guard ...`.

# fio_tagged_alive TAG: status 0 while a process with TSWAP_FIO_GUARD=TAG
# in its environment lives (a zombie's environment reads empty).
fio_tagged_alive() {
	grep -qsxzF -- "TSWAP_FIO_GUARD=$1" /proc/[0-9]*/environ
}

# fio_kill_tagged TAG: SIGKILL every process with TSWAP_FIO_GUARD=TAG;
# status 1 when there was none (grep's status would not tell: a process
# that ends while grep reads the list is an error to it).
fio_kill_tagged() {
	local p found
	found=$(grep -lsxzF -- "TSWAP_FIO_GUARD=$1" /proc/[0-9]*/environ) || true
	[ -n "$found" ] || return 1
	while IFS=/ read -r _ _ p _; do
		kill -KILL "$p" 2>/dev/null || true
	done <<<"$found"
}

# fio_reap_tagged TAG: SIGKILL the tagged processes until none is left
# (one grep when there is none: after a point, the usual case).
fio_reap_tagged() {
	local i
	for ((i = 0; ; i++)); do
		fio_kill_tagged "$1" || return 0
		fio_tagged_alive "$1" || return 0
		((i != 200)) || warn "processes of fio (TSWAP_FIO_GUARD=$1) still not gone 10 s after SIGKILL: waiting for them"
		sleep 0.05
	done
}

# fio_guard PARENT TAG CMD...: the guard process (see above).
fio_guard() {
	local parent=$1 tag=$2 child rc
	shift 2
	# the sweep died (PR_SET_PDEATHSIG): kill fio, its job processes and
	# whatever they started, then the group, the guard with it (and a
	# child forked but not yet fio, that has no tag yet)
	# shellcheck disable=SC2317,SC2329 # invoked by trap
	fio_guard_reap() {
		trap '' INT TERM HUP USR1
		[ -z "${child:-}" ] || kill -KILL "$child" 2>/dev/null || true
		fio_reap_tagged "$tag"
		kill -KILL 0
	}
	trap fio_guard_reap USR1
	# a signal forwarded to the group is for fio: the guard stays, to kill
	# fio if the sweep dies during the grace period (a handler, not an
	# ignored signal: fio starts with the default actions)
	trap : INT TERM HUP
	if [ "$PPID" != "$parent" ]; then
		printf 'tswap fio guard: the sweep (pid %s) ended before fio started\n' "$parent" >&2
		exit 125
	fi
	TSWAP_FIO_GUARD=$tag "$@" &
	child=$!
	while :; do
		rc=0
		wait "$child" || rc=$?
		# a trapped signal ends wait early (status above 128): fio runs on
		if ((rc <= 128)) || ! kill -0 "$child" 2>/dev/null; then
			break
		fi
	done
	# fio's job processes end before it does; any left would run on alone
	if fio_tagged_alive "$tag"; then
		fio_reap_tagged "$tag"
		printf 'tswap fio guard: fio exited %s and left job processes running: killed\n' "$rc" >&2
	fi
	exit "$rc"
}

if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = guard ]; then
	set -euo pipefail
	shift
	# its messages go to fio's stderr (fio.stderr)
	warn() { printf 'tswap fio guard: %s\n' "$*" >&2; }
	fio_guard "$@"
fi
