# shellcheck shell=bash
# status.sh - a status line at least every STATUS_EVERY seconds while a
# long point runs, so that a 60 s point is not a silent minute.
#
# Owns: status_start, status_wait, status_stop. Reads: RUNTIME, RAMP (the point's
# seconds; none with --io-size), STATUS_EVERY. Writes: STATUS_PID; the
# lines go to stdout, which is the progress stream (fd 8: stderr, or
# nothing with --quiet) wherever run_points runs.
#
# The line counts from the start of fio (elapsed; remaining against ramp +
# runtime). fio's own --status-interval JSON is not used: it goes to fio's
# stdout, into the point's fio.json, which must stay one JSON document.

# status_start PID LABEL: while PID runs, every STATUS_EVERY seconds
# "    LABEL: 10 s of 12 s, 2 s left" (or "10 s, --io-size: no estimate").
status_start() {
	local pid=$1 label=$2 total='' t0=$SECONDS
	[ -z "$RUNTIME" ] || total=$((10#${RAMP:-0} + 10#$RUNTIME))
	(
		local el fd
		# not the run's and targets' locks (lock.sh): a sleeping status
		# line must not keep them locked after the sweep has exited
		lock_fds_close
		target_refs_close
		# the wait is read -t on a pipe that nobody writes to (this
		# subshell holds both ends): no sleep process, and nothing that
		# outlives status_stop holding a pipe of ours (a caller that reads
		# our stderr to its end is not kept waiting)
		exec {fd}<> <(:)
		while status_wait "$fd" && alive "$pid"; do
			el=$((SECONDS - t0))
			if [ -z "$total" ]; then
				printf '    %s: %d s, --io-size: no estimate\n' "$label" "$el"
			elif ((el <= total)); then
				printf '    %s: %d s of %d s, %d s left\n' "$label" "$el" "$total" "$((total - el))"
			else
				printf '    %s: %d s of %d s, winding down\n' "$label" "$el" "$total"
			fi
		done
	) &
	STATUS_PID=$!
}

# status_wait FD: STATUS_EVERY seconds on FD, a pipe nobody writes to;
# status 1 if read did not time out (a bad STATUS_EVERY).
status_wait() {
	local rc=0
	read -r -t "$STATUS_EVERY" -u "$1" _ 2>/dev/null || rc=$?
	((rc > 128))
}

# status_stop: end the status lines of the point (its subshell only).
status_stop() {
	[ -n "$STATUS_PID" ] || return 0
	kill -TERM "$STATUS_PID" 2>/dev/null || true
	wait "$STATUS_PID" 2>/dev/null || true
	STATUS_PID=
}
