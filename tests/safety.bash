# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # ONE: used by the files that load this; bats sets $status, $output, $stderr
# tests/safety.bash - what sweep-safety.bats and sweep-locks.bats share: a
# one-point grid in $SCRATCH (the cwd), the sweep under a timeout (ssweep),
# and the one-line refusal check. Loaded after helpers.bash.

SWEEP=$REPO/sweep/tswap-sweep

# safety_setup: common_setup, the engine, cwd $SCRATCH, GRID: one point.
safety_setup() {
	common_setup
	export TSWAP_ENGINE=$ENGINE
	cd "$SCRATCH" || fail "cd $SCRATCH"
	GRID=$SCRATCH/one.grid
	printf '%s\n' 'description one point' 'rw read' 'backend libaio' 'tensor 4m' \
		'iodepth 1' 'block 1m' 'qd 8' 'threads 1' >"$GRID"
}
# safety_teardown: stop a background sweep (BG_SWEEPS: pids) a failed
# test did not stop, then common_teardown.
safety_teardown() {
	local p
	for p in ${BG_SWEEPS:-}; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	common_teardown
}

ONE=(--size 16m --io-size 8m --no-ceiling)

ssweep() {
	run --separate-stderr timeout -k 10 120 "$SWEEP" "$@"
}

show() {
	printf 'exit %s\n--- stdout\n%s\n--- stderr\n%s\n' "$status" "$output" "${stderr:-}" >&2
}

# refused_one_line: exit 2 with exactly one line on stderr.
refused_one_line() {
	[ "$status" -eq 2 ] || { show; fail "expected exit 2, got $status"; }
	[ "$(grep -c . <<<"$stderr")" -eq 1 ] || { show; fail "expected one line on stderr"; }
}
