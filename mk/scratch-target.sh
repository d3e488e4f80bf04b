#!/usr/bin/env bash
# mk/scratch-target.sh PATH - make run's target, under tswap-sweep's rules
# (sweep/lib/scratch.sh, docs/sweep.md "Targets"): a new PATH is created
# and marked as the sweep's scratch file (so `make sweep` on it needs no
# flag, and `make run` again finds it ours); an existing file is used only
# if it carries the mark. Exit 2, one line, otherwise.
set -euo pipefail
SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../sweep" && pwd)
SWEEP_HOME=$SCRIPT_DIR
# shellcheck source=sweep/lib/state.sh
. "$SWEEP_HOME/lib/state.sh"
# shellcheck source=sweep/lib/util.sh
. "$SWEEP_HOME/lib/util.sh"
# shellcheck source=sweep/lib/scratch.sh
. "$SWEEP_HOME/lib/scratch.sh"
if [ "$#" -ne 1 ] || [ -z "$1" ]; then
	die "$EXIT_USAGE" "usage: mk/scratch-target.sh PATH"
fi
t=$1
if [ -e "$t" ] || [ -L "$t" ]; then
	if [ ! -f "$t" ] || ! scratch_owned "$t"; then
		die "$EXIT_USAGE" "refusing target $t: it exists and is not a scratch file tswap created (no $SCRATCH_XATTR mark); remove it, or set TSWAP_TARGET to a new path"
	fi
else
	scratch_create "$t"
fi
