# shellcheck shell=bash
# fioproc.sh - the fio processes a sweep starts on this host: each in its
# own process group under a guard, stopped on a signal within FIO_GRACE
# seconds, and never left running after the sweep, however it ends.
#
# fio_exec PARENT TAG CMD... (in a background subshell, after its cd and
# redirections) becomes
#   setsid setpriv --pdeathsig USR1 -- bash fioproc.sh guard PARENT TAG CMD...
# (setpriv and bash by the full paths that bash's hash finds along PATH,
# without a process: neither setsid nor setpriv tries each PATH
# directory in turn; $BASH is no help, the sweep's bash runs with the
# entry script as its argv[0]) with the subshell's pid: that pid is the guard's, the leader of a new
# process group (setsid; a background subshell is not a group leader, so
# setsid does not fork), and the guard gets SIGUSR1 when PARENT, the shell
# that forked it, dies, SIGKILL included (prctl PR_SET_PDEATHSIG, which
# setpriv sets before it execs the guard). The guard starts CMD (fio) with
# TSWAP_FIO_GUARD=TAG in its environment only, waits for it and exits with
# its status. On SIGUSR1 it SIGKILLs fio, every process that carries the
# tag, then its own process group, itself included. A guard whose PARENT
# is already gone when it starts (its parent pid is no longer PARENT)
# starts nothing.
#
# Why the tag: fio's job processes call setsid() (fio backend.c,
# thread_main), so they leave fio's process group and session, and once
# fio's main process is killed they are re-parented away from it. A group
# kill (coreutils timeout's included) misses them; the environment they
# inherit from fio does not change, so /proc/PID/environ finds them.
# PR_SET_PDEATHSIG is cleared across fork and so never reaches them: the
# guard does the killing.
#
# fio_stop PID TAG SIGNAL (the sweep's signal trap) forwards SIGNAL to the
# group PID (the guard ignores it, fio gets it), waits up to FIO_GRACE
# seconds for fio and its job processes to end, then SIGKILLs the group
# and every tagged process, and returns only once the guard is reaped and
# no tagged process is left.
#
# Owns: FIOPROC_SH, FIO_GRACE, fio_new_tag, fio_exec, fio_tagged_alive,
# fio_kill_tagged, fio_reap_tagged, fio_stop, fio_guard, alive. Reads:
# PROG (warn). Run as `bash fioproc.sh guard ...`: the guard.

FIOPROC_SH=${BASH_SOURCE[0]}
[[ $FIOPROC_SH == /* ]] || FIOPROC_SH=$PWD/$FIOPROC_SH
# seconds from the forwarded signal to SIGKILL (issue 36: at most 5, well
# inside the 10 s of a caller's `timeout -k 10`)
FIO_GRACE=5

# alive PID: the process exists and is not a zombie (the state: the
# field after the command name, which ends at the last ')').
# shellcheck disable=SC2317 # called from signal traps
alive() {
	local st
	{ IFS= read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
	st=${st##*) }
	st=${st%% *}
	[ -n "$st" ] && [ "$st" != Z ]
}

# fio_new_tag VAR: a tag no other fio of this host carries, into VAR.
fio_new_tag() {
	printf -v "$1" '%d.%s.%d' "$$" "${EPOCHREALTIME//[!0-9]/}" "$SRANDOM"
}

# fio_exec PARENT TAG CMD...: exec the guard running CMD (see above); the
# caller runs it in a background subshell, PARENT its own $BASHPID.
fio_exec() {
	local parent=$1 tag=$2 setpriv=setpriv bash=bash
	shift 2
	! hash setpriv 2>/dev/null || setpriv=${BASH_CMDS[setpriv]:-setpriv}
	! hash bash 2>/dev/null || bash=${BASH_CMDS[bash]:-bash}
	exec setsid "$setpriv" --pdeathsig USR1 -- "$bash" "$FIOPROC_SH" guard "$parent" "$tag" "$@"
}

# fio_tagged_alive TAG: status 0 while a process with TSWAP_FIO_GUARD=TAG
# in its environment lives (a zombie's environment reads empty).
# shellcheck disable=SC2317 # called from signal traps
fio_tagged_alive() {
	grep -qsxzF -- "TSWAP_FIO_GUARD=$1" /proc/[0-9]*/environ
}

# fio_kill_tagged TAG: SIGKILL every process with TSWAP_FIO_GUARD=TAG;
# status 1 when there was none (grep's status would not tell: a process
# that ends while grep reads the list is an error to it).
# shellcheck disable=SC2317 # called from signal traps
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
# shellcheck disable=SC2317 # called from signal traps
fio_reap_tagged() {
	local i
	for ((i = 0; ; i++)); do
		fio_kill_tagged "$1" || return 0
		fio_tagged_alive "$1" || return 0
		((i != 200)) || warn "processes of fio (TSWAP_FIO_GUARD=$1) still not gone 10 s after SIGKILL: waiting for them"
		sleep 0.05
	done
}

# fio_stop PID TAG SIGNAL: forward SIGNAL (INT, TERM or HUP) to the group
# PID, SIGKILL it and the tagged processes after FIO_GRACE seconds, return
# once none is left (see above).
# shellcheck disable=SC2317 # called from signal traps
fio_stop() {
	local pid=$1 tag=$2 sig=$3 i
	kill -s "$sig" -- "-$pid" 2>/dev/null || true
	for ((i = 0; i < FIO_GRACE * 10; i++)); do
		alive "$pid" || fio_tagged_alive "$tag" || break
		sleep 0.1
	done
	if alive "$pid" || fio_tagged_alive "$tag"; then
		warn "fio (process group $pid) did not stop on SIG$sig within $FIO_GRACE s: killing it"
	fi
	# fio gone or not: nothing of the group or the tag is left running (the
	# guard, PID, is reaped last: until then no new process can get PID)
	kill -KILL -- "-$pid" 2>/dev/null || true
	fio_reap_tagged "$tag"
	wait "$pid" 2>/dev/null || true
}

# fio_guard PARENT TAG CMD...: the guard process (fio_exec).
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
