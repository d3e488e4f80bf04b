# shellcheck shell=bash
# budget.sh - --budget SECONDS: the sweep within a wall-time budget, by
# successive halving (docs/sweep.md "Budget").
#
# Round 1 runs every point once, short; each pick group (a direction at
# one rank count) keeps half its points (tswap.stats.budget prune); each next
# round runs the survivors with twice the runtime, until 2 per group are
# left: the final round runs the ceilings once, then those points with
# the grid's ramp and runtime and at least 3 repeats (the greater of
# --repeat and tswap.plan.budget_start REPEAT), into RUN/points/, which
# the aggregation and pick read. The final round is reserved first (down
# to its floor, min(FINAL_MIN, the runtime), or fio's steady-state
# window), the pruning rounds get the rest (tswap.plan.budget); the plan
# is redone after each round with the measured start-up per run
# (tswap.cli.budget_run, beside budget-run.sh run_budget's loop).
#
# The budget itself (the default rule, the refusals of --budget, a
# budget run's --resume refused) and sweep.json's budget are the front
# end's (tswap/cli/sweep_start.py, tswap.plan.budget_start).
#
# Owns: budget_dry_run (report.md's budget lines: tswap.report.md;
# aggregate.json's: tswap.stats.budget, from tswap.cli.finish). Reads:
# BUDGET, BUDGET_T0, PLAN_TEXT, STEADY, RUNTIME, RAMP (the grid's: each
# round runs with its own), REPEAT. The rounds: budget-run.sh.

# budget_dry_run: the planned rounds (runs, runtime, ramp, seconds) and
# the number of fio runs, before the dry run's job files
# (tswap.cli.budget_run --dry-run).
budget_dry_run() {
	[ -n "$BUDGET" ] || return 0
	py budget-run --dry-run --budget "$BUDGET" --t0 "$BUDGET_T0" --steady "$STEADY" \
		--ramp "${RAMP:-0}" --runtime "$RUNTIME" --repeat "$REPEAT" <<<"$PLAN_TEXT"
}
