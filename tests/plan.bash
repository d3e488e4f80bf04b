# shellcheck shell=bash
# tests/plan.bash - plan lines for the tests that source sweep/lib/ and
# need a run's plan (PLAN_TEXT) from a small grid: tswap.plan.grid and
# tswap.plan.expand, as the sweep's front end (tswap/cli/sweep_setup.py)
# makes them. Needs SWEEP_HOME and TMP.

# grid_from LINES...: a grid file of LINES, $TMP/t.grid.
grid_from() {
	printf '%s\n' "$@" >"$TMP/t.grid"
}

# plan_py STEP [QD JOBS]: $TMP/t.grid's plan lines (STEP expand), or the
# plan lines on stdin with their ceiling lines of iodepth QD and JOBS fio
# jobs (STEP ceilings). The engine's threads limit is taken as 1024.
plan_py() {
	/usr/bin/python3 -I -B -c 'import sys
sys.path.insert(0, sys.argv[1])
from tswap.plan import expand, grid
if sys.argv[2] == "expand":
    g, _ = grid.load(sys.argv[3], open(sys.argv[3]).read(), "/", lambda: 1024)
    lines = expand.expand(grid.with_defaults(g)).lines
else:
    lines = expand.add_ceilings(tuple(sys.stdin.read().split("\n")[:-1]), int(sys.argv[3]), int(sys.argv[4]))
print("\n".join(lines))' "$SWEEP_HOME" "$@"
}

# expand_grid: $TMP/t.grid's points as plan lines.
expand_grid() {
	plan_py expand "$TMP/t.grid"
}

# add_ceilings PLAN: PLAN with its ceiling lines (CEILING_QD, CEILING_JOBS).
add_ceilings() {
	plan_py ceilings "$CEILING_QD" "$CEILING_JOBS" <<<"$1"
}
