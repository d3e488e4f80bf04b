#!/usr/bin/env bats
# tests/sweep-procs.bats - the fio processes of a sweep (issue 36, item 4
# and "process control"; docs/sweep.md "Stopping"): each fio runs in its
# own process group, a signal to the sweep is forwarded to it, the group
# is killed after a grace period of at most 5 s, the sweep exits only once
# fio and its job processes are gone, and no fio outlives a sweep that is
# itself SIGKILLed (`timeout -k`). Black box, through sweep/tswap-sweep.
#
# A fake fio first on PATH runs the real fio for every run but a point's
# (cwd RUN/points/.tmp-*, while $FAKE/hang exists). For a point it logs
# the signals it gets and ignores them, as fio 3.33 can when a SIGTERM
# lands while it forks a job (fio_sem_down), and forks a "job process"
# that ignores INT, TERM and HUP and calls setsid() as fio's job processes
# do (fio backend.c, thread_main): out of fio's process group. It records
# the pids, start times and process groups into $FAKE/procs. Processes are
# checked by pid and start time (a zombie counts as gone), never by the
# clock alone; each wait is a bounded poll.

load helpers

SWEEP=$REPO/sweep/tswap-sweep

setup() {
	common_setup
	export TSWAP_ENGINE=$ENGINE
	FAKE=$SCRATCH/fake
	mkdir -p "$FAKE/bin"
	local real
	real=$(command -v fio) || skip "requires fio on PATH"
	cat >"$FAKE/bin/fio" <<EOF
#!/bin/bash
# a fio that will not stop: see tests/sweep-procs.bats
if [[ \$PWD != */points/.tmp-* ]] || [ ! -e '$FAKE/hang' ]; then
	exec '$real' "\$@"
fi
for s in INT TERM HUP; do
	trap "echo \$s >>'$FAKE/signals'" "\$s"
done
(trap '' INT TERM HUP; exec setsid sleep 1000) &
job=\$!
stat_of() { local s; read -r s <"/proc/\$1/stat"; s=\${s##*) }; set -- \$s; printf '%s %s' "\$3" "\${20}"; }
{
	printf 'main %s %s\n' "\$\$" "\$(stat_of "\$\$")"
	printf 'job %s %s\n' "\$job" "\$(stat_of "\$job")"
} >'$FAKE/procs.tmp'
mv '$FAKE/procs.tmp' '$FAKE/procs'
while :; do
	sleep 1000 &
	wait \$! || true
done
EOF
	chmod +x "$FAKE/bin/fio"
	: >"$FAKE/hang"
	export PATH=$FAKE/bin:$PATH
	GRID=$SCRATCH/one.grid
	printf 'backend libaio\ntensor 4m\nblock 1m\nqd 8\nrw write\n' >"$GRID"
}

teardown() {
	local what pid _ start
	# a fake fio left by a failed test: killed, so that nothing lingers
	if [ -f "${FAKE:-}/procs" ]; then
		while read -r what pid _ start; do
			[ "$(proc_start "$pid")" != "$start" ] || kill -KILL "$pid" 2>/dev/null || true
		done <"$FAKE/procs"
	fi
	common_teardown
}

# proc_start PID: the start time of a live PID (field 22 of its stat),
# nothing when it is gone or a zombie.
proc_start() {
	local s
	read -r s 2>/dev/null <"/proc/$1/stat" || return 0
	s=${s##*) }
	# shellcheck disable=SC2086 # the fields of /proc/PID/stat
	set -- $s
	[ "$1" = Z ] || printf '%s\n' "${20}"
}

# fake_procs: wait (at most 120 s) until the fake fio has recorded its
# processes, then MAIN, MAIN_PGID, MAIN_START, JOB, JOB_START from them.
fake_procs() {
	local i what pid pgid start
	for ((i = 0; i < 1200; i++)); do
		[ ! -f "$FAKE/procs" ] || break
		kill -0 "$1" 2>/dev/null || { cat "$SCRATCH/log" >&2; fail "the sweep ended before its point started"; }
		sleep 0.1
	done
	[ -f "$FAKE/procs" ] || fail "the fake fio never started a point"
	while read -r what pid pgid start; do
		case $what in
		main) MAIN=$pid MAIN_PGID=$pgid MAIN_START=$start ;;
		job) JOB=$pid JOB_START=$start ;;
		esac
	done <"$FAKE/procs"
}

# fake_alive: the live processes of the fake fio, one "pid what" a line:
# its main and job processes (pid and start time), and any process in the
# main process's group (its sleeps).
fake_alive() {
	local f s pgid
	[ "$(proc_start "$MAIN")" != "$MAIN_START" ] || printf '%s main\n' "$MAIN"
	[ "$(proc_start "$JOB")" != "$JOB_START" ] || printf '%s job\n' "$JOB"
	for f in /proc/[0-9]*/stat; do
		read -r s 2>/dev/null <"$f" || continue
		s=${s##*) }
		# shellcheck disable=SC2086 # the fields of /proc/PID/stat
		set -- $s
		pgid=$3
		if [ "$1" = Z ] || [ "$pgid" != "$MAIN_PGID" ]; then
			continue
		fi
		f=${f#/proc/}
		printf '%s group %s\n' "${f%/stat}" "$MAIN_PGID"
	done
}

# no_fake_within SECONDS: poll until no process of the fake fio is alive.
no_fake_within() {
	local i left
	for ((i = 0; i < $1 * 10; i++)); do
		left=$(fake_alive)
		[ -n "$left" ] || return 0
		sleep 0.1
	done
	fail "fio processes still alive $1 s on: $left"
}

# stop_sweep SIGNAL CODE: a one-point sweep whose fio will not stop gets
# SIGNAL once its point runs: it exits CODE (within 30 s: the grace of 5
# s and room for a busy machine), fio got SIGNAL in its own process group,
# and nothing of it is alive when the sweep has exited.
stop_sweep() {
	local sig=$1 code=$2 pid rc=0 i sweep_pgid
	# fd 3 closed: a leftover process cannot hold bats' output open
	"$SWEEP" --grid "$GRID" --size 16m --io-size 8m --no-ceiling --target "$SCRATCH/t" \
		--out "$SCRATCH/run" >"$SCRATCH/log" 2>&1 3>&- &
	pid=$!
	fake_procs "$pid"
	read -r _ _ _ _ sweep_pgid _ <"/proc/$pid/stat"
	[ "$MAIN_PGID" != "$sweep_pgid" ] || fail "fio runs in the sweep's process group ($sweep_pgid)"
	kill -s "$sig" "$pid"
	for ((i = 0; i < 300; i++)); do
		[ -n "$(proc_start "$pid")" ] || break
		sleep 0.1
	done
	[ -z "$(proc_start "$pid")" ] || { kill -KILL "$pid"; fail "the sweep did not exit within 30 s of SIG$sig"; }
	# the sweep has exited: nothing of its fio may be left, at once
	run fake_alive
	assert_output ''
	wait "$pid" || rc=$?
	[ "$rc" -eq "$code" ] || { cat "$SCRATCH/log" >&2; fail "exit $rc, not $code"; }
	run -0 grep -qx "$sig" "$FAKE/signals"
	run -0 grep -q "did not stop on SIG$sig within 5 s: killing it" "$SCRATCH/log"
	run -0 grep -q 'interrupted: finished points are kept' "$SCRATCH/log"
}

@test "sweep procs: SIGTERM while fio ignores it: fio gets SIGTERM in its own group, is killed after the grace, the sweep exits 143 with nothing of fio left" {
	stop_sweep TERM 143
}

@test "sweep procs: SIGHUP is forwarded as SIGHUP: exit 129, nothing of fio left" {
	stop_sweep HUP 129
}

@test "sweep procs: under timeout -k 2 (SIGTERM, then SIGKILL of the sweep): no fio survives the sweep, and its target is not left locked" {
	local pid rc=0
	timeout -k 2 300 "$SWEEP" --grid "$GRID" --size 16m --io-size 8m --no-ceiling --target "$SCRATCH/t" \
		--out "$SCRATCH/run" >"$SCRATCH/log" 2>&1 3>&- &
	pid=$!
	fake_procs "$pid"
	# timeout passes SIGTERM on and SIGKILLs the sweep 2 s later, inside
	# the sweep's grace: what is left of fio is the guard's to end
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq 137 ] || { cat "$SCRATCH/log" >&2; fail "timeout exited $rc, not 137 (the sweep SIGKILLed)"; }
	no_fake_within 30
	# the target's locks went with the processes that held them: a new
	# sweep on it (with the real fio) runs
	rm -f "$FAKE/hang"
	run --separate-stderr timeout -k 10 120 "$SWEEP" --grid "$GRID" --size 16m --io-size 8m --no-ceiling \
		--target "$SCRATCH/t" --out "$SCRATCH/run2" 3>&-
	refute_output --partial 'in use by another'
	# shellcheck disable=SC2154 # stderr: set by bats' run --separate-stderr
	[[ $stderr != *'in use by another'* ]] || fail "the target is still locked: $stderr"
	[ "$status" -eq 0 ] || [ "$status" -eq 4 ] || fail "the new sweep exited $status: $stderr"
}
