# shellcheck shell=bash
# paths.sh - where things are by default, in a checkout or installed.
#
# Owns: grids_dir, default_engine, default_target, default_out,
# fleet_default_engine, installed_engine, unwritable_why, dir_makeable.
# Reads: SCRIPT_DIR, ROOT, TSWAP_ENGINE (environment), PWD. Writes:
# nothing (prints paths and reasons).

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

# unwritable_why PATH: why the existing PATH is not writable, as the
# kernel would say: "a read-only file system" (EROFS: its mount, or the
# filesystem, is read-only), else "no permission" (EACCES).
unwritable_why() {
	local opts
	opts=$(findmnt -n -o OPTIONS -T "$1" 2>/dev/null | head -n 1) || opts=''
	if [[ ,$opts, == *,ro,* ]]; then
		printf 'a read-only file system\n'
	else
		printf 'no permission\n'
	fi
}

# dir_makeable DIR: status 0 when DIR is a writable directory or mkdir -p
# could make it; else prints why not (one phrase) and returns 1. Nothing
# is created.
dir_makeable() {
	local d=$1 up
	if [ -e "$d" ] || [ -L "$d" ]; then
		if [ ! -d "$d" ]; then
			if [ -L "$d" ] && [ ! -e "$d" ]; then
				printf 'not a directory (a symbolic link that does not resolve)\n'
			else
				printf 'not a directory (a %s)\n' "$(stat -L -c %F -- "$d")"
			fi
			return 1
		fi
		[ -w "$d" ] || { printf 'not writable (%s)\n' "$(unwritable_why "$d")"; return 1; }
		return 0
	fi
	# the nearest part of the path that exists: a directory mkdir -p can write in
	up=$(abspath "$d")
	while [ ! -e "$up" ] && [ ! -L "$up" ]; do up=$(dirname -- "$up"); done
	if [ ! -d "$up" ]; then
		printf 'cannot be made: %s is not a directory\n' "$up"
		return 1
	fi
	[ -w "$up" ] || { printf 'cannot be made: %s is not writable (%s)\n' "$up" "$(unwritable_why "$up")"; return 1; }
	return 0
}
