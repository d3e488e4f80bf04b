# shellcheck shell=bash
#
# tests/shots.bash - SIGINT at a random moment (loaded after
# helpers.bash by tests/sweep-hostile.bats and tests/zero.bats): a command
# started again and again as its own process group, each time shot with
# SIGINT a little later, as a ^C at a terminal lands anywhere in its
# start-up.
#
#   sigint_shots MISSES START DELAY...   the shots; "# N of M shots landed"

# sigint_shots MISSES START DELAY...: for each DELAY (seconds), the
# function START runs with DELAY as its argument in the background, its
# own process group (set -m), stdout to /dev/null and stderr to
# $BATS_TEST_TMPDIR/shot.err (START execs the command: the group is the
# command's own); DELAY later the group gets SIGINT. Each shot: no
# traceback, KeyboardInterrupt or "Fatal Python error" on stderr; an exit
# status among MISSES (space-separated) means the command ended before
# the shot (the test's miss, never a failure), any other must be 130.
# Says "# N of M shots landed" (START's name) on fd 3.
sigint_shots() {
	local misses=$1 start=$2 d pid rc hit=0 err=$BATS_TEST_TMPDIR/shot.err
	shift 2
	for d in "$@"; do
		# made here: a shot that lands before the child opens its
		# redirection leaves no file, and grep would say so (exit 2)
		: >"$err"
		set -m
		"$start" "$d" >/dev/null 2>"$err" &
		pid=$!
		set +m
		sleep "$d"
		kill -INT -- "-$pid" 2>/dev/null || true
		rc=0
		wait "$pid" || rc=$?
		run -1 grep -E 'Traceback|KeyboardInterrupt|Fatal Python error' "$err"
		[[ " $misses " != *" $rc "* ]] || continue
		hit=$((hit + 1))
		[ "$rc" -eq 130 ] || { cat "$err" >&2; fail "$start: SIGINT after ${d}s: exit $rc, not 130"; }
	done
	echo "# $start: $hit of $# shots landed" >&3
}
