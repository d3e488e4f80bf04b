# shellcheck shell=bash
# paths.sh - where things are by default, in a checkout or installed.
#
# Owns: grids_dir, default_engine, default_target, default_out,
# fleet_default_engine, installed_engine. Reads: SCRIPT_DIR, ROOT, TSWAP_ENGINE (environment),
# PWD. Writes: nothing (prints paths).

grids_dir() {
	local d
	for d in "$SCRIPT_DIR/grids" "$SCRIPT_DIR/../share/tswap/grids"; do
		if [ -d "$d" ]; then
			printf '%s\n' "$d"
			return 0
		fi
	done
	return 1
}

default_engine() {
	if [ -n "${TSWAP_ENGINE:-}" ]; then
		printf '%s\n' "$TSWAP_ENGINE"
	elif [ -n "$ROOT" ]; then
		printf '%s\n' "$ROOT/build/tswap.so"
	else
		installed_engine
	fi
}

# installed_engine: PREFIX/lib/fio/tswap.so of this script's installation.
installed_engine() {
	local prefix
	prefix=$(cd "$SCRIPT_DIR/.." && pwd)
	printf '%s\n' "$prefix/lib/fio/tswap.so"
}

default_target() {
	if [ -n "$ROOT" ]; then
		printf '%s\n' "$ROOT/build/scratch/tswap.swap"
	else
		printf '%s\n' "$PWD/tswap-scratch.swap"
	fi
}

default_out() {
	local stamp
	stamp=$(date -u +%Y%m%d-%H%M%S)
	if [ -n "$ROOT" ]; then
		printf '%s\n' "$ROOT/build/sweep/$stamp"
	else
		printf '%s\n' "$PWD/tswap-sweep-$stamp"
	fi
}

fleet_default_engine() {
	if [ -n "$ROOT" ]; then
		printf '%s\n' /usr/local/lib/fio/tswap.so # make install's default PREFIX
	else
		installed_engine
	fi
}
