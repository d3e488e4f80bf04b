# shellcheck shell=bash
# jobs.sh - fio job files: one standalone job per point (made by
# tswap.plan.jobs, as the grid's job library of --emit-jobs is), and how
# fio gets the engine and target paths.
#
# Owns: point_job, jobs_key, jobs_make (a point's run.sh and fio's
# paths: tswap/executor/point.py).
# Reads: the settings, PLAN_TEXT, TARGETS, TARGET_KINDS, the H_* arrays (a
# fleet host's job). Writes: JOBS, JOBS_ERR, JOBS_OF; job.fio on stdout
# (point_job), and RUN/engine.so, RUN/target symlinks for paths fio
# cannot take (tswap/executor/point.py fio_path).
# shellcheck disable=SC2153 # TARGET, ENGINE: globals of state.sh
# shellcheck disable=SC2016 # $pagesize...: fio's variables, literal

# point_job PLANLINE [HOST]: the complete, standalone job file of one point
# (with HOST, an index into the H_* arrays: that fleet host's), looked up
# in JOBS. A point not there, or a RUNTIME, RAMP or target that changed
# since, makes JOBS again for the whole plan: one python3 per pass over
# the plan, not per point.
point_job() {
	local k="${2:-}/${1%%$'\t'*}" err
	jobs_ready "$@"
	printf '%s' "${JOBS[$k]}"
	if [ -n "${JOBS_ERR[$k]+set}" ]; then
		err=${JOBS_ERR[$k]}
		printf '%s\n' "${err#*$'\t'}" >&2
		exit "${err%%$'\t'*}"
	fi
}

# jobs_ready PLANLINE [HOST]: JOBS made for the settings of now and
# PLANLINE (jobs_make, one Python start, when they are not).
jobs_ready() {
	local k="${2:-}/${1%%$'\t'*}" of
	jobs_key of
	if [ "$JOBS_OF" != "$of" ] || [ -z "${JOBS[$k]+set}" ]; then
		jobs_make "$1"
	fi
}

# jobs_key VAR: what JOBS are made for, besides the plan, into VAR.
jobs_key() {
	local IFS=$'\x1f'
	printf -v "$1" '%s' "$RUNTIME/${RAMP:-}/$IO_SIZE/$SIZE_BYTES/$STEADY/${TARGETS[*]}/${TARGET_KINDS[*]}/${#H_ADDR[@]}"
}

# jobs_make [PLANLINE]: JOBS and JOBS_ERR for PLAN_TEXT's lines and
# PLANLINE (python3 -m tswap point-jobs: tswap.plan.jobs point_job, the
# H_* arrays for a fleet's hosts).
jobs_make() {
	local text h
	local -a args=(--size-bytes "$SIZE_BYTES" --runtime="$RUNTIME" --ramp="${RAMP:-}"
		--io-size="$IO_SIZE" --steady="$STEADY" --ss-crit="$SS_CRIT" --ss-dur "$SS_DUR"
		--bwlog-msec "$BWLOG_MSEC" --prog "$PROG")
	for h in "${!TARGETS[@]}"; do
		args+=(--target="${TARGETS[h]}" --kind="${TARGET_KINDS[h]:-file}")
	done
	if [ "$FLEET" = 1 ]; then
		for ((h = 0; h < ${#H_ADDR[@]}; h++)); do
			args+=(--hlabel="${H_LABEL[h]}" --haddr="${H_ADDR[h]}" --hengine="${H_ENGINE[h]}"
				--htarget="${H_TARGET[h]}" --hopts="${H_OPTS[h]}")
		done
	fi
	text=$(py point-jobs "${args[@]}" <<<"$PLAN_TEXT"$'\n'"${1:-}")
	eval "$text"
	jobs_key JOBS_OF
}
