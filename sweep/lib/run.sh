# shellcheck shell=bash
# run.sh - the run of tswap-sweep on the hosts of --hosts (a run on this
# host is the front end's own process: tswap/cli/run_local.py): the
# executor (exec-fleet.sh, pipeline.sh), the target check, then a dry run,
# or the run directory, the points and the outputs.
#
# Not a command: sweep/tswap-sweep execs the Python package
# (tswap/cli/sweep_main.py), which parses the options, refuses what it must,
# does --help, --version, --list-grids and --emit-jobs, resolves a new
# run's settings and plan, and execs `bash run.sh SCRIPT_DIR SWEEP_HOME FD`
# with that state as bash declarations in the file open on FD (sourced
# here, after state.sh's defaults). Exit codes: sweep/tswap-sweep.
# shellcheck source-path=SCRIPTDIR/..
set -euo pipefail

# Arguments after the third: the sweep's options, for ps and pgrep -f only.
[ "$#" -ge 3 ] || { printf 'run.sh: run by tswap-sweep, not on its own\n' >&2; exit 3; }
SCRIPT_DIR=$1
SWEEP_HOME=$2
STATE_FD=$3
readonly SCRIPT_DIR SWEEP_HOME
# this process's name, as the front end had it (ps, top, pgrep -x)
{ printf tswap-sweep >/proc/self/comm; } 2>/dev/null || :

# Sourced at the top level (not in a function), so that their declarations
# are global. state.sh first: every global is named there.
# shellcheck source=lib/state.sh
. "$SWEEP_HOME/lib/state.sh"
# shellcheck source=lib/util.sh
. "$SWEEP_HOME/lib/util.sh"
# shellcheck source=lib/settings.sh
. "$SWEEP_HOME/lib/settings.sh"
# shellcheck source=lib/jobs.sh
. "$SWEEP_HOME/lib/jobs.sh"
# shellcheck source=lib/scratch.sh
. "$SWEEP_HOME/lib/scratch.sh"
# shellcheck source=lib/lock.sh
. "$SWEEP_HOME/lib/lock.sh"
# shellcheck source=lib/space.sh
. "$SWEEP_HOME/lib/space.sh"
# shellcheck source=lib/target.sh
. "$SWEEP_HOME/lib/target.sh"
# shellcheck source=lib/ranks.sh
. "$SWEEP_HOME/lib/ranks.sh"
# shellcheck source=lib/pipeline.sh
. "$SWEEP_HOME/lib/pipeline.sh"
# shellcheck source=lib/results.sh
. "$SWEEP_HOME/lib/results.sh"
# shellcheck source=lib/fleet.sh
. "$SWEEP_HOME/lib/fleet.sh"
# shellcheck source=lib/fleet-target.sh
. "$SWEEP_HOME/lib/fleet-target.sh"
# shellcheck source=lib/fleet-meta.sh
. "$SWEEP_HOME/lib/fleet-meta.sh"
# shellcheck source=lib/meta.sh
. "$SWEEP_HOME/lib/meta.sh"

# The state tswap/cli/sweep_main.py computed: the options, and a new run's
# settings, grid, plan, the plan's facts, fleet hosts and the run
# directory's first documents, or a resumed run's settings, plan and
# hosts (state.sh names them).
# shellcheck disable=SC1090 # written by the package
. "/dev/fd/$STATE_FD"
exec {STATE_FD}<&-

# main: a fleet's run (--hosts), from the settings on (a resumed run's:
# its sweep.json's and plan.json's, read by tswap/cli/sweep_resume.py; RUN
# is its directory), set up here. A run on this host never comes here: it
# is the front end's own process (tswap/cli/run_local.py).
main() {
	# fd 8: progress (the points as they run, their ETA; in a fleet, the
	# preflight and each point's hosts): stderr, so that stdout carries
	# only the results; --quiet drops it.
	if [ "$QUIET" = 1 ]; then exec 8>/dev/null; else exec 8>&2; fi
	# shellcheck source=lib/exec-fleet.sh
	. "$SWEEP_HOME/lib/exec-fleet.sh"
	fleet_setup
	if [ "$DRY_RUN" = 1 ]; then
		dry_run
		exit "$EXIT_OK"
	fi
	run_all
	finish_run
}

# fleet_setup: a fleet run's set-up up to its points: the targets checked
# on the hosts before anything is written, then unless a dry run its
# tools, the run directory (a new one made: settings.sh new_run_dir) and
# its lock (lock.sh), plan.json.
fleet_setup() {
	local writes
	facts_keep
	writes=$(plan_writes)
	exec_check_targets "$writes"
	facts_keep
	[ "$DRY_RUN" = 0 ] || return 0
	need_tools fio setsid setpriv
	exec_ready
	need_tools flock
	if [ -z "$RESUME" ]; then
		new_run_dir # takes the lock before it writes in the run directory
		exec_new_run
	fi
	lock_run
	# a run made before plan.json: its plan.tsv converted
	[ -f "$RUN/plan.json" ] || plan_save "$RUN"
}

# Anything that fails unexpectedly (set -e) is a run error, exit 3, with
# the module and line, rather than whatever status the failing command had.
# shellcheck disable=SC2317 # invoked by trap
on_err() {
	local rc=$1 line=$2 file=${3##*/} free
	trap - ERR
	# most often a full run directory (jq or mv: No space left on device);
	# shellcheck disable=SC2310 # run_dir_free failing: the message below
	if [ -n "$RUN" ] && [ -d "$RUN" ] && free=$(run_dir_free) && ((free < RUN_SPACE_MIN)); then
		run_dir_full_exit "$free"
	fi
	warn "internal error (status $rc) at line $line${file:+ of $file}"
	exit "$EXIT_ERROR"
}

set -E
trap 'on_err "$?" "$LINENO" "${BASH_SOURCE[0]:-}"' ERR
main
