#!/usr/bin/env bash
# mk/deb-source.sh VERSION FIO_SRC OUTDIR
#
# The source package `make deb` builds, in format 3.0 (quilt) with a second
# upstream component, so that the package build needs no network: the fio
# source the engine compiles against comes with it. Run from the top of the
# checkout; VERSION is the Makefile's TSWAP_VERSION, FIO_SRC a Debian fio
# source tree (the one the Makefile builds against: `apt-get source fio`
# of the installed version, mk/fio-src.sh; fio/debian/changelog gives the
# version for Built-Using), OUTDIR an empty or new directory.
#
# Writes:
#   OUTDIR/tswap_VERSION.orig.tar.xz      the checkout without debian/,
#                                         build/ and .git
#   OUTDIR/tswap_VERSION.orig-fio.tar.xz  FIO_SRC without what ./configure
#                                         and a build wrote (config-host.h,
#                                         *.o, ...) and quilt's .pc/
#   OUTDIR/tswap-VERSION/                 both unpacked (the second in
#                                         fio/) plus debian/: the tree
#                                         dpkg-buildpackage runs in
# Prints the tree's path. Exit: 0; 1 with a one-line reason on stderr.
set -euo pipefail

die() { printf 'mk/deb-source.sh: %s\n' "$*" >&2; exit 1; }

[ $# -eq 3 ] || die "usage: mk/deb-source.sh VERSION FIO_SRC OUTDIR"
version=$1 fio_src=$2 out=$3

[ -f debian/changelog ] || die "run from the top of the tswap checkout (no debian/changelog here)"
debver=$(dpkg-parsechangelog -l debian/changelog -S Version) ||
	die "cannot read debian/changelog's version"
[ "${debver%-*}" = "$version" ] ||
	die "debian/changelog's version $debver is not TSWAP_VERSION $version: add a changelog entry"
[ -f "$fio_src/debian/changelog" ] ||
	die "$fio_src has no debian/changelog: make deb needs fio's Debian source (make fio-src, or FIO_SRC=DIR from 'apt-get source fio')"
fio_name=$(dpkg-parsechangelog -l "$fio_src/debian/changelog" -S Source) ||
	die "cannot read $fio_src/debian/changelog"
[ "$fio_name" = fio ] || die "$fio_src/debian/changelog is the source of $fio_name, not fio"

mkdir -p "$out"
left=$(ls -A "$out")
[ -z "$left" ] || die "$out is not empty"
tree=$out/tswap-$version
orig=$out/tswap_$version.orig.tar.xz
orig_fio=$out/tswap_$version.orig-fio.tar.xz
tar_opts=(--sort=name --owner=0 --group=0 --numeric-owner)

tar -c "${tar_opts[@]}" --exclude=./build --exclude=./.git --exclude=./debian \
	--transform="s,^\.,tswap-$version," -f - . | xz -T1 >"$orig"
tar -c "${tar_opts[@]}" -C "$fio_src/" \
	--exclude=./.pc --exclude=./.tswap-debver --exclude=./configure.log \
	--exclude=./config.log --exclude=./config-host.h --exclude=./config-host.mak \
	--exclude=./FIO-VERSION-FILE --exclude=./.depend \
	--exclude='*.o' --exclude='*.d' --exclude='*.so' \
	--transform='s,^\.,fio,' -f - . | xz -T1 >"$orig_fio"

mkdir -p "$tree/fio"
tar -x -f "$orig" -C "$tree" --strip-components=1
tar -x -f "$orig_fio" -C "$tree/fio" --strip-components=1
cp -a debian "$tree/"
printf '%s\n' "$tree"
