# shellcheck shell=bash
# budget-run.sh - the rounds of a --budget run (budget.sh plans them;
# docs/sweep.md "Budget"), re-planned from the wall time they use.
#
# Owns: run_budget and its helpers. Reads: BUDGET, BUDGET_T0, PLAN_TEXT,
# RAMP, RUN, CV_FLAG. Writes: BUDGET_SWEEP_S; RUN/budget.json,
# RUN/rounds/KEY.sN/, RUN/points/.
# shellcheck disable=SC2016 # $NAME in single quotes: jq's
# shellcheck disable=SC2034 # RUNTIME, RAMP for run_point, ceiling_prep; BUDGET_SWEEP_S (budget.sh)

# budget_run_point RUNTIME RAMP ARGS...: run_point ARGS at a round's
# runtime and ramp (the grid's RUNTIME and RAMP stay as they are).
budget_run_point() {
	local RUNTIME=$1 RAMP=$2
	shift 2
	run_point "$@"
}

# budget_prep RUNTIME RAMP CEILING_LINE...: before a write, the first
# write into a file this run created is preparation, not a measurement
# (exec-local.sh ceiling_prep, once a run): the write ceiling runs once
# into ceiling-prep/ at the round's runtime and ramp. Round 1's writes
# come before the ceilings: the first would be pruned on a fresh file's
# first-write rate (docs/sweep.md, Budget).
budget_prep() {
	local RUNTIME=$1 RAMP=$2 line label
	shift 2
	[ ! -e "$RUN/ceiling-prep" ] || return 0
	for line in "$@"; do
		point_label label "$line"
		ceiling_prep "$line" 1 "$label"
	done
}

# run_budget: the rounds (replaces run_plan when BUDGET is set). Each
# round is timed by the wall clock, read once per run ($EPOCHREALTIME):
# its start-up per run (all its time beyond ramp + runtime, the
# preconditioning aside) re-plans the rounds after it from the time left
# (tswap.stats.budget round_record); the final round drops a repeat that
# no longer fits (tswap.stats.budget check). budget.json records the first plan (plan), and per
# round what it planned and used and the re-plan after it (replan).
# Before each run, a run that would end past the budget is not started:
# the run stops there (its round becomes the final round; stopped in
# budget.json), and the points not run are not picked.
run_budget() {
	local plan spec line key kind ckey runkey dir wall res label rep reps nround=0 total idx
	local t0 rwall over=$BUDGET_OVER_EST final ran ceil keep prune rec left rt ramp rw
	local elapsed reserve window nrounds planned e groups pj pass=null npass r0 pre nrep why later i
	local stop='' nall start
	local -a files costs=() allc=() allw=() pres=() keys=()
	local -A CKEY=() ALIVE=()
	local -a tlines=() clines=() run_lines=()
	mkdir -p "$RUN/points" "$RUN/rounds"
	rm -rf -- "$RUN"/points/.tmp-* "$RUN"/rounds/.tmp-*
	pj=$(plan_json)
	line=$(jq -r '.[] | "\(.point)\t\(.ckey)\t\(.kind)"' <<<"$pj")
	while IFS=$'\t' read -r key ckey kind; do
		CKEY[$key]=$ckey
		[ "$kind" = ceiling ] || ALIVE[$key]=1
	done <<<"$line"
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		IFS=$'\t' read -r key kind _ <<<"$line"
		if [ "$kind" = ceiling ]; then clines+=("$line"); else tlines+=("$line"); fi
	done <<<"$PLAN_TEXT"
	reserve=$(budget_reserve)
	elapsed=$(budget_elapsed)
	start=$elapsed nall=$((${#tlines[@]} + ${#clines[@]}))
	jq -n --argjson s "$BUDGET" --argjson auto "$BUDGET_AUTO" --argjson est "$BUDGET_OVER_EST" \
		--argjson reserve "$reserve" --argjson start "$elapsed" \
		'{seconds: $s, chosen_by_default: ($auto == 1), overhead_estimate_s: $est, reserve_s: $reserve,
		  runs_start_s: $start, rounds: []}' >"$RUN/budget.json"
	plan=$(budget_fitted_plan 0 "$over")
	# fio's steady-state window and, when the final round is planned
	# shorter, the budget that gives it the window (tswap.report.head budget_caution)
	window=$(budget_steady_window)
	reserve=$(budget_reserve)
	e=$(budget_plan_brief "$plan")
	budget_json "$RUN/budget.json" '. + {steady_window_s: ($w | if . == "" then null else tonumber end),
		      steady_budget_s: (if $p.below_steady then $p.steady_floor_s + $reserve + .runs_start_s | ceil else null end),
		      plan: $brief}' \
		--argjson p "$plan" --arg w "$window" --argjson reserve "$reserve" --argjson brief "$e"
	while :; do
		nround=$((nround + 1))
		spec=$(jq -c '.rounds[0]' <<<"$plan")
		nrounds=$(jq '.rounds | length' <<<"$plan")
		total=$((nround - 1 + nrounds))
		groups=$(jq -r '[.final, .runtime, .ramp, .repeats, .ceilings, .planned_s, (.groups | keys | join(" "))] | @tsv' <<<"$spec")
		IFS=$'\t' read -r final rt ramp reps ceil planned groups <<<"$groups"
		groups=" $groups "
		run_lines=()
		for line in "${tlines[@]}"; do
			key=${line%%$'\t'*}
			[ -n "${ALIVE[$key]:-}" ] && [[ $groups == *" ${CKEY[$key]} "* ]] && run_lines+=("$line")
		done
		npass=${#run_lines[@]}
		# the ceilings run in the final round, first, at its runtime and
		# ramp: round 1's 1 s ceiling would flag the longer runs "above
		# ceiling"; in a round of every point once, last (the points come
		# first when the budget runs out)
		if ((ceil == 0)); then
			:
		elif [[ $spec == *'"once":true'* ]]; then
			run_lines+=("${clines[@]}")
		else
			run_lines=("${clines[@]}" "${run_lines[@]}")
		fi
		left=$(budget_left)
		say "round $nround/$total: ${#run_lines[@]} point(s) x $reps repeat(s), runtime $rt s, ramp $ramp s (planned $planned s; budget $BUDGET s: $left s left for runs)"
		t0=$EPOCHREALTIME
		ran=0 idx=0 nrep=0 costs=() allc=() allw=() pres=() pass=null
		later=$(jq -c '.rounds[1:]' <<<"$plan")
		reserve=$(budget_reserve)
		keys=()
		for ((rep = 1; rep <= reps; rep++)); do
			if ((rep > 1)); then
				# the next repeat at the seconds per run this round took
				# so far, or none when it no longer fits
				pass=$(budget_check repeat "$npass" "$reserve" "$rt" "$ramp" "$nrep" "$reps" '[]' \
					costs allc allw)
				if [[ $pass == *'"fits":false'* ]]; then
					why=$(jq -r .why <<<"$pass")
					warn "budget $BUDGET s: $why"
					note "budget: $why"
					break
				fi
				pass=null
			fi
			for ((i = 0; i < ${#run_lines[@]}; i++)); do
				line=${run_lines[i]}
				IFS=$'\t' read -r key kind rw _ <<<"$line"
				[ "$kind" = ceiling ] && ((rep > 1)) && continue
				if [ "$final" != true ] && ((ran >= 2)); then
					# behind: when the rest of this round and the least
					# of the rounds after it no longer fit, this round is
					# the last
					e=$(budget_check round "$((${#run_lines[@]} - i))" "$reserve" "$rt" "$ramp" 0 1 "$later" \
						costs allc allw)
					if [[ $e == *'"fits":false'* ]]; then
						why=$(jq -r .why <<<"$e")
						warn "budget $BUDGET s: round $nround: $why"
						note "budget: round $nround: $why"
						budget_to_final "$nround" "${keys[@]}"
						final=true total=$nround
						run_lines+=("${clines[@]}")
						spec=$(jq -c --argjson c "${#clines[@]}" --argjson e "$e" \
							'. + {final: true, once: true, ceilings: $c, runs: (.runs + $c), became_final: ($e | del(.why))}' <<<"$spec")
					fi
				fi
				# the deadline: a run that would end past the budget is
				# not started
				e=$(budget_check next 1 "$reserve" "$rt" "$ramp" 0 1 \
					"{\"over\": $over, \"all\": $nall, \"start\": $start}" costs allc allw)
				if [[ $e == *'"fits":false'* ]]; then
					stop=$e nrep=$rep
					break 2
				fi
				idx=$((idx + 1))
				if [ "$final" = true ] || [ "$kind" = ceiling ]; then
					dir=points runkey="$key.r$rep"
				else
					dir=rounds runkey="$key.s$nround"
				fi
				point_label label "$line"
				((reps == 1)) || label="$label r$rep"
				printf -v label '[round %d/%d %d] %s' "$nround" "$total" "$idx" "$label"
				# preconditioning (once, before the first write) is not a
				# cost per run: timed apart
				r0=$EPOCHREALTIME
				precondition_before "$rw"
				[ "$rw" != write ] || budget_prep "$rt" "$ramp" "${clines[@]}"
				pres+=("$(since "$r0")")
				r0=$EPOCHREALTIME
				budget_run_point "$rt" "$ramp" wall "$line" "$runkey" "$rep" "$dir" "$label"
				ran=$((ran + 1))
				IFS= read -r res <"$RUN/$dir/$runkey/progress.txt"
				res=${res%%$'\t'*}
				e=$(budget_unspent)
				printf '%s  %s  (budget %s s: %s s left)\n' "$label" "$res" "$BUDGET" "$e"
				e=$(since "$r0")
				allc+=("$e") allw+=("$wall")
				[ "$kind" = ceiling ] || costs+=("$e")
				[ "$final" = true ] || keys+=("$key")
			done
			nrep=$rep
		done
		rwall=$(since "$t0")
		if [ -n "$stop" ]; then
			why=$(jq -r .why <<<"$stop")
			warn "budget $BUDGET s: round $nround: $why"
			note "budget: round $nround: $why"
			if [ "$final" != true ]; then
				budget_to_final "$nround" "${keys[@]}"
				final=true
				spec=$(jq -c '. + {final: true, once: true}' <<<"$spec")
			fi
		fi
		pre=$(budget_nums "${pres[@]}")
		e=$(budget_nums "${allc[@]}")
		wall=$(budget_nums "${allw[@]}")
		rec=$(py budget-round --spec "$spec" --n "$nround" --wall "$rwall" --pre "$pre" \
			--ran "$ran" --reps "$nrep" --pass "$pass" --allc "$e" --allw "$wall")
		BUDGET_SWEEP_S=$(jq .sweep_s <<<"$rec")
		[ -z "$stop" ] || rec=$(jq -c --argjson s "$stop" '. + {stopped: $s}' <<<"$rec")
		if [ "$final" = true ]; then
			rec=$(jq -c --args '. + {kept: ($ARGS.positional | sort), pruned: []}' "${!ALIVE[@]}" <<<"$rec")
			budget_json "$RUN/budget.json" '.rounds += [$r]' --argjson r "$rec"
			break
		fi
		# the rounds after this one, from the time left, at the start-up
		# per run this round measured
		over=$(jq .overhead_s <<<"$rec")
		plan=$(jq -c '.rounds[1:]' <<<"$plan")
		plan=$(budget_fitted_plan "$nround" "$over" "$plan")
		e=$(budget_plan_brief "$plan")
		rec=$(jq -c --argjson p "$e" '. + {replan: $p}' <<<"$rec")
		# what each group that ran keeps: its count in the first round
		# still to run that has it
		keep=$(jq -c --argjson spec "$spec" '[.rounds[].groups] as $gs
			| $spec.groups | with_entries(.key as $k | .value = ([$gs[] | select(has($k)) | .[$k]] | first // .value))' <<<"$plan")
		files=("$RUN"/rounds/*".s$nround"/result.json)
		[ -e "${files[0]}" ] || files=()
		prune=$(py budget-prune --plan "$pj" --keep "$keep" --noise "$CV_FLAG" "${files[@]}" </dev/null)
		line=$(jq -r '.pruned[].point' <<<"$prune")
		while IFS= read -r key; do
			[ -n "$key" ] && unset "ALIVE[$key]"
		done <<<"$line"
		budget_json "$RUN/budget.json" '.rounds += [$r + {kept: $p.kept, pruned: $p.pruned}]' --argjson r "$rec" --argjson p "$prune"
		left=$(budget_left)
		jq -r --argjson n "$nround" --arg left "$left" '"round \($n): pruned \(.pruned | length) point(s), \(.kept | length) go on; \($left) s left for runs"' <<<"$prune"
	done
}

# budget_plan_brief PLAN: what budget.json keeps of a plan (the first,
# and each re-plan): the seconds left for runs, the start-up per run, the
# seconds planned (<= left_s unless fits is false: not even every point
# once at 1 s fits, and the minimum runs), and the rounds.
budget_plan_brief() {
	jq -c '{left_s, overhead_s, planned_s, fits, below_floor,
		rounds: [.rounds[] | {final, runtime, ramp, repeats, runs, planned_s}]}' <<<"$1"
}

# budget_nums NUMBER...: a JSON array of them (no jq: before every run).
budget_nums() {
	local IFS=,
	printf '[%s]\n' "$*"
}

# budget_check WHAT N RESERVE RT RRAMP DONE REPS LATER COSTS ALLC ALLW: a
# check of tswap.stats.budget check while a round runs: "repeat" (the final round's
# next repeat, N runs), "round" (N runs still to run in a pruning round,
# then the minimum of the rounds LATER) or "next" (the next run ends by
# the budget; LATER {over, all, start}), at this round's seconds per run
# so far (the names of run_budget's arrays COSTS: the points' runs, ALLC:
# every run, ALLW: fio's wall seconds), against the seconds left for runs
# now (after RESERVE s, or more, for the outputs). One jq: it runs before
# every run.
budget_check() {
	local -n _bc_costs=$9 _bc_allc=${10} _bc_allw=${11}
	local c a w
	c=$(budget_nums "${_bc_costs[@]}")
	a=$(budget_nums "${_bc_allc[@]}")
	w=$(budget_nums "${_bc_allw[@]}")
	py budget-check --what "$1" --n "$2" --budget "$BUDGET" --t0 "$BUDGET_T0" \
		--now "$EPOCHREALTIME" --reserve "$3" --k "$BUDGET_RESERVE_RUNS" \
		--rt "$4" --rramp "$5" --ramp "${RAMP:-0}" --ndone "$6" \
		--reps "$7" --later "$8" --costs "$c" --allc "$a" --allw "$w"
}

# budget_to_final N KEY...: round N, a pruning round, becomes the final
# round: the runs of KEYs it made move from rounds/KEY.sN to
# points/KEY.r1, where the pick reads them.
budget_to_final() {
	local n=$1 key
	shift
	for key in "$@"; do
		mv -T -- "$RUN/rounds/$key.s$n" "$RUN/points/$key.r1"
		budget_json "$RUN/points/$key.r1/result.json" '.runkey = $k' --arg k "$key.r1"
	done
}
