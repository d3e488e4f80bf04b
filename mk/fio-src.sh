#!/usr/bin/env bash
# mk/fio-src.sh DESTDIR
#
# Fetch and configure the fio source tree that matches the installed fio
# binary, so that tswap.so is compiled against the same headers and the same
# config-host.h as the fio that will dlopen() it (design.md section 3).
#
# Source: the Debian/Ubuntu source package of the installed version
# (`apt-get source fio=<version>`). When the apt sources have no deb-src
# entries and we are root, they are enabled idempotently; when not root, the
# script prints what to run and exits 1.
#
# Result: DESTDIR/fio-<upstream>/ configured with --disable-native (as
# debian/rules does), and DESTDIR/fio-src -> that directory.
# Exit: 0 on success; 1 with a one-line reason on stderr otherwise.
set -euo pipefail

die() { printf 'mk/fio-src.sh: %s\n' "$*" >&2; exit 1; }

dest=${1:?usage: mk/fio-src.sh DESTDIR}

command -v fio >/dev/null || die "fio is not installed; run 'make deps' first"
command -v dpkg-query >/dev/null || die "not a Debian/Ubuntu system; build fio yourself and pass FIO_SRC=DIR (a configured fio tree)"

debver=$(dpkg-query -W -f='${Version}' fio 2>/dev/null) ||
	die "the installed fio is not a Debian package; pass FIO_SRC=DIR (a configured fio tree of $(fio --version))"
[ -n "$debver" ] || die "dpkg knows no installed fio package; run 'make deps' or pass FIO_SRC=DIR"

mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
upstream=${debver#*:}
upstream=${upstream%-*}
tree="$dest/fio-$upstream"

if [ -f "$tree/config-host.h" ] && [ -f "$tree/.tswap-debver" ] &&
	[ "$(cat "$tree/.tswap-debver")" = "$debver" ]; then
	ln -sfn "fio-$upstream" "$dest/fio-src"
	exit 0
fi

have_deb_src() {
	grep -Eqs '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list ||
		grep -Eqs '^Types:.*deb-src' /etc/apt/sources.list.d/*.sources
}

enable_deb_src() {
	local f src
	# deb822 .sources files: "Types: deb" -> "Types: deb deb-src"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		grep -Eq '^Types:[[:space:]]*deb[[:space:]]*$' "$f" || continue
		sed -i -E 's/^Types:[[:space:]]*deb[[:space:]]*$/Types: deb deb-src/' "$f"
	done
	# one-line style: copy every "deb URI SUITE..." as "deb-src URI SUITE..."
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		grep -Eq '^[[:space:]]*deb[[:space:]]' "$f" || continue
		grep -Eq '^[[:space:]]*deb-src[[:space:]]' "$f" && continue
		src=$(sed -n -E 's/^[[:space:]]*deb([[:space:]])/deb-src\1/p' "$f")
		printf '%s\n' "$src" >>"$f"
	done
}

if ! have_deb_src; then
	if [ "$(id -u)" -ne 0 ]; then
		die "no deb-src entries in /etc/apt; as root run 'make fio-src' (it enables them), or pass FIO_SRC=DIR (a configured fio $upstream tree)"
	fi
	enable_deb_src
	have_deb_src || die "could not enable deb-src entries in /etc/apt; pass FIO_SRC=DIR"
	apt-get update -qq >&2 || die "apt-get update failed after enabling deb-src"
fi

work=$(mktemp -d "$dest/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! (cd "$work" && apt-get source --download-only -qq "fio=$debver" >&2 &&
	dpkg-source --no-check -x ./*.dsc "fio-$upstream" >&2); then
	if [ "$(id -u)" -ne 0 ]; then
		die "apt-get source fio=$debver failed; as root run 'apt-get update' and retry, or pass FIO_SRC=DIR"
	fi
	apt-get update -qq >&2 || true
	(cd "$work" && apt-get source --download-only -qq "fio=$debver" >&2 &&
		dpkg-source --no-check -x ./*.dsc "fio-$upstream" >&2) ||
		die "apt-get source fio=$debver failed; pass FIO_SRC=DIR (a configured fio $upstream tree)"
fi

# Configure the way debian/rules does: --disable-native, and nothing that
# needs the optional build dependencies changes the structs the engine uses.
(cd "$work/fio-$upstream" && ./configure --disable-native >configure.log 2>&1) ||
	die "fio ./configure failed; see $work/fio-$upstream/configure.log"
printf '%s\n' "$debver" >"$work/fio-$upstream/.tswap-debver"
rm -rf "$tree"
mv "$work/fio-$upstream" "$tree"
ln -sfn "fio-$upstream" "$dest/fio-src"
