#!/usr/bin/env bats
# shellcheck disable=SC2154,SC2034,SC2030,SC2031  # bats sets $stderr, $output, $status; BG_SWEEPS: read by safety_teardown; helpers read bats' $status
#
# One sweep per run directory and per target (issue 11 item 5, issue 25
# item 5; docs/sweep.md "Run directory"): a second sweep on a locked run
# directory, or on a target in use (through a symlink, ./, or a hard
# link, new or existing), exits 2 naming the holder's pid and run; the
# lock goes with its holder on SIGTERM, SIGINT, an error and a normal
# exit; a symlink planted at a lock file is refused.

load helpers
load safety

setup() { safety_setup; }
teardown() { safety_teardown; }

@test "sweep-locks: a second sweep on a locked run directory exits 2 naming the holder's pid" {
	"$SWEEP" --grid "$GRID" --size 16m --runtime 20 --ramp 0 --no-ceiling --rw read \
		--target t.swap --out run >first.out 2>&1 &
	first=$!
	for _ in $(seq 100); do
		[ -s run/.lock ] && break
		sleep 0.1
	done
	[ -s run/.lock ] || { kill "$first"; fail "the first sweep never locked run/"; }
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target t2.swap --out run
	kill -INT "$first" 2>/dev/null || true
	wait "$first" || true
	refused_one_line
	grep -q "pid $first" <<<"$stderr" || fail "holder pid $first not named: $stderr"
	grep -qs t2.swap run/sweep.json && fail "the second sweep wrote into run/"
	true
}

# released_by SIG STATUS PID OUT: the sweep PID, sent SIG, exits STATUS,
# and t.swap is free again: a sweep on it into OUT runs.
released_by() {
	local rc=0
	kill -"$1" "$3"
	wait "$3" || rc=$?
	assert_equal "$rc" "$2"
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target t.swap --out "$4"
	[ "$status" -eq 0 ] || { show; fail "the target stayed locked after SIG$1"; }
}

@test "sweep-locks: a second sweep on a target in use exits 2 naming the holder; the lock goes with the holder (issue 25 item 5)" {
	# a point far longer than the test (--fixed-runtime: steady state
	# cannot end it early), so that it still holds the lock on a busy
	# machine; stopped by the signals below
	"$SWEEP" --grid "$GRID" --size 16m --runtime 600 --fixed-runtime --ramp 0 --no-ceiling --rw read \
		--target t.swap --out run1 >first.out 2>&1 3>&- &
	first=$!
	BG_SWEEPS=$first
	# wait for its plan and its scratch file (made after the plan; a link
	# to a file not yet made is refused as dangling)
	for _ in $(seq 600); do
		[ -f run1/plan.json ] && [ -f t.swap ] && break
		sleep 0.1
	done
	if [ ! -f run1/plan.json ] || [ ! -f t.swap ]; then
		kill "$first"
		fail "the first sweep never made run1/ and t.swap"
	fi
	# the same target, named through a symlink and ./
	ln -s t.swap link.swap
	for t in link.swap ./t.swap "$SCRATCH/t.swap"; do
		ssweep --grid "$GRID" "${ONE[@]}" --rw read --target "$t" --out run2
		refused_one_line
		grep -q "pid $first" <<<"$stderr" || { kill "$first"; fail "[$t] holder pid $first not named: $stderr"; }
		grep -qF "run $SCRATCH/run1" <<<"$stderr" || { kill "$first"; fail "[$t] run1 not named: $stderr"; }
		[ ! -e run2 ] || { kill "$first"; fail "[$t] the refused sweep made run2/"; }
	done
	# another target is free
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target other.swap --out run3
	[ "$status" -eq 0 ] || { show; kill "$first"; fail "a sweep on another target was refused"; }
	# SIGTERM: the lock goes with the sweep (its lock file stays, naming it)
	released_by TERM 143 "$first" run4
	# SIGINT (a background job ignores it unless given back its default)
	env --default-signal=INT "$SWEEP" --grid "$GRID" --size 16m --runtime 600 --fixed-runtime --ramp 0 --no-ceiling \
		--rw read --target t.swap --out run6 >second.out 2>&1 3>&- &
	second=$!
	BG_SWEEPS="$first $second"
	# while its point runs (the trap is the points')
	for _ in $(seq 300); do
		compgen -G 'run6/points/.tmp-*' >/dev/null && break
		sleep 0.1
	done
	released_by INT 130 "$second" run7
	# an error exit (a non-empty --out) and a normal one release it too
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target t.swap --out run4
	refused_one_line
	grep -q 'not empty' <<<"$stderr" || fail "$stderr"
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target t.swap --out run5
	[ "$status" -eq 0 ] || { show; fail "the target stayed locked after an exit"; }
}

# bg_sweep OUT TARGET: a sweep into OUT in the background (BG_PID), a
# point far longer than the test, once its point runs (its target made).
bg_sweep() {
	"$SWEEP" --grid "$GRID" --size 16m --runtime 600 --fixed-runtime --ramp 0 --no-ceiling --rw read \
		--target "$2" --out "$1" >"$1.out" 2>&1 3>&- &
	BG_PID=$!
	for _ in $(seq 600); do
		compgen -G "$1/points/.tmp-*" >/dev/null && return 0
		sleep 0.1
	done
	kill "$BG_PID"
	fail "the sweep into $1 never started its point: $(cat "$1.out")"
}

@test "sweep-locks: a hard link to a target in use is refused, new or existing target, naming the holder" {
	# a new path (locked by inode once created), then an existing file
	for run in run1:t.swap:hard.swap run3:hard.swap:t.swap; do
		IFS=: read -r run t other <<<"$run"
		bg_sweep "$run" "$t"
		BG_SWEEPS=$BG_PID
		[ -e hard.swap ] || ln t.swap hard.swap
		ssweep --grid "$GRID" "${ONE[@]}" --rw write --target "$other" --out run2
		refused_one_line
		grep -q "pid $BG_PID" <<<"$stderr" || fail "[$t] holder pid $BG_PID not named: $stderr"
		grep -qF "run $SCRATCH/$run" <<<"$stderr" || fail "[$t] $run not named: $stderr"
		[ ! -e run2 ] || fail "[$t] the refused sweep made run2/"
		kill -TERM "$BG_PID"
		wait "$BG_PID" || true
	done
	ssweep --grid "$GRID" "${ONE[@]}" --rw write --target t.swap --out run5
	[ "$status" -eq 0 ] || { show; fail "the file stayed locked after its sweep ended"; }
}

@test "sweep-locks: a rank file in use is refused before the run directory, and not written" {
	bg_sweep run1 t.swap.rank1
	BG_SWEEPS=$BG_PID
	sum=$(sha256sum t.swap.rank1)
	ssweep --grid "$GRID" "${ONE[@]}" --ranks 2 --rw read --target t.swap --out run2
	refused_one_line
	grep -q "pid $BG_PID" <<<"$stderr" || fail "holder pid $BG_PID not named: $stderr"
	[ ! -e run2 ] || fail "the refused sweep made run2/"
	[ ! -e t.swap.rank0 ] || fail "the refused sweep made t.swap.rank0"
	sha256sum -c <<<"$sum" >/dev/null || fail "t.swap.rank1 was written"
	kill -TERM "$BG_PID"
	wait "$BG_PID" || true
}

@test "sweep-locks: a symlink planted at a target's lock file is refused, and the file it names is untouched" {
	[ "$EUID" -eq 0 ] || skip "needs root: the lock directory of root (/run/tswap-locks) is the one a planted link would hit"
	local d=/run/tswap-locks key f sum
	[ -d "$d" ] || mkdir -m 0700 "$d"
	key=$(printf '%s' "$SCRATCH/t.swap" | sha256sum)
	f=$d/file-${key:0:32}.lock
	printf 'precious\n' >victim
	sum=$(sha256sum victim)
	ln -sfn "$SCRATCH/victim" "$f"
	ssweep --grid "$GRID" "${ONE[@]}" --rw read --target t.swap --out run1
	rm -f -- "$f"
	[ "$status" -eq 3 ] || { show; fail "expected exit 3, got $status"; }
	[[ $stderr == *"a symbolic link"* ]] || { show; fail "the refusal does not say why"; }
	sha256sum -c <<<"$sum" >/dev/null || fail "the file the planted link names was written"
	[ ! -e run1 ] || fail "the refused sweep made run1/"
}
