# shellcheck shell=bash
# budget.sh - --budget SECONDS: the sweep within a wall-time budget, by
# successive halving (docs/sweep.md "Budget").
#
# Round 1 runs every point once, short (1 s runtime and at most 1 s ramp
# at the least); each pick group (a direction at one rank count) keeps
# half its points: the fastest, then those tied with it within the
# round's noise (one tensor op of the run, + CV_FLAG) by the pick's cost
# order, then the others by GB/s (jq/budget-prune.jq);
# the next round runs the survivors once with twice the runtime; and so on
# until 2 points per group are left: the final round runs the device
# ceilings once, then those points with the grid's ramp and BUDGET_REPEAT
# (or --repeat) repeats, all at its runtime, into RUN/points/,
# which the existing aggregation and trust pick read; the pruned points
# never reach it. The final round is reserved first: the grid's runtime,
# or down to its floor (min(BUDGET_FINAL_MIN, the grid's runtime)), and
# the pruning rounds get what is left; steady state applies to its runs
# by steady.sh's rules, as to an exhaustive point's. The rounds are planned
# from the time left when the runs start (jq/budget-plan.jq), with an
# estimated fio start-up cost per run that is replaced by the one measured
# after every round, and re-planned then (the reservation included).
#
# Owns: budget_setup (the default rule, the refusal), budget_resume_check,
# budget_save_config, run_budget, budget_into_aggregate, budget_summary,
# budget_dry_run, budget_report_cfg, budget_line. Reads: BUDGET,
# EXHAUSTIVE, BUDGET_T0, PLAN_TEXT, RUNTIME, RAMP, REPEAT, IO_SIZE, FLEET,
# RUN. Writes: BUDGET, BUDGET_AUTO, BUDGET_OVER, BUDGET_RUNTIME,
# BUDGET_RAMP (the grid's, kept), and RUNTIME, RAMP while a
# round runs (after run_budget: the final round's, which the report's
# steady-state line names); RUN/budget.json,
# RUN/rounds/KEY.sN/ (a pruning round's runs: job.fio, fio.json,
# result.json, ...), sweep.json's budget, aggregate.json's budget.
# shellcheck disable=SC2034 # sets BUDGET*, RUNTIME, RAMP (state.sh)

# budget_elapsed: seconds since the script started (the budget's clock).
budget_elapsed() {
	awk -v a="$BUDGET_T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}

# budget_reserve: seconds kept for the outputs after the runs (collect,
# summary.csv, plots, report.md): BUDGET_RESERVE + 0.02 s per plan line.
budget_reserve() {
	awk -v r="$BUDGET_RESERVE" -v n="$(grep -c . <<<"$PLAN_TEXT")" 'BEGIN { printf "%d", r + 0.02 * n + 0.999 }'
}

# budget_reps: the final round's repeats: REPEAT (--repeat or the grid's),
# at least BUDGET_REPEAT, so that the pick has a min-max interval.
budget_reps() {
	if ((REPEAT > BUDGET_REPEAT)); then printf '%s\n' "$REPEAT"; else printf '%s\n' "$BUDGET_REPEAT"; fi
}

# budget_steady_window: the runtime (s) a final-round run needs for fio's
# steady-state detection (steady.sh steady_window_at, the grid's ramp),
# or nothing when no final-round run would use it: steady state off
# (--fixed-runtime, a grid runtime shorter than the window), or only
# points of several handles, which keep the fixed runtime.
budget_steady_window() {
	[ "$STEADY" = on ] || return 0
	plan_json | jq -e 'any(.[]; .kind == "tswap" and .rw != "readwrite" and (.ranks // 1) == 1)' >/dev/null || return 0
	steady_window_at "${BUDGET_RAMP:-${RAMP:-0}}"
}

# budget_plan LEFT DONE [SHAPE]: the rounds fitted into LEFT seconds
# (jq/budget-plan.jq); a new plan from PLAN_TEXT, or SHAPE (the rounds
# still to run, JSON) after DONE rounds. The final round's floor is fio's
# steady-state window when there is one (budget_steady_window): a shorter
# final run is fixed and ranks each point's first seconds, such as a write
# cache's burst. When the window does not fit, the plan with the
# BUDGET_FINAL_MIN floor instead, plus steady_window (s), steady_floor_s
# (what round 1 and the final round at the window take) and below_steady
# (its final round is shorter than the window), which budget_fitted_plan
# and budget_dry_run say.
budget_plan() {
	local left=$1 ndone=$2 shape=${3:-null} groups=null nceil w p
	if [ "$shape" = null ]; then
		groups=$(plan_json | jq -c '[.[] | select(.kind == "tswap")] | group_by(.ckey) | map({key: .[0].ckey, value: length}) | from_entries')
		nceil=$(plan_json | jq '[.[] | select(.kind == "ceiling")] | length')
	else
		nceil=0
	fi
	w=$(budget_steady_window)
	if [ -n "$w" ] && ((w > BUDGET_FINAL_MIN)); then
		p=$(budget_plan_floor "$w" "$left" "$ndone" "$shape" "$groups" "$nceil")
		if [ "$(jq .below_floor <<<"$p")" != true ]; then
			printf '%s\n' "$p"
			return 0
		fi
		budget_plan_floor "$BUDGET_FINAL_MIN" "$left" "$ndone" "$shape" "$groups" "$nceil" |
			jq -c --argjson w "$w" --argjson p "$p" '. + {steady_window: $w, steady_floor_s: $p.floor_s,
				below_steady: ((.rounds[-1].runtime // 0) < $w)}'
	else
		budget_plan_floor "$BUDGET_FINAL_MIN" "$left" "$ndone" "$shape" "$groups" "$nceil"
	fi
}

# budget_plan_floor FLOOR LEFT DONE SHAPE GROUPS NCEIL: jq/budget-plan.jq
# with the final round's runtime floor FLOOR (s).
budget_plan_floor() {
	jq -n --argjson floor "$1" --argjson left "$2" --argjson first "$3" --argjson shape "$4" \
		--argjson groups "$5" --argjson ceilings "$6" \
		--argjson ramp "${BUDGET_RAMP:-${RAMP:-0}}" --argjson over "$BUDGET_OVER" \
		--argjson tmax "${BUDGET_RUNTIME:-$RUNTIME}" --argjson reps "$(budget_reps)" \
		-f "$JQ_DIR/budget-plan.jq"
}

# budget_setup: for a new one-host run, after the plan: refuse what a
# budget cannot go with, apply the default rule (a grid whose exhaustive
# run would take more than BUDGET_AUTO_OVER seconds runs with a budget,
# said on stderr; --exhaustive keeps every point), and refuse a budget
# too small for round 1 (every point and ceiling once at 1 s): exit 2
# with that minimum and the budget that gives the final round its floor.
budget_setup() {
	local runs est plan min need floor spent
	BUDGET_OVER=$BUDGET_OVER_EST
	if [ -z "$BUDGET" ]; then
		[ "$EXHAUSTIVE" = 0 ] && [ "$FLEET" = 0 ] && [ -z "$IO_SIZE" ] || return 0
		runs=$(($(grep -c . <<<"$PLAN_TEXT") * REPEAT))
		est=$((runs * (RUNTIME + RAMP + BUDGET_OVER_EST)))
		((est > BUDGET_AUTO_OVER)) || return 0
		min=$(budget_plan 0 0 | jq '.steady_floor_s // .floor_s | ceil')
		BUDGET=$(((min * 3 + 1) / 2 + $(budget_reserve)))
		((BUDGET >= BUDGET_AUTO_OVER)) || BUDGET=$BUDGET_AUTO_OVER
		BUDGET_AUTO=1
		warn "note: grid $G_NAME is $runs fio run(s) of about $((RUNTIME + RAMP + BUDGET_OVER_EST)) s, about $(fmt_secs "$est") exhaustively: running it with --budget $BUDGET (successive halving, docs/sweep.md \"Budget\"); --exhaustive runs every point"
		return 0
	fi
	[ "$FLEET" = 0 ] || usage_error "--budget: not in fleet mode (--hosts): each point runs on every host"
	[ -z "$IO_SIZE" ] || usage_error "--budget sets the runtime of each round: it takes no --io-size"
	plan=$(budget_plan "$((BUDGET - $(budget_reserve)))" 0)
	if [ "$(jq .fits <<<"$plan")" != true ]; then
		min=$(jq '.min_s | ceil' <<<"$plan")
		# the script's start before the runs (this far, and 1 s more) is
		# on the budget's clock too
		spent=$(awk -v e="$(budget_elapsed)" 'BEGIN { printf "%d", e + 1.999 }')
		need=$((min + $(budget_reserve) + spent))
		floor=$(($(jq '.floor_s | ceil' <<<"$plan") + $(budget_reserve) + spent))
		usage_error "--budget $BUDGET: too small to run round 1 once (every point and ceiling once at 1 s, about $BUDGET_OVER_EST s of fio start-up each, and the outputs): at least $need s, plus the target's preparation; $floor s gives the final round its $(jq .final_floor <<<"$plan") s runtime"
	fi
}

# budget_resume_check: a budget run cannot be resumed (its plan is the
# wall time of one run): refuse, exit 2.
budget_resume_check() {
	if jq -e '.budget.seconds != null' "$RUN/sweep.json" >/dev/null 2>&1; then
		die "$EXIT_USAGE" "--resume: $RUN is a --budget run: its rounds were planned for one run's wall time and cannot be finished later; start a new run with --budget"
	fi
	return 0
}

# budget_save_config: the budget in sweep.json (a new run, after
# new_run_dir).
budget_save_config() {
	[ -n "$BUDGET" ] || return 0
	jq --argjson s "$BUDGET" --argjson auto "$BUDGET_AUTO" --argjson reps "$(budget_reps)" \
		'. + {budget: {seconds: $s, chosen_by_default: ($auto == 1), method: "successive halving", keep: "half per direction: the fastest, then the points tied with it within the noise of the round (one tensor op + 5%) cheapest first, then by GB/s", final_repeats_at_most: $reps}}' \
		"$RUN/sweep.json" >"$RUN/sweep.json.tmp"
	mv -f "$RUN/sweep.json.tmp" "$RUN/sweep.json"
}

# budget_left: whole seconds of the budget left for runs (after the
# outputs' reserve), possibly negative.
budget_left() {
	awk -v b="$BUDGET" -v e="$(budget_elapsed)" -v r="$(budget_reserve)" 'BEGIN { printf "%d", b - e - r }'
}

# budget_fitted_plan DONE [SHAPE]: budget_plan for the time left now; when
# that is below the minimum (the target's preparation took longer than
# planned), the minimum plan, with a warning: the run will end late. A
# final round below its floor, or below the steady-state window, is said
# (budget_below_floor).
budget_fitted_plan() {
	local plan left
	left=$(budget_left)
	plan=$(budget_plan "$left" "$@")
	if [ "$(jq .fits <<<"$plan")" != true ]; then
		warn "budget $BUDGET s: $left s left for the runs, below the $(jq .min_s <<<"$plan") s of one round at 1 s: running that; the sweep ends past its budget"
		note "the budget ran out: the last round ran at its minimum and the sweep ended past its budget"
		plan=$(budget_plan "$(jq '.min_s | ceil' <<<"$plan")" "$@")
	elif [ "$(jq '.below_floor or (.below_steady // false)' <<<"$plan")" = true ]; then
		budget_below_floor "$plan" "$left"
	fi
	printf '%s\n' "$plan"
}

# budget_below_floor PLAN LEFT: the warning and the report's note when the
# final round of PLAN runs below its floor (shorter, or fewer repeats) or
# below the steady-state window.
budget_below_floor() {
	local m
	m=$(budget_floor_text "$1" "$2")
	warn "budget $BUDGET s: $m"
	note "budget: $m"
}

# budget_floor_text PLAN LEFT: what the final round of PLAN gets against
# its floor and the steady-state window, in words, with the budget (s: the
# time spent so far, what PLAN's rounds need, the outputs) that gives it
# each.
budget_floor_text() {
	jq -r --argjson left "$2" --argjson reps "$(budget_reps)" --argjson reserve "$(budget_reserve)" \
		--argjson spent "$(budget_elapsed)" '.rounds[-1] as $f
		| (if .steady_window then "fio'"'"'s steady-state window of \(.steady_window) s (a shorter final run is fixed and ranks each point'"'"'s first seconds, such as a write cache'"'"'s burst; no point can be flagged not steady)" else null end) as $w
		| if .below_floor then
			"the final round runs \($f.repeats) repeat(s) of \($f.runtime) s, below its floor of \($reps) x \(.final_floor) s: the \($left) s left for runs give it no more; with the first round still to run at 1 s it needs a budget of about \(.floor_s + $reserve + $spent | ceil) s, the outputs included"
			+ (if $w then ", and about \(.steady_floor_s + $reserve + $spent | ceil) s for \($w)" else "" end)
		  else
			"the final round runs \($f.repeats) repeat(s) of \($f.runtime) s, below \($w): with the first round still to run at 1 s it needs a budget of about \(.steady_floor_s + $reserve + $spent | ceil) s for the window, the outputs included"
		  end' <<<"$1"
}

# run_budget: the rounds (replaces run_plan when BUDGET is set).
run_budget() {
	local plan spec line key kind ckey runkey dir wall res label rep reps nround=0 total idx
	local t0 t1 rwall over final lines ran ok ceil keep prune rec left
	local -A CKEY=() ALIVE=()
	local -a tlines=() clines=() run_lines=()
	mkdir -p "$RUN/points" "$RUN/rounds"
	rm -rf -- "$RUN"/points/.tmp-* "$RUN"/rounds/.tmp-*
	# the grid's: a re-plan after a round must not take that round's
	# runtime and ramp for them (the final round's cap and ramp)
	BUDGET_RUNTIME=$RUNTIME BUDGET_RAMP=${RAMP:-0}
	while IFS=$'\t' read -r key ckey kind; do
		CKEY[$key]=$ckey
		[ "$kind" = ceiling ] || ALIVE[$key]=1
	done < <(plan_json | jq -r '.[] | "\(.point)\t\(.ckey)\t\(.kind)"')
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		IFS=$'\t' read -r key kind _ <<<"$line"
		if [ "$kind" = ceiling ]; then clines+=("$line"); else tlines+=("$line"); fi
	done <<<"$PLAN_TEXT"
	jq -n --argjson s "$BUDGET" --argjson auto "$BUDGET_AUTO" --argjson est "$BUDGET_OVER_EST" \
		--argjson reserve "$(budget_reserve)" --argjson start "$(budget_elapsed)" \
		'{seconds: $s, chosen_by_default: ($auto == 1), overhead_estimate_s: $est, reserve_s: $reserve,
		  runs_start_s: $start, rounds: []}' >"$RUN/budget.json"
	plan=$(budget_fitted_plan 0)
	# fio's steady-state window and, when the final round is planned
	# shorter, the budget that gives it the window (report-pick.jq's
	# caution line)
	jq --argjson p "$plan" --arg w "$(budget_steady_window)" --argjson reserve "$(budget_reserve)" \
		'. + {steady_window_s: ($w | if . == "" then null else tonumber end),
		      steady_budget_s: (if $p.below_steady then $p.steady_floor_s + $reserve + .runs_start_s | ceil else null end)}' \
		"$RUN/budget.json" >"$RUN/budget.json.tmp"
	mv -f "$RUN/budget.json.tmp" "$RUN/budget.json"
	while :; do
		nround=$((nround + 1))
		spec=$(jq -c '.rounds[0]' <<<"$plan")
		total=$((nround - 1 + $(jq '.rounds | length' <<<"$plan")))
		final=$(jq -r '.final' <<<"$spec")
		RUNTIME=$(jq -r '.runtime' <<<"$spec")
		RAMP=$(jq -r '.ramp' <<<"$spec")
		reps=$(jq -r '.repeats' <<<"$spec")
		run_lines=()
		for line in "${tlines[@]}"; do
			key=${line%%$'\t'*}
			[ -n "${ALIVE[$key]:-}" ] || continue
			jq -e --arg c "${CKEY[$key]}" '.groups | has($c)' <<<"$spec" >/dev/null || continue
			run_lines+=("$line")
		done
		# the ceilings run in the final round, first, at its runtime and ramp:
		# a ceiling of round 1's 1 s reads low against the final round's
		# longer runs and flags them "above ceiling"
		if [ "$(jq .ceilings <<<"$spec")" -gt 0 ]; then run_lines=("${clines[@]}" "${run_lines[@]}"); fi
		say "round $nround/$total: ${#run_lines[@]} point(s) x $reps repeat(s), runtime $RUNTIME s, ramp $RAMP s (planned $(jq .planned_s <<<"$spec") s; budget $BUDGET s: $(budget_left) s left for runs)"
		t0=$EPOCHREALTIME
		ran=0 idx=0
		for ((rep = 1; rep <= reps; rep++)); do
			for line in "${run_lines[@]}"; do
				IFS=$'\t' read -r key kind _ <<<"$line"
				[ "$kind" = ceiling ] && ((rep > 1)) && continue
				idx=$((idx + 1))
				if [ "$final" = true ] || [ "$kind" = ceiling ]; then
					dir=points runkey="$key.r$rep"
				else
					dir=rounds runkey="$key.s$nround"
				fi
				point_label label "$line"
				[ "$reps" -gt 1 ] && label="$label r$rep"
				run_point wall "$line" "$runkey" "$rep" "$dir" "$(printf '[round %d/%d %d] %s' "$nround" "$total" "$idx" "$label")"
				ran=$((ran + 1))
				res=$(jq -r 'if .status == "ok" then "\(.gbs * 1000 | round / 1000) GB/s" else "ERROR: \(.error)" end' "$RUN/$dir/$runkey/result.json")
				printf '[round %d/%d %d] %s  %s  (budget %s s: %s s left)\n' "$nround" "$total" "$idx" "$label" "$res" "$BUDGET" \
					"$(awk -v b="$BUDGET" -v e="$(budget_elapsed)" 'BEGIN { printf "%d", b - e }')"
			done
		done
		t1=$EPOCHREALTIME
		rwall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
		# the start-up cost measured: this round's seconds per run beyond
		# its ramp and runtime
		over=$(awk -v w="$rwall" -v n="$ran" -v t="$RUNTIME" -v r="$RAMP" -v o="$BUDGET_OVER" \
			'BEGIN { if (n == 0) { print o; exit } v = w / n - t - r; if (v < 0.1) v = 0.1; printf "%.2f", v }')
		BUDGET_OVER=$over
		rec=$(jq -c --argjson n "$nround" --argjson wall "$rwall" --argjson over "$over" \
			'{round: $n, final, runtime, ramp, repeats, groups, ceilings, runs, planned_s, wall_s: $wall, overhead_s: $over}' <<<"$spec")
		if [ "$final" = true ]; then
			rec=$(jq -c --args '. + {kept: $ARGS.positional, pruned: []}' "${!ALIVE[@]}" <<<"$rec" | jq -c '.kept |= sort')
			jq --argjson r "$rec" '.rounds += [$r]' "$RUN/budget.json" >"$RUN/budget.json.tmp"
			mv -f "$RUN/budget.json.tmp" "$RUN/budget.json"
			break
		fi
		plan=$(budget_fitted_plan "$nround" "$(jq -c '.rounds[1:]' <<<"$plan")")
		# what each group that ran keeps: its count in the first round
		# still to run that has it
		keep=$(jq -c --argjson spec "$spec" '[.rounds[].groups] as $gs
			| $spec.groups | with_entries(.key as $k | .value = ([$gs[] | select(has($k)) | .[$k]] | first // .value))' <<<"$plan")
		prune=$(find "$RUN/rounds" -mindepth 2 -maxdepth 2 -path "*.s$nround/result.json" -exec cat {} + |
			jq -s -c -L "$JQ_DIR" --slurpfile plan <(plan_json) --argjson keep "$keep" --argjson noise "$CV_FLAG" -f "$JQ_DIR/budget-prune.jq")
		while IFS= read -r key; do
			[ -n "$key" ] && unset "ALIVE[$key]"
		done < <(jq -r '.pruned[].point' <<<"$prune")
		rec=$(jq -c --argjson p "$prune" '. + {kept: $p.kept, pruned: $p.pruned}' <<<"$rec")
		jq --argjson r "$rec" '.rounds += [$r]' "$RUN/budget.json" >"$RUN/budget.json.tmp"
		mv -f "$RUN/budget.json.tmp" "$RUN/budget.json"
		ok=$(jq '.pruned | length' <<<"$prune")
		left=$(budget_left)
		say "round $nround: pruned $ok point(s), $(jq '.kept | length' <<<"$prune") go on; $left s left for runs"
	done
}

# budget_into_aggregate: aggregate.json gets the budget's rounds, the
# time used and the final margins, and each pruned point its round and
# GB/s (status "pruned": never trusted, never picked).
budget_into_aggregate() {
	[ -f "$RUN/budget.json" ] || return 0
	jq --slurpfile b "$RUN/budget.json" --argjson used "$(budget_elapsed)" '
		([$b[0].rounds[] | .round as $n | .pruned[] | {key: .point, value: (. + {round: $n})}] | from_entries) as $pr
		| .points |= map(if $pr[.point] then . + {status: "pruned", pruned: $pr[.point],
			flags: ["pruned in round \($pr[.point].round)"], trusted: false} else . end)
		| . + {budget: ($b[0] + {used_s: $used,
			final_margins: ([.best | to_entries[] | select(.value != null and .key != "aio_source")
				| {key, value: .value | {point, gbs, lo, hi, tie, tied, runner_up, margin_pct, confidence}}] | from_entries)})}' \
		"$RUN/aggregate.json" >"$RUN/aggregate.json.tmp"
	mv -f "$RUN/aggregate.json.tmp" "$RUN/aggregate.json"
}

# budget_summary: the budget line on stdout at the end.
budget_summary() {
	[ -n "$BUDGET" ] && [ -f "$RUN/budget.json" ] || return 0
	say "budget:     $BUDGET s, used $(budget_elapsed) s in $(jq '.rounds | length' "$RUN/budget.json") round(s) (report.md, Budget)"
}

# budget_dry_run: the planned rounds (runs, runtime, ramp, seconds) and
# the number of fio runs, before the dry run's job files.
budget_dry_run() {
	local plan left
	[ -n "$BUDGET" ] || return 0
	left=$(budget_left)
	plan=$(budget_plan "$left" 0)
	say "budget $BUDGET s: successive halving; the rounds as planned now (re-planned after each round with the measured fio start-up cost):"
	jq -r '.rounds | to_entries[] | .key as $i | .value
		| "  round \($i + 1)\(if .final then " (final)" else "" end): \(.groups | to_entries | map("\(.key) \(.value)") | join(", "))\(if .ceilings > 0 then " + \(.ceilings) ceiling(s)" else "" end), \(.repeats) repeat(s), \(.runs) run(s), runtime \(.runtime) s, ramp \(.ramp) s: about \(.planned_s) s"' <<<"$plan"
	jq -r --argjson left "$left" '"  \([.rounds[].runs] | add // 0) fio run(s), about \(.planned_s) s of the \($left) s left for runs"' <<<"$plan"
	if [ "$(jq '.below_floor or (.below_steady // false)' <<<"$plan")" = true ]; then say "  $(budget_floor_text "$plan" "$left")"; fi
}

# budget_report_cfg CFG: sweep.json for report.md's header: in a budget
# run, the runtime, ramp and repeats of the final round (the runs the pick
# is made from); CFG unchanged otherwise.
budget_report_cfg() {
	if [ -n "$BUDGET" ] && [ -f "$RUN/budget.json" ]; then
		jq --slurpfile b "$RUN/budget.json" '($b[0].rounds[-1] // null) as $f
			| if $f == null then . else . + {runtime: ($f.runtime | tostring), ramp: ($f.ramp | tostring), repeat: $f.repeats} end' "$1"
	else
		cat -- "$1"
	fi
}

# budget_line: report.md's line on how a budget run's points ran (after
# steady.sh's line, which names the final round's runtime).
budget_line() {
	[ -n "$BUDGET" ] && [ -f "$RUN/budget.json" ] || return 0
	jq -r '.rounds as $r | ($r[-1]) as $f
		| "- budget: the pick is made from the final round (round \($f.round)): \($f.repeats) repeat(s) of \($f.runtime) s after a \($f.ramp) s ramp\(if ($r | length) > 1 then "; the \($r | length - 1) pruning round(s) before it ran each point once for \([$r[:-1][].runtime | tostring] | join(", ")) s, fixed, to rank them (Budget)" else "" end)"' "$RUN/budget.json"
}
