# shellcheck shell=bash
# status.sh - a status line at least every STATUS_EVERY seconds while a
# long point runs, so that a 60 s point is not a silent minute.
#
# The point stage prints them (tswap/cli/point.py status_text), from its
# own process, on its stdout: the progress stream (fd 8: stderr, or
# nothing with --quiet) wherever run_points runs. The line counts from the
# start of fio (elapsed; remaining against ramp + runtime, or "--io-size:
# no estimate"). fio's own --status-interval JSON is not used: it goes to
# fio's stdout, into the point's fio.json, which must stay one JSON
# document.
#
# Owns: status_args. Reads: STATUS_EVERY.

# status_args VAR LABEL: the point stage's options for the status lines
# "    LABEL: 10 s of 12 s, 2 s left", appended to array VAR (none
# without LABEL).
status_args() {
	local -n _sa=$1
	[ -z "$2" ] || _sa+=(--label "$2" --every "$STATUS_EVERY")
}
