# shellcheck shell=bash
# budget.sh - --budget SECONDS: the sweep within a wall-time budget, by
# successive halving (docs/sweep.md "Budget").
#
# Round 1 runs every point once, short; each pick group (a direction at
# one rank count) keeps half its points (tswap.stats.budget prune); each next
# round runs the survivors with twice the runtime, until 2 per group are
# left: the final round runs the ceilings once, then those points with
# the grid's ramp and runtime and at least BUDGET_REPEAT repeats, into
# RUN/points/, which the aggregation and pick read. The final round is
# reserved first (down to its floor, min(BUDGET_FINAL_MIN, the runtime),
# or fio's steady-state window), the pruning rounds get the rest
# (tswap.plan.budget); the plan is redone after each round with the
# measured start-up per run (budget-run.sh run_budget).
#
# The budget itself (the default rule, the refusals of --budget, a
# budget run's --resume refused) and sweep.json's budget are the front
# end's (tswap/cli/sweep_start.py, tswap.plan.budget_start).
#
# Owns: budget_dry_run (report.md's budget lines: tswap.report.md;
# aggregate.json's: tswap.stats.budget, from tswap.cli.finish), and the
# plan and clock helpers budget-run.sh uses. Reads: BUDGET, BUDGET_T0,
# PLAN_TEXT, RUNTIME, RAMP (the grid's: each round runs with its own),
# REPEAT, RUN. Writes: RUN/budget.json, RUN/rounds/KEY.sN/ (a pruning
# round's runs). The rounds: budget-run.sh.
# shellcheck disable=SC2016 # $NAME in single quotes: jq's (num)

# budget_elapsed: seconds since the script started (the budget's clock).
budget_elapsed() {
	num 1 '$b - $a' a "$BUDGET_T0" b "$EPOCHREALTIME"
}

# budget_unspent: whole seconds of the budget not spent yet (no reserve
# kept: the progress line's "s left"), in one jq run.
budget_unspent() {
	num 0 '$b - ($n - $a | fixed(1) | tonumber) | trunc' b "$BUDGET" a "$BUDGET_T0" n "$EPOCHREALTIME"
}

# BUDGET_SWEEP_S: the sweep's own seconds per run (job file, drop_caches,
# result stages: a run's time beyond fio's), as the last round measured;
# 0 before one did (run_budget).
BUDGET_SWEEP_S=0

# budget_reserve: seconds kept for the outputs after the runs (collect,
# summary.csv, plots, report.md, all jq): BUDGET_RESERVE + 0.02 s per plan
# line, or BUDGET_RESERVE_RUNS x BUDGET_SWEEP_S when more (a busy machine).
budget_reserve() {
	local n
	n=$(grep -c . <<<"$PLAN_TEXT") || true
	num 0 '[$r + 0.02 * $n, $k * $s] | max + 0.999 | floor' r "$BUDGET_RESERVE" n "$n" \
		k "$BUDGET_RESERVE_RUNS" s "$BUDGET_SWEEP_S"
}

# budget_left: whole seconds of the budget left for runs (after the
# outputs' reserve), possibly negative.
budget_left() {
	local e r
	e=$(budget_elapsed)
	r=$(budget_reserve)
	num 0 '$b - $e - $r | trunc' b "$BUDGET" e "$e" r "$r"
}

# budget_steady_window: the runtime (s) a final-round run needs for fio's
# steady-state detection (steady_window_at), or nothing when no final-round
# run would use it (steady state off, or only points of several handles).
budget_steady_window() {
	local one
	[ "$STEADY" = on ] || return 0
	one=$(plan_json)
	one=$(jq 'any(.[]; .kind == "tswap" and .rw != "readwrite" and (.ranks // 1) == 1)' <<<"$one")
	[ "$one" = true ] || return 0
	steady_window_at "${RAMP:-0}"
}

# budget_plan LEFT DONE OVER [SHAPE]: the rounds fitted into LEFT seconds
# at OVER seconds of start-up per run (tswap.plan.budget); a new plan from
# PLAN_TEXT, or SHAPE (the rounds still to run) after DONE rounds. The
# final round's floor is the steady-state window when there is one; when
# that does not fit, the plan at the BUDGET_FINAL_MIN floor, plus
# steady_window, steady_floor_s and below_steady.
budget_plan() {
	local left=$1 ndone=$2 over=$3 shape=${4:-null} groups=null nceil=0 w p below pj
	if [ "$shape" = null ]; then
		pj=$(plan_json)
		groups=$(jq -c '[.[] | select(.kind == "tswap")] | group_by(.ckey) | map({key: .[0].ckey, value: length}) | from_entries' <<<"$pj")
		nceil=$(jq '[.[] | select(.kind == "ceiling")] | length' <<<"$pj")
	fi
	w=$(budget_steady_window)
	if [ -n "$w" ] && ((w > BUDGET_FINAL_MIN)); then
		p=$(budget_plan_floor "$w" "$left" "$ndone" "$shape" "$groups" "$nceil" "$over")
		below=$(jq .below_floor <<<"$p")
		if [ "$below" != true ]; then
			printf '%s\n' "$p"
			return 0
		fi
		below=$(budget_plan_floor "$BUDGET_FINAL_MIN" "$left" "$ndone" "$shape" "$groups" "$nceil" "$over")
		jq -c --argjson w "$w" --argjson p "$p" '. + {steady_window: $w, steady_floor_s: $p.floor_s,
			below_steady: ((.rounds[-1].runtime // 0) < $w)}' <<<"$below"
	else
		budget_plan_floor "$BUDGET_FINAL_MIN" "$left" "$ndone" "$shape" "$groups" "$nceil" "$over"
	fi
}

# budget_plan_floor FLOOR LEFT DONE SHAPE GROUPS NCEIL OVER: the plan
# (tswap.plan.budget)
# with the final round's runtime floor FLOOR (s).
budget_plan_floor() {
	local reps=$((REPEAT > BUDGET_REPEAT ? REPEAT : BUDGET_REPEAT)) # the final round's
	py budget-plan --floor "$1" --left "$2" --first "$3" --shape "$4" \
		--groups "$5" --ceilings "$6" --over "$7" \
		--ramp "${RAMP:-0}" --tmax "$RUNTIME" --reps "$reps"
}

# budget_json FILE JQ [ARGS...]: FILE through the jq program JQ, in place.
budget_json() {
	local f=$1
	shift
	jq "${@:2}" "$1" "$f" >"$f.tmp"
	mv -f "$f.tmp" "$f"
}

# budget_fitted_plan DONE OVER [SHAPE]: budget_plan for the time left now
# (left_s); below the minimum (the target's preparation, or a round, took
# longer than planned), the minimum plan with fits false, and a warning:
# the run will end late. A final round below its floor or the
# steady-state window is said.
budget_fitted_plan() {
	local plan left fits min below m
	left=$(budget_left)
	plan=$(budget_plan "$left" "$@")
	fits=$(jq .fits <<<"$plan")
	below=$(jq '.below_floor or (.below_steady // false)' <<<"$plan")
	if [ "$fits" != true ]; then
		min=$(jq .min_s <<<"$plan")
		warn "budget $BUDGET s: $left s left for the runs, below the $min s of one round at 1 s: running that until a run would end past the budget"
		note "budget: $left s were left for the runs, below the $min s of one round at 1 s: it ran at its minimum, until a run would end past the budget"
		min=$(jq '.min_s | ceil' <<<"$plan")
		plan=$(budget_plan "$min" "$@")
	elif [ "$below" = true ]; then
		m=$(budget_floor_text "$plan" "$left")
		warn "budget $BUDGET s: $m"
		note "budget: $m"
	fi
	# a plan made at the minimum did not fit the time left: fits stays false
	jq -c --argjson left "$left" --argjson fits "$fits" '. + {left_s: $left, fits: $fits}' <<<"$plan"
}

# budget_floor_text PLAN LEFT: what the final round of PLAN gets against
# its floor and the steady-state window, in words, with the budget that
# gives it each (the time spent so far, PLAN's rounds, the outputs).
budget_floor_text() {
	local reps=$((REPEAT > BUDGET_REPEAT ? REPEAT : BUDGET_REPEAT)) reserve spent
	reserve=$(budget_reserve)
	spent=$(budget_elapsed)
	jq -r --argjson left "$2" --argjson reps "$reps" --argjson reserve "$reserve" \
		--argjson spent "$spent" '.rounds[-1] as $f
		| (if .steady_window then "fio'"'"'s steady-state window of \(.steady_window) s (a shorter final run is fixed and ranks each point'"'"'s first seconds, such as a write cache'"'"'s burst; no point can be flagged not steady)" else null end) as $w
		| if .below_floor then
			"the final round runs \($f.repeats) repeat(s) of \($f.runtime) s, below its floor of \($reps) x \(.final_floor) s: the \($left) s left for runs give it no more; with the first round still to run at 1 s it needs a budget of about \(.floor_s + $reserve + $spent | ceil) s, the outputs included"
			+ (if $w then ", and about \(.steady_floor_s + $reserve + $spent | ceil) s for \($w)" else "" end)
		  else
			"the final round runs \($f.repeats) repeat(s) of \($f.runtime) s, below \($w): with the first round still to run at 1 s it needs a budget of about \(.steady_floor_s + $reserve + $spent | ceil) s for the window, the outputs included"
		  end' <<<"$1"
}

# budget_dry_run: the planned rounds (runs, runtime, ramp, seconds) and
# the number of fio runs, before the dry run's job files.
budget_dry_run() {
	local plan left below
	[ -n "$BUDGET" ] || return 0
	left=$(budget_left)
	plan=$(budget_plan "$left" 0 "$BUDGET_OVER_EST")
	say "budget $BUDGET s: successive halving; the rounds as planned now (re-planned after each round with the measured fio start-up cost):"
	jq -r --argjson left "$left" '(.rounds | to_entries[] | .key as $i | .value
		| "  round \($i + 1)\(if .final then " (final)" else "" end): \(.groups | to_entries | map("\(.key) \(.value)") | join(", "))\(if .ceilings > 0 then " + \(.ceilings) ceiling(s)" else "" end), \(.repeats) repeat(s), \(.runs) run(s), runtime \(.runtime) s, ramp \(.ramp) s: about \(.planned_s) s"),
		"  \([.rounds[].runs] | add // 0) fio run(s), about \(.planned_s) s of the \($left) s left for runs"' <<<"$plan"
	below=$(jq '.below_floor or (.below_steady // false)' <<<"$plan")
	[ "$below" = true ] || return 0
	below=$(budget_floor_text "$plan" "$left")
	say "  $below"
}
