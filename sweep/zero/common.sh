# shellcheck shell=bash
# sweep/zero/common.sh - messages, number parsing and paths for tswap-zero.
#
# Owns: die/usage_error/say/warn, parse_count (the CLI's element counts),
# zero_find_engine. Reads: $SCRIPT_DIR, $ZERO_LIB (set by sweep/tswap-zero),
# $TSWAP_ENGINE. Writes: nothing.

readonly PROG=tswap-zero
# Used by the other modules.
# shellcheck disable=SC2034
readonly EXIT_USAGE=2 EXIT_ERROR=3
# Replay size unit, bytes: the DIO offset alignment the replay rounds each
# tensor up to (4096: NVMe's usual logical block; tswap checks the real one).
# shellcheck disable=SC2034
readonly ZERO_DIO_UNIT=4096

say() { printf '%s\n' "$*"; }
warn() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { # die CODE MESSAGE...
	local code=$1
	shift
	printf '%s: %s\n' "$PROG" "$*" >&2
	exit "$code"
}
usage_error() { die "$EXIT_USAGE" "$*"; }

# parse_count OPTION VALUE MIN: an element count written as an integer or in
# e notation (13e9, 1.3e9) -> the integer on stdout; one line and exit 2 if
# it is not a whole number >= MIN.
parse_count() {
	local opt=$1 val=$2 min=$3 n
	if ! [[ $val =~ ^[0-9]+(\.[0-9]+)?([eE][+]?[0-9]+)?$ ]]; then
		usage_error "$opt=$val: not a number (an element count, e.g. 13e9)"
	fi
	n=$(jq -n --arg v "$val" '$v | tonumber | if . == floor and . < 9e15 then . else "x" end') ||
		usage_error "$opt=$val: not a number"
	[[ $n =~ ^[0-9]+$ ]] || usage_error "$opt=$val: must be a whole number below 9e15"
	((n >= min)) || usage_error "$opt=$val: must be at least $min"
	printf '%s\n' "$n"
}

# zero_find_engine: tswap.so: $TSWAP_ENGINE, build/tswap.so in a checkout,
# else PREFIX/lib/fio/tswap.so next to the installed script.
zero_find_engine() {
	local c
	for c in "${TSWAP_ENGINE:-}" "$SCRIPT_DIR/../build/tswap.so" "$SCRIPT_DIR/../lib/fio/tswap.so"; do
		if [ -n "$c" ] && [ -f "$c" ]; then
			(cd "$(dirname "$c")" && printf '%s/%s\n' "$(pwd)" "$(basename "$c")")
			return 0
		fi
	done
	return 1
}
