# shellcheck shell=bash
# space.sh - a full run directory (issue 11 item 14).
#
# Before each point, and when a command fails unexpectedly, the free space
# of the run directory's filesystem is checked: under RUN_SPACE_MIN the
# sweep stops with one line ("run directory full: N bytes free"), exit 3,
# after removing what it was writing (the point's .tmp- directory, *.tmp
# files), so that the run directory holds only whole points and --resume
# finishes it once space is freed. RUN_SPACE_MIN covers one point's files
# (fio.json, stats.json, result.json: tens of KiB) with a wide margin.
#
# Owns: run_dir_free, run_dir_full_exit. Reads: RUN. Writes: removes
# RUN/*.tmp and RUN/points/*.tmp.

# shellcheck disable=SC2034 # read by pipeline.sh and run.sh
readonly RUN_SPACE_MIN=$((1024 * 1024))

# run_dir_free: bytes available to the sweep on RUN's filesystem; status 1
# if df cannot tell.
run_dir_free() {
	local out n=''
	local -a lines
	out=$(df -P -B1 -- "$RUN" 2>/dev/null) || return 1
	mapfile -t lines <<<"$out"
	read -r _ _ _ n _ <<<"${lines[1]:-}"
	[[ $n =~ ^[0-9]+$ ]] || return 1
	printf '%s\n' "$n"
}

# run_dir_full_exit FREE: clean up what is half-written, one line, exit 3.
run_dir_full_exit() {
	rm -f -- "$RUN"/*.tmp "$RUN"/points/*.tmp 2>/dev/null || true
	die "$EXIT_ERROR" "run directory full: $1 bytes free in $RUN (free space, then: $PROG --resume $(printf '%q' "$RUN"))"
}
