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
# Owns: budget_setup, budget_resume_check, budget_save_config,
# budget_dry_run (aggregate.json's budget: tswap.stats.budget; report.md's
# budget lines: tswap.report.md). Reads: BUDGET, EXHAUSTIVE, BUDGET_T0,
# PLAN_TEXT, RUNTIME, RAMP (the grid's: each round runs with its own),
# REPEAT, IO_SIZE, FLEET, RUN. Writes: BUDGET, BUDGET_AUTO;
# RUN/budget.json, RUN/rounds/KEY.sN/ (a pruning round's runs), sweep.json's
# budget. The rounds: budget-run.sh.
# shellcheck disable=SC2034 # sets BUDGET, BUDGET_AUTO (state.sh)
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

# budget_setup: for a new one-host run, after the plan: refuse what a
# budget cannot go with, apply the default rule (an exhaustive run longer
# than BUDGET_AUTO_OVER s runs with a budget, said on stderr), and refuse
# a budget too small for round 1 (exit 2, with that minimum and the budget
# that gives the final round its floor).
budget_setup() {
	local n runs est plan min need floor spent reserve elapsed fits secs final_floor what
	if [ -z "$BUDGET" ]; then
		[ "$EXHAUSTIVE" = 0 ] && [ "$FLEET" = 0 ] && [ -z "$IO_SIZE" ] || return 0
		n=$(grep -c . <<<"$PLAN_TEXT") || true
		runs=$((n * REPEAT))
		est=$((runs * (RUNTIME + RAMP + BUDGET_OVER_EST)))
		((est > BUDGET_AUTO_OVER)) || return 0
		plan=$(budget_plan 0 0 "$BUDGET_OVER_EST")
		min=$(jq '.steady_floor_s // .floor_s | ceil' <<<"$plan")
		reserve=$(budget_reserve)
		BUDGET=$(((min * 3 + 1) / 2 + reserve))
		((BUDGET >= BUDGET_AUTO_OVER)) || BUDGET=$BUDGET_AUTO_OVER
		BUDGET_AUTO=1
		secs=$(fmt_secs "$est")
		warn "note: grid $G_NAME is $runs fio run(s) of about $((RUNTIME + RAMP + BUDGET_OVER_EST)) s, about $secs exhaustively: running it with --budget $BUDGET (successive halving, docs/sweep.md \"Budget\"); --exhaustive runs every point"
		return 0
	fi
	[ "$FLEET" = 0 ] || usage_error "--budget: not in fleet mode (--hosts): each point runs on every host"
	[ -z "$IO_SIZE" ] || usage_error "--budget sets the runtime of each round: it takes no --io-size"
	reserve=$(budget_reserve)
	plan=$(budget_plan "$((BUDGET - reserve))" 0 "$BUDGET_OVER_EST")
	fits=$(jq .fits <<<"$plan")
	[ "$fits" != true ] || return 0
	# the script's start before the runs (this far, and 1 s more) is on
	# the budget's clock too
	elapsed=$(budget_elapsed)
	spent=$(num 0 '$e + 1.999 | floor' e "$elapsed")
	min=$(jq '.min_s | ceil' <<<"$plan")
	floor=$(jq '.floor_s | ceil' <<<"$plan")
	final_floor=$(jq .final_floor <<<"$plan")
	need=$((min + reserve + spent))
	floor=$((floor + reserve + spent))
	what='every point'
	[ "$CEILING" = 0 ] || what='every point and ceiling'
	usage_error "--budget $BUDGET: too small to run round 1 once ($what once at 1 s, about $BUDGET_OVER_EST s of fio start-up each, and the outputs): at least $need s, plus the target's preparation; $floor s gives the final round its $final_floor s runtime"
}

# budget_resume_check: a budget run cannot be resumed (its plan is the
# wall time of one run): refuse, exit 2.
budget_resume_check() {
	if jq -e '.budget.seconds != null' "$RUN/sweep.json" >/dev/null 2>&1; then
		die "$EXIT_USAGE" "--resume: $RUN is a --budget run: its rounds were planned for one run's wall time and cannot be finished later; start a new run with --budget"
	fi
	return 0
}

# budget_json FILE JQ [ARGS...]: FILE through the jq program JQ, in place.
budget_json() {
	local f=$1
	shift
	jq "${@:2}" "$1" "$f" >"$f.tmp"
	mv -f "$f.tmp" "$f"
}

# budget_save_config: the budget in sweep.json (a new run, after
# new_run_dir).
budget_save_config() {
	local reps=$((REPEAT > BUDGET_REPEAT ? REPEAT : BUDGET_REPEAT))
	[ -n "$BUDGET" ] || return 0
	budget_json "$RUN/sweep.json" '. + {budget: {seconds: $s, chosen_by_default: ($auto == 1), method: "successive halving", keep: "half per direction: the fastest, then the points tied with it within the noise of the round (one tensor op + 5%) cheapest first, then by GB/s", final_repeats_at_most: $reps}}' \
		--argjson s "$BUDGET" --argjson auto "$BUDGET_AUTO" --argjson reps "$reps"
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
