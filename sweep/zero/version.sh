# shellcheck shell=bash
# sweep/zero/version.sh - tswap-zero --version, in tswap-sweep --version's
# shape (sweep/lib/meta.sh print_version): the tswap release and, in a git
# checkout, its commit; the engine tswap-zero would use; fio's version.
#
# Owns: zero_print_version. Reads: $SCRIPT_DIR, $ZERO_LIB (set by
# sweep/tswap-zero), zero_find_engine (common.sh).

# zero_print_version: the release is the Makefile's TSWAP_VERSION in a
# checkout, PREFIX/share/tswap/VERSION when installed (make install).
zero_print_version() {
	local v='' c='' engine fio root=$SCRIPT_DIR/..
	if [ -f "$root/Makefile" ] && [ -d "$root/engine" ]; then
		v=$(sed -n 's/^TSWAP_VERSION[[:space:]]*:=[[:space:]]*//p' "$root/Makefile")
		c=$(git -C "$root" describe --always --dirty --tags 2>/dev/null) || c=''
	elif [ -f "$ZERO_LIB/../VERSION" ]; then
		v=$(cat -- "$ZERO_LIB/../VERSION")
	fi
	fio=$(fio --version 2>/dev/null) || fio='not installed'
	printf '%s (tswap) %s%s\n' "$PROG" "${v:-unknown}" "${c:+ (commit $c)}"
	if engine=$(zero_find_engine); then
		printf 'engine: %s (built with this tswap version; its stats JSON says tswap_version)\n' "$engine"
	else
		printf 'engine: none found (TSWAP_ENGINE, build/tswap.so, PREFIX/lib/fio/tswap.so)\n'
	fi
	printf 'fio: %s\n' "$fio"
}
