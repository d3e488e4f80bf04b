# shellcheck shell=bash
# meta.sh - what was measured: the target's storage stack and the host, read
# from sysfs and from the JSON of standard tools (lsblk -J, findmnt -J,
# lscpu -J, nvme id-ctrl -o json when nvme-cli is installed) by
# lib/meta-collect.sh (POSIX sh, also run on fleet hosts), and the versions
# of tswap, the engine and fio.
#
# A new run's RUN/meta.json and sweep.json's "meta" on this host are the
# front end's (tswap/cli/sweep_local.py, with the same collector and
# tswap_version's rule); a fleet's come from its hosts (fleet-meta.sh).
#
# Owns: meta_json (the object; shape in tswap.results.meta), meta_from_kv
# (the collector's lines to that object), tswap_version. Reads: ENGINE,
# ROOT, SWEEP_HOME, FIO_VERSION_TEXT. Nothing
# here writes to the target or needs root; a field that cannot be read is
# null with the reason next to it.

# tswap_version: the release (the Makefile's TSWAP_VERSION in a checkout,
# PREFIX/share/tswap/VERSION when installed) and, in a git checkout, the
# commit (git describe).
tswap_version() {
	local v=unknown c=''
	if [ -n "$ROOT" ]; then
		v=$(sed -n 's/^TSWAP_VERSION[[:space:]]*:=[[:space:]]*//p' "$ROOT/Makefile")
		c=$(git -C "$ROOT" describe --always --dirty --tags 2>/dev/null) || c=''
	elif [ -f "$SWEEP_HOME/VERSION" ]; then
		v=$(cat -- "$SWEEP_HOME/VERSION")
	fi
	printf '%s%s\n' "${v:-unknown}" "${c:+ (commit $c)}"
}

# meta_json TARGET [--into DIR]: the metadata object on stdout
# (tswap.results.meta), or with --into DIR into DIR/meta.json and
# DIR/sweep.json's "meta". TARGET is a block device, or a file (that may
# not exist yet: its nearest existing directory gives the filesystem).
# The reading is lib/meta-collect.sh's, the same collector that fleet
# hosts run (fleet-meta.sh).
meta_json() {
	local kv ver
	# fio's version as the front end read it (FIO_VERSION_TEXT), if it did
	kv=$(TSWAP_FIO_VERSION=${FIO_VERSION_TEXT:-} sh "$SWEEP_HOME/lib/meta-collect.sh" "$1")
	ver=$(tswap_version)
	meta_from_kv "$1" "${ENGINE:-}" "$ver" "${@:2}" <<<"$kv"
}

# meta_from_kv TARGET ENGINE TSWAP [--into DIR]: meta-collect.sh's
# "key<TAB>value" lines (stdin) as the metadata object
# (tswap.results.meta). TARGET, ENGINE and TSWAP are the reader's: the
# path as the sweep names it, the engine it loads, its version. JSON that
# does not parse counts as absent. Status 1 when stdin is not the
# collector's output. --into DIR: python3 -m tswap meta --help.
meta_from_kv() {
	py meta "$@"
}
