# shellcheck shell=bash
# tests/budget.bash - what tests/sweep-budget.bats and
# tests/sweep-budget-bench.bats share: the repository, the engine, a
# setup that writes their small grid (4 points per direction, 4 MiB
# tensors on a 32 MiB file) to $SCRATCH/small.grid, and need_engine.
# Loaded after helpers (common_setup, when present).

SWEEP_REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
# shellcheck disable=SC2034 # used by the .bats files that load this
SWEEP=$SWEEP_REPO/sweep/tswap-sweep
SWEEP_ENGINE=${TSWAP_ENGINE:-$SWEEP_REPO/build/tswap.so}

setup() {
	if declare -F common_setup >/dev/null; then
		common_setup
	else
		SCRATCH=$BATS_TEST_TMPDIR/scratch
		mkdir -p "$SCRATCH"
	fi
	export TSWAP_ENGINE=$SWEEP_ENGINE
	cat >"$SCRATCH/small.grid" <<-'GRID'
		description  budget test
		rw           read write
		backend      libaio
		tensor       4m
		iodepth      1
		block        512k 1m
		qd           4 16
		window       overlap
		submit       block
		threads      1
		size         32m
		runtime      2
		ramp         1
		repeat       1
	GRID
}

teardown() {
	if declare -F common_teardown >/dev/null; then
		common_teardown
	fi
}

# need_engine: skip, saying why, without the engine
need_engine() {
	[ -f "$SWEEP_ENGINE" ] || skip "requires the engine: $SWEEP_ENGINE is missing (run 'make')"
}
