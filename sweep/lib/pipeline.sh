# shellcheck shell=bash
# pipeline.sh - the sweep's stages, written once for both executors:
#
#   plan.json -> run the points -> results.json -> aggregate.json (the
#   pick) -> summary.csv, best-aio.json, plots, report.md -> exit status
#
# Where a point runs is the executor's only concern: run.sh sources
# lib/exec-fleet.sh (fio --client per host of --hosts; a run on this host
# is tswap.executor.local in the front end's process), which answers the
# exec_* hooks:
#   exec_check_targets W     refuse a target before anything is written
#   exec_ready               its tools and engine are there
#   exec_new_run             a new run directory's first files (meta.json)
#   exec_dry_head TOTAL      the dry run's first lines; exec_places: the
#                            places a point runs on ("" this host, or the
#                            host indexes); exec_place_names: their names
#                            in the dry run, one a line
#   exec_begin TOTAL         before the points (fleet: the preflight)
#   exec_todo RUNKEY         the places where RUNKEY is not done yet (this
#                            host: 0), nothing when it is done
#   exec_done_text RUNKEY    the progress text of a run done earlier
#   exec_run WALLVAR LINE RUNKEY REP LABEL PLACE...   run it there
#   exec_result_text RUNKEY PLACE...   the progress text of the run
#   exec_stop SIGNAL         the signal trap: stop what runs, drop its dirs
#   exec_finish_args VAR     the finish stage's options of its own
#                            (report.md's lines, the fleet's) into array VAR
#
# Owns: plan_doc, plan_save, plan_lines (RUN/plan.json, the plan
# document; an older run's plan.tsv is converted), point_label, load_done,
# run_points, run_all, on_signal, dry_run, since, since_into, finish_run.
# Reads: RUN, REPEAT, PLAN_TEXT, PLAN_LINES. Writes: FINISHED; RUN/plan.json.
# shellcheck disable=SC2153 # REPEAT: a global of state.sh

# plan_doc: the plan (PLAN_TEXT's lines) as plan.json's document:
# {points: [...]}, each point's fields by name (tswap.plan.points).
plan_doc() {
	py plan --doc <<<"$PLAN_TEXT"
}

# plan_save RUN: RUN/plan.json, once, for a new run.
plan_save() {
	plan_doc >"$1/plan.json.tmp"
	mv -f "$1/plan.json.tmp" "$1/plan.json"
}

# plan_lines PLAN.JSON [FILTER]: its points (those FILTER gives) as plan
# lines (the tab-separated form of tswap.plan.expand that point_job and result_json
# take).
plan_lines() {
	jq -r "${2:-.points[]}"' | [.point, .kind, .rw, .backend, .tensor, .block, .qd, .submit, .window, .threads, .iodepth]
		+ (if .ranks > 1 then [.ranks] else [] end) | map(tostring) | join("\t")' "$1"
}

# point_label VAR PLANLINE: the progress label of a point, into VAR.
point_label() {
	local -n _label=$1
	local key kind rw be t b q s w p d n tn bn
	IFS=$'\t' read -r key kind rw be t b q s w p d n <<<"$2"
	szname tn "$t"
	if [ "$kind" = ceiling ]; then
		printf -v _label '%-5s ceiling (fio libaio bs=%s iodepth=%s%s)' "$rw" "$tn" "$q" "$( ((p > 1)) && printf ' over %s jobs' "$p")"
	elif [ "$kind" = checkpoint ]; then
		# tensor: io_buffer_size; iodepth 2: io_buffer_double (tswap.plan.checkpoint)
		szname bn "$b"
		printf -v _label 'checkpoint io_buffer=%s %s b=%s q=%s %s/%s p=%s' "$tn" \
			"$( ((d == 2)) && echo double || echo single)" "$bn" "$q" "$s" "$w" "$p"
	else
		szname bn "$b"
		printf -v _label '%-5s %-8s t=%s b=%s q=%s %s/%s p=%s d=%s' "$rw" "$be" "$tn" "$bn" "$q" "$s" "$w" "$p" "$d"
	fi
	[ "${n:-1}" = 1 ] || _label="$_label n=$n"
}

# load_done: FINISHED[RUNKEY]=GB/s (a fleet's: FINISHED[RUNKEY/HOSTID])
# for every run whose result.json says ok (one python3 -m tswap load-done
# for all of them: a resumed full grid has thousands); a directory not
# renamed into place (.tmp-*) is not done.
load_done() {
	local k v
	FINISHED=()
	while IFS=$'\t' read -r k v; do
		# shellcheck disable=SC2004,SC2034 # FINISHED: associative (state.sh), read by exec_todo
		[ -n "$k" ] && FINISHED[$k]=$v
	done < <(py load-done "$RUN/points" 2>/dev/null || true)
	return 0
}

# run_points PLAN.JSON REPEAT: every point REPEAT times, in whole passes
# over the plan (so the CV of a point includes the device's drift over the
# sweep, not only noise); runs done earlier are skipped. Progress on stdout.
run_points() {
	local repeat=$2 total idx=0 line rep runkey label pre wall ms spent=0 ran=0 eta text
	local -a lines=() todo=()
	# RUN/plan.json's lines as the front end made them (PLAN_LINES), else jq
	if [ "$1" = "$RUN/plan.json" ] && [ -n "$PLAN_LINES" ]; then
		text=$PLAN_LINES
	else
		text=$(plan_lines "$1")
	fi
	mapfile -t lines <<<"$text"
	total=$((${#lines[@]} * repeat))
	[ -d "$RUN/points" ] || mkdir -p "$RUN/points"
	load_done
	exec_begin "$total"
	for ((rep = 1; rep <= repeat; rep++)); do
		for line in "${lines[@]}"; do
			idx=$((idx + 1))
			runkey="${line%%$'\t'*}.r$rep"
			point_label label "$line"
			((repeat == 1)) || label="$label r$rep"
			printf -v pre '[%*d/%d] %s' "${#total}" "$idx" "$total" "$label"
			text=$(exec_todo "$runkey")
			if [ -z "$text" ]; then
				text=$(exec_done_text "$runkey")
				printf '%s  %s\n' "$pre" "$text"
				continue
			fi
			mapfile -t todo <<<"$text"
			exec_run wall "$line" "$runkey" "$rep" "$pre" "${todo[@]}"
			# wall: seconds with 3 decimals; the ETA from the mean so far
			ms=${wall/./}
			ran=$((ran + 1)) spent=$((spent + 10#$ms))
			fmt_secs "$(((total - idx) * ((spent + 500 * ran) / (1000 * ran))))" eta
			exec_result_text "$runkey" "$pre" "$eta" "${todo[@]}"
		done
	done
}

# run_all: the points, under the
# INT/TERM/HUP trap, kept through finish_run (which exits); progress on fd
# 8. fd 7: stderr as run_all found it,
# for on_signal: bash runs a trap inside the redirections of the command
# the signal came in (drop_caches' { ...; } 2>/dev/null), where stderr
# may be /dev/null.
run_all() {
	exec 7>&2
	# each trap's text a bare function name: nothing in it to expand or
	# parse beyond the name, wherever bash runs it (issue 25, item 4)
	trap on_sigint INT
	trap on_sigterm TERM
	trap on_sighup HUP
	{
		exec_head
		run_points "$RUN/plan.json" "$REPEAT"
	} >&8
}

# shellcheck disable=SC2317 # invoked by trap
on_sigint() { on_signal INT 130; }
# shellcheck disable=SC2317 # invoked by trap
on_sigterm() { on_signal TERM 143; }
# shellcheck disable=SC2317 # invoked by trap
on_sighup() { on_signal HUP 129; }

# on_signal NAME STATUS: stop what runs, remove this run's unfinished
# points (.tmp-*.PID) and half-written outputs (finish_run's FILE.tmp,
# before their mv), exit STATUS; no command substitution. In a subshell
# that caught the signal before its traps were reset, die of the signal
# instead, so that the sweep itself sees it and runs this.
# shellcheck disable=SC2317 # invoked by trap
on_signal() {
	local q
	if [ "$BASHPID" != "$$" ]; then
		trap - "$1"
		kill -s "$1" "$BASHPID"
		exit "$2"
	fi
	trap '' INT TERM HUP # a second signal does not cut the clean-up short
	exec 2>&7
	exec_stop "$1"
	rm -rf -- "$RUN"/points/.tmp-*."$$"
	rm -f -- "$RUN"/*.tmp "$RUN"/plots/*.tmp "$RUN"/hosts/*/*.tmp "$RUN"/points/*/*.tmp
	printf -v q '%q' "$RUN"
	warn "interrupted: finished points are kept; finish with: $PROG --resume $q"
	exit "$2"
}

# dry_run: each point's job file per repeat and place, nothing run.
dry_run() {
	local line key total rep idx=0 reps=$REPEAT p
	local -a lines=() places=() names=()
	mapfile -t lines <<<"$PLAN_TEXT"
	p=$(exec_places)
	mapfile -t places <<<"$p"
	p=$(exec_place_names)
	mapfile -t names <<<"$p"
	total=$((${#lines[@]} * reps))
	exec_dry_head "$total"
	for line in "${lines[@]}"; do
		key=${line%%$'\t'*}
		for ((rep = 1; rep <= reps; rep++)); do
			idx=$((idx + 1))
			for p in "${places[@]}"; do
				printf '\n### [%d/%d] %s.r%d%s\n' "$idx" "$total" "$key" "$rep" "${names[p]:-}"
				point_job "$line" "$p"
			done
		done
	done
}

# since T0: the seconds since T0 (an EPOCHREALTIME), 3 decimals.
since() {
	local s
	since_into s "$1"
	printf '%s\n' "$s"
}

# since_into VAR T0: since's seconds into VAR (no subshell).
since_into() {
	local ms=$(((${EPOCHREALTIME//[!0-9]/} - ${2//[!0-9]/} + 500) / 1000))
	printf -v "$1" '%d.%03d' "$((ms / 1000))" "$((ms % 1000))"
}

# finish_run: the outputs from the points' results, the plots, the
# summary, and the exit status, in one Python process: tswap.cli.finish
# (python3 -m tswap finish --help). A status of 3 from a full run
# directory says so (space.sh).
finish_run() {
	local status=$EXIT_OK q free
	local -a args=("$RUN" --cvflag "$CV_FLAG" --cvrel "$CV_REL" --cvmax "$CV_MAX" --cache "$CACHE_FACTOR"
		--costtol "$COST_TOL" --ds-version "$DS_VERSION" --min-read "$MIN_READ" --min-write "$MIN_WRITE"
		--bwlog-msec "$BWLOG_MSEC") more=()
	exec_finish_args more
	printf -v q '%q' "$RUN"
	[ -z "$COMPARE" ] || args+=(--compare "$(abspath "$COMPARE")")
	py finish "${args[@]}" "${more[@]}" --rerun "$q" || status=$?
	# shellcheck disable=SC2310 # run_dir_free failing: the stage's status
	if ((status == EXIT_ERROR)) && free=$(run_dir_free) && ((free < RUN_SPACE_MIN)); then
		run_dir_full_exit "$free"
	fi
	exit "$status"
}
