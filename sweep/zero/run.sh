# shellcheck shell=bash
# sweep/zero/run.sh - lay out the swap files of a plan and replay its steps.
#
# Owns: the per-run folders under the targets (created fresh, never reused,
# removed at the end unless --keep), the room check, running fio, the
# per-step report. Reads: plan.json, step.fio, layout.fio, fio's JSON.
# Writes: in the run's --out DIR: step-N.json (fio), steps.json, report.txt;
# under each target: tswap-zero-RUNID/ (the swap files only).

ZERO_CREATED=()
# the running fio: its guard's pid (the process group) and its tag
# (sweep/lib/fioproc.sh)
ZERO_FIO_PID="" ZERO_FIO_TAG=""

# zero_on_signal NAME CODE: forward the signal to the running fio, SIGKILL
# it after FIO_GRACE seconds and wait until it and its job processes are
# gone (fio_stop), remove the run folders (zero_cleanup, unless --keep),
# exit CODE (130 for SIGINT). Installed by zero_make_run_dirs.
zero_on_signal() {
	trap '' INT TERM HUP # a second signal does not cut the clean-up short
	if [ -n "$ZERO_FIO_PID" ]; then
		fio_stop "$ZERO_FIO_PID" "$ZERO_FIO_TAG" "$1"
		ZERO_FIO_PID=""
	fi
	zero_cleanup
	trap - EXIT
	warn "interrupted (SIG$1): fio stopped, $( ((${ZERO_KEEP:-0})) && echo "swap files kept" || echo "swap files removed"); partial results in --out"
	exit "$2"
}

# zero_cleanup: remove the run folders this run created (and only those).
zero_cleanup() {
	local d
	[ "${ZERO_KEEP:-0}" = 1 ] && return 0
	for d in "${ZERO_CREATED[@]}"; do
		if [ -f "$d/.tswap-zero-run" ]; then
			rm -rf -- "$d"
		fi
	done
}

# zero_target_dir TARGET: the target folder, created when missing (not its
# parents: nothing is left behind that the run does not remove); refused
# (exit 2) when its parent is missing, or when it is not writable (before
# the room check: a read-only file system is named as such).
zero_target_dir() {
	local t=$1
	zero_check_target "$t"
	if [ ! -e "$t" ] && [ ! -L "$t" ]; then
		mkdir -- "$t" 2>/dev/null || usage_error "--target $t: cannot create the directory (read-only or no permission)"
	fi
	[ -d "$t" ] || usage_error "--target $t: not a directory (tswap-zero lays out swap files in a folder, like nvme_path)"
	[ -w "$t" ] || usage_error "--target $t: cannot write into it (read-only or no permission)"
}

# zero_check_target TARGET: zero_target_dir's refusals, nothing created:
# a missing TARGET needs a writable parent, an existing one must be a
# writable directory (exit 2 otherwise). The entry point runs it before
# --out is claimed, so that a refused target leaves no plan behind.
zero_check_target() {
	local t=$1 p
	if [ ! -e "$t" ] && [ ! -L "$t" ]; then
		p=$(dirname -- "$t")
		[ -d "$p" ] || usage_error "--target $t: its parent directory $p does not exist (tswap-zero creates only the target folder)"
		[ -w "$p" ] || usage_error "--target $t: cannot create the directory (read-only or no permission)"
		return 0
	fi
	[ -d "$t" ] || usage_error "--target $t: not a directory (tswap-zero lays out swap files in a folder, like nvme_path)"
	[ -w "$t" ] || usage_error "--target $t: cannot write into it (read-only or no permission)"
}

# zero_make_run_dirs RUNID TARGET...: create TARGET/tswap-zero-RUNID in each
# target (a directory: zero_target_dir). Refuses (exit 2) a target that
# is not a directory and a run folder that already exists: nothing of the
# user's is ever written to. Prints nothing.
zero_make_run_dirs() {
	local runid=$1 t d
	shift
	trap 'zero_on_signal INT 130' INT
	trap 'zero_on_signal TERM 143' TERM
	trap 'zero_on_signal HUP 129' HUP
	for t in "$@"; do
		if [ -e "$t" ] && [ ! -d "$t" ]; then
			usage_error "--target $t: not a directory (tswap-zero lays out swap files in a folder, like nvme_path)"
		fi
		zero_target_dir "$t"
		d=$t/tswap-zero-$runid
		if [ -e "$d" ] || [ -L "$d" ]; then
			usage_error "--target $t: $d already exists and was not created by this run: refusing to write into it"
		fi
		mkdir -- "$d" 2>/dev/null || usage_error "--target $t: cannot create $d (read-only or no permission)"
		: >"$d/.tswap-zero-run"
		ZERO_CREATED+=("$d")
	done
}

# zero_check_room NEED_JSON TARGETS_JSON: refuse (exit 2) when a file
# system's free space is below the swap files of the ranks whose targets it
# holds (+1%; targets on one file system are summed: stat's device number).
# $1: JSON array, per rank the bytes it lays out; $2: per rank its target.
zero_check_room() {
	local need_json=$1 tmap_json=$2 t need avail dev per
	local -A fs_need=() fs_name=()
	per=$(jq -rn --argjson need "$need_json" --argjson t "$tmap_json" '
		[range(0; $t | length) | {t: $t[.], b: $need[.]}] | group_by(.t)[]
		| [.[0].t, (map(.b) | add)] | @tsv')
	while IFS=$'\t' read -r t need; do
		dev=$(stat -L -c %d -- "$t" 2>/dev/null) || usage_error "--target $t: cannot stat it"
		fs_need[$dev]=$((${fs_need[$dev]:-0} + need))
		fs_name[$dev]=${fs_name[$dev]:+${fs_name[$dev]},}$t
	done <<<"$per"
	for dev in "${!fs_need[@]}"; do
		t=${fs_name[$dev]}
		need=${fs_need[$dev]}
		avail=$(df -B1 --output=avail -- "${t%%,*}" 2>/dev/null) || avail=''
		avail=${avail##*[!0-9]}
		[[ $avail =~ ^[0-9]+$ ]] || usage_error "--target $t: cannot read its free space (df)"
		if ((need + need / 100 > avail)); then
			usage_error "--target $t: needs $need bytes for its ranks' swap files, $avail free on its file system"
		fi
	done
}

# zero_fio JOBFILE OUTJSON: run fio with JSON output; exit 3 with fio's
# stderr tail when it fails.
zero_fio() {
	local job=$1 out=$2 rc=0 parent=$BASHPID
	# In the background so that a signal reaches zero_on_signal at once
	# (wait returns), which stops this fio; in its own process group under
	# a guard that kills it if tswap-zero dies (fioproc.sh).
	fio_new_tag ZERO_FIO_TAG
	(fio_exec "$parent" "$ZERO_FIO_TAG" fio --output-format=json --output="$out" "$job" 2>"$out.stderr") &
	ZERO_FIO_PID=$!
	wait "$ZERO_FIO_PID" || rc=$?
	fio_reap_tagged "$ZERO_FIO_TAG"
	ZERO_FIO_PID=""
	if ((rc != 0)); then
		tail -n 5 "$out.stderr" >&2
		die "$EXIT_ERROR" "fio failed on $job (see $out.stderr)"
	fi
	if jq -e '[.jobs[].error] | any(. != 0)' "$out" >/dev/null; then
		die "$EXIT_ERROR" "a job of $job reported an I/O error (see $out)"
	fi
}

# zero_run_layout LAYOUT_FIO TOTALS_JSON: write the files that exist before
# the step (fiojob.jq layout), unless there are none (--step init starts
# from an empty folder, as deepspeed.initialize does).
zero_run_layout() {
	local job=$1 totals=$2 n bytes
	n=$(jq -r .layout_jobs <<<"$totals")
	[ "$n" != 0 ] || return 0
	bytes=$(jq -r .layout <<<"$totals")
	say ""
	say "laying out $bytes bytes of swap files ..."
	zero_fio "$job" "$job.json"
}

# zero_step_figures FIO_JSON: per phase and stage the wall seconds (fio 3.33
# has no job start times: a job ends job_runtime ms after its group starts,
# or after the job it waits for; a stage lasts until its last job ends), bytes read and written
# (fio io_bytes), as one JSON object.
zero_step_figures() {
	jq '(reduce .jobs[] as $j ({}; .[$j.jobname] = ((if $j."job options".wait_for then .[$j."job options".wait_for] else 0 end) + $j.job_runtime))) as $fin
	   | [.jobs | to_entries[] | .key as $i | .value | {name: .jobname, start: $i, end: $fin[.jobname],
	     read: .read.io_bytes, write: .write.io_bytes}
	     | (.name | split(".")) as $n | . + {phase: $n[0], stage: $n[1]}]
	   | {phases: [group_by(.phase)[] | {phase: .[0].phase, start: (map(.start) | min),
	       stages: ([group_by(.stage)[] | {stage: .[0].stage, start: (map(.start) | min),
	         seconds: ((map(.end) | max) / 1000),
	         read: (map(.read) | add), write: (map(.write) | add)}] | sort_by(.start))}
	     | .seconds = ([.stages[].seconds] | add) | .read = ([.stages[].read] | add)
	     | .write = ([.stages[].write] | add)] | sort_by(.start)}
	   | .seconds = ([.phases[].seconds] | add) | .read = ([.phases[].read] | add)
	   | .write = ([.phases[].write] | add)
	   | .gbs = (if .seconds > 0 then (.read + .write) / .seconds / 1e9 else 0 end)' "$1"
}

# zero_run_steps LABEL STEPFIO STEPS OUTDIR TOTALS_JSON [CEILING_JSON]: run
# the step STEPS times; check every step moved exactly the planned replay
# bytes; print one line per step (and one against the device ceiling,
# ceiling.sh, unless CEILING_JSON is "null" or absent); write
# OUTDIR/LABEL-steps.json (a list of step figures).
zero_run_steps() {
	local label=$1 job=$2 steps=$3 out=$4 totals=$5 ceiling=${6:-null} i f
	local want_r want_w moved
	want_r=$(jq -r .read <<<"$totals")
	want_w=$(jq -r .write <<<"$totals")
	for ((i = 1; i <= steps; i++)); do
		zero_fio "$job" "$out/$label-step$i.fio.json"
		f=$(zero_step_figures "$out/$label-step$i.fio.json")
		f=$(zero_against_ceiling "$ceiling" <<<"$f")
		moved=$(jq -r '"\(.read)\t\(.write)"' <<<"$f")
		if [ "$moved" != "$want_r"$'\t'"$want_w" ]; then
			die "$EXIT_ERROR" "step $i ($label) moved ${moved%$'\t'*} B read, ${moved#*$'\t'} B written, the plan says $want_r and $want_w"
		fi
		printf '%s\n' "$f" >"$out/$label-step$i.json"
		jq -r --arg l "$label" --argjson i "$i" '
			"\($l) step \($i): " + ([.phases[] | "\(.phase) \(.seconds * 1000 | round / 1000) s"] | join(", "))
			+ "; total \(.seconds * 1000 | round / 1000) s, \(.gbs * 100 | round / 100) GB/s",
			(if .ceiling == null then empty else
			 "\($l) step \($i) against the device ceiling: "
			 + ([.phases[] | "\(.phase) \(.gbs * 100 | round / 100) of \(.ceiling_gbs * 100 | round / 100) GB/s (\(.pct_of_ceiling | round)%)"] | join(", "))
			 + "; step \(.gbs * 100 | round / 100) of \(.ceiling_gbs * 100 | round / 100) GB/s (\(.pct_of_ceiling | round)%)" end)' <<<"$f"
	done
	local -a all=()
	for ((i = 1; i <= steps; i++)); do all+=("$out/$label-step$i.json"); done
	jq -s . "${all[@]}" </dev/null >"$out/$label-steps.json"
}
