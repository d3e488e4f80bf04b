# shellcheck shell=bash
# jobs.sh - fio job files: one standalone job per point, and how fio gets
# the engine and target paths (the grid's job library, --emit-jobs, is
# tswap.plan.jobs).
#
# Owns: tswap_options, run_options, point_job,
# fio_unsafe, fio_path, write_run_sh. Reads: the settings, the grid,
# PLAN_TEXT, the H_* arrays (a fleet host's job). Writes: job.fio on
# stdout (point_job), POINTDIR/run.sh, and
# RUN/engine.so, RUN/target symlinks for paths fio cannot take (fio_path).
# shellcheck disable=SC2034 # sets PLAN_TEXT, RUNTIME, RAMP (state.sh)
# shellcheck disable=SC2153 # TARGET, ENGINE: globals of state.sh
# shellcheck disable=SC2016 # ${TSWAP_*}, $(...) and `...` are literal: fio, run.sh and comment text

# tswap_options BACKEND BLOCK QD SUBMIT WINDOW THREADS (block in bytes)
tswap_options() {
	local bn
	szname bn "$2"
	printf 'tswap_backend=%s\ntswap_block_size=%s\ntswap_queue_depth=%s\n' "$1" "$bn" "$3"
	printf 'tswap_submit=%s\ntswap_window=%s\ntswap_threads=%s\n' "$4" "$5" "$6"
}

# run_options [KIND [BYTES]]: time based with ramp, or a fixed amount of
# I/O. A ceiling (KIND ceiling, BYTES in flight) moves at least 4 x BYTES
# with --io-size: one burst of its queue is not the device's rate, and a
# ceiling that reads low flags every point above it.
run_options() {
	local io
	if [ -n "$IO_SIZE" ]; then
		io=$(size_to_bytes "$IO_SIZE")
		if [ "${1:-}" = ceiling ] && ((io < 4 * $2)); then
			io=$((4 * $2))
		fi
		szname io "$io"
		printf 'io_size=%s\n' "$io"
	else
		printf 'time_based=1\nruntime=%s\nramp_time=%s\n' "$RUNTIME" "$RAMP"
	fi
}

# point_job PLANLINE [HOST]: the complete, standalone job file of one point.
# With HOST (fleet mode, an index into the H_* arrays): for that host, with
# its engine and target written out (fio expands ${VAR} on the server, in
# the server's environment), no tswap_stats (it would stay on the host),
# and the host's own fio options last in [global].
point_job() {
	local key kind rw be t b q s w p d n h=${2:-} engine='${TSWAP_ENGINE}' target='${TSWAP_TARGET}' opt multi=0
	local tn bn zn dirn=''
	IFS=$'\t' read -r key kind rw be t b q s w p d n <<<"$1"
	if [ "$kind" = checkpoint ]; then
		# one file of SIZE_BYTES as FastFileWriter writes it (tswap.plan.checkpoint)
		py checkpoint-job "$1" "$SIZE_BYTES"
		return 0
	fi
	multi_point "$rw" "${n:-1}" && multi=1
	szname tn "$t"
	szname bn "$b"
	szname zn "$((SIZE_BYTES / t * t))"
	[ "$rw" != readwrite ] || dirn=' and direction'
	if [ -n "$h" ]; then
		engine=${H_ENGINE[h]}
		target=${H_TARGET[h]//:/\\:}
	fi
	printf '; tswap-sweep point %s\n' "$key"
	if [ "$kind" = ceiling ]; then
		printf '; device ceiling: fio'"'"'s own libaio engine, %s blocks, iodepth %s\n' "$tn" "$q"
		((multi == 1 || p <= 1)) ||
			printf '; as %s jobs (submitting threads) of iodepth %s, each on its own 1/%s of the target\n' "$p" "$(((q + p - 1) / p))" "$p"
	else
		printf '; %s, backend %s, tensor %s, block %s, queue depth %s, submit %s, window %s, %s thread(s), %s op(s) queued\n' \
			"$rw" "$be" "$tn" "$bn" "$q" "$s" "$w" "$p" "$d"
	fi
	if [ -n "$h" ]; then
		printf '; fleet host %s: run.sh in this directory reruns the point there with\n' "${H_LABEL[h]}"
		printf ';   fio --client=%s job.fio\n' "${H_ADDR[h]}"
		printf '; The engine and target are paths on that host. overwrite=1: fio writes a new\n'
		printf '; target in full before its first job, so reads never hit unwritten extents.\n'
	elif [ "$multi" = 1 ]; then
		printf '; %s rank(s) at once, one job (one tswap handle) per rank%s, one group,\n' "${n:-1}" "$dirn"
		printf '; no group_reporting: fio'"'"'s JSON has one entry per handle.\n'
		printf '; Environment: TSWAP_ENGINE (tswap.so), TSWAP_RANKn and TSWAP_RANKn_WRITE (the\n'
		printf '; file or block device of rank n'"'"'s handles, '"'"':'"'"' escaped as '"'"'\\:'"'"').\n'
		printf '; run.sh in this directory sets them and reruns the point.\n'
	else
		printf '; Environment: TSWAP_ENGINE (tswap.so), TSWAP_TARGET (target, '"'"':'"'"' escaped as '"'"'\\:'"'"').\n'
		printf '; run.sh in this directory sets them and reruns the point.\n'
	fi
	printf '; size is the sweep'"'"'s size rounded down to a multiple of bs: fio 3.33 ends a\n'
	printf '; time-based job with ramp_time early when the region leaves a partial block.\n\n'
	printf '[global]\n'
	if [ "$kind" = ceiling ]; then
		printf 'ioengine=libaio\n'
	else
		printf 'ioengine=external:%s\n' "$engine"
		tswap_options "$be" "$b" "$q" "$s" "$w" "$p"
		if [ "$multi" = 1 ]; then
			printf 'tswap_stats=stats.job%%n.json\n'
		elif [ -z "$h" ]; then
			printf 'tswap_stats=stats.json\n'
		fi
	fi
	if [ "$multi" = 1 ]; then
		printf 'direct=1\n'
	else
		printf 'filename=%s\nsize=%s\ndirect=1\n' "$target" "$zn"
	fi
	run_options "$kind" "$((t * q))"
	if [ -z "$h" ]; then
		steady_options "$rw" "${n:-1}"
		bwlog_options
	fi
	if [ -n "$h" ]; then
		printf 'overwrite=1\n'
		if [ -n "${H_OPTS[h]}" ]; then
			printf '; options of this host in the hosts file\n'
			while IFS= read -r opt; do
				[ -z "$opt" ] || printf '%s\n' "$opt"
			done <<<"${H_OPTS[h]}"
		fi
	fi
	if [ "$multi" = 1 ]; then
		rank_sections "$1"
		return 0
	fi
	printf '\n[%s]\nrw=%s\n' "$key" "$rw"
	if [ "$kind" = ceiling ] && ((p > 1)); then
		# tswap.plan.expand ceiling_jobs: P submitters, the queue split among them,
		# each on its own slice (no group_reporting: result_json adds the jobs)
		local slice=$((SIZE_BYTES / p / t * t))
		((slice >= t)) || slice=$t
		szname slice "$slice"
		printf 'bs=%s\niodepth=%s\nnumjobs=%s\nsize=%s\noffset_increment=%s\n' \
			"$tn" "$(((q + p - 1) / p))" "$p" "$slice" "$slice"
	elif [ "$kind" = ceiling ]; then
		printf 'bs=%s\niodepth=%s\n' "$tn" "$q"
	else
		printf 'bs=%s\niodepth=%s\n' "$tn" "$d"
	fi
}

# fio_unsafe PATH: true when fio cannot take PATH as an option value: it
# cuts values at ';' and '#', strips blanks at both ends, replaces
# $pagesize, $mb_memory and $ncpus, and reads job files line by line.
fio_unsafe() {
	case $1 in
	*';'* | *'#'* | *'$pagesize'* | *'$mb_memory'* | *'$ncpus'* | *$'\n'* | [[:space:]]* | *[[:space:]]) return 0 ;;
	esac
	return 1
}

# fio_path PATH LINK DEPTH: PATH as fio sees it from a directory DEPTH levels
# below the run directory. A path fio cannot take is reached through the
# symlink RUN/LINK (relative, so the run directory may contain anything);
# ':' (fio's file separator) is escaped as '\:' in filename=.
fio_path() {
	local path=$1 link=$2 depth=$3 rel='' i
	if fio_unsafe "$path" || { [ "$link" = engine.so ] && [[ $path == *:* ]]; }; then
		if [ -z "$RUN" ]; then
			printf '<RUN>/%s (a symlink: fio cannot take this path as is)\n' "$link"
			return 0
		fi
		ln -sfn -- "$path" "$RUN/$link"
		for ((i = 0; i < depth; i++)); do rel="../$rel"; done
		printf '%s%s\n' "$rel" "$link"
	elif [[ $link == target* ]]; then
		printf '%s\n' "${path//:/\\:}"
	else
		printf '%s\n' "$path"
	fi
}

# write_run_sh DIR DEPTH: a script that reruns the point in its directory.
write_run_sh() {
	local dir=$1 depth=$2 engine target
	engine=$(fio_path "$ENGINE" engine.so "$depth")
	target=$(fio_path "$TARGET" target "$depth")
	{
		printf '#!/usr/bin/env bash\n'
		printf '# Rerun this point exactly (tswap-sweep %s).\n' "$G_NAME"
		printf 'set -euo pipefail\ncd "$(dirname "$0")"\n'
		printf '# target: %q\n' "$TARGET"
		printf 'export TSWAP_ENGINE=%q\n' "$engine"
		printf 'export TSWAP_TARGET=%q\n' "$target"
		printf 'export TSWAP_SIZE=%q\n' "$SIZE"
		rank_env_lines "$depth"
		printf 'exec fio --output-format=json --eta=never job.fio\n'
	} >"$dir/run.sh"
	chmod +x "$dir/run.sh"
}

