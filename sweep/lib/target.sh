# shellcheck shell=bash
# target.sh - a fleet host's file rules (one host's targets are the front
# end's: tswap/executor/targets.py, tswap/executor/target_rules.py).
#
# Whether a target may be used is decided before anything is written
# (fleet-target.sh on the hosts; the rules: tswap/executor/target_rules.py,
# docs/sweep.md "Targets").
# Owns: file_rules (an existing regular file the sweep did not create, on
# a fleet host: fleet-target.sh; the same rules on this host:
# target_rules.py file_rules).
# shellcheck disable=SC2016 # ${TSWAP_*} is literal: fio expands it

# file_rules WHAT NAME WRITES BIG [HAVE]: the rules for an existing regular
# file the sweep did not create on a fleet host (fleet-target.sh; this
# host's: tswap/executor/target_rules.py file_rules):
# written only with --destructive; a read-only sweep may read one at least
# --size long (BIG 1; fio lays out, i.e. writes, a shorter one). WHAT names
# it in a refusal, NAME in the warning, HAVE is its size, said.
file_rules() {
	local what=$1 name=$2 writes=$3 big=$4 have=${5:-}
	if [ "$DESTRUCTIVE" = 1 ]; then
		if [ "$writes" = 1 ] || [ "$big" = 0 ]; then
			warn_once "overwriting $name, a file the sweep did not create, because of --destructive"
		fi
	elif [ "$writes" = 1 ]; then
		die "$EXIT_USAGE" "refusing $what: an existing file the sweep did not create, and the sweep writes to it (its data would be destroyed); pass --destructive, a new path, or --rw read"
	elif [ "$big" = 0 ]; then
		die "$EXIT_USAGE" "refusing $what: an existing file the sweep did not create, shorter$have than --size $SIZE: fio would write it out to full size; pass --destructive, a new path, or a smaller --size"
	fi
	return 0
}
