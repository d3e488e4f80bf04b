#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $output, $status
# shellcheck disable=SC2016  # bash -c and awk programs in single quotes
#
# The Debian package (make deb, debian/) and the man pages (make man): the
# package installs the engine, the job library, tswap-sweep and the man
# pages in their FHS places, depends on exactly the fio it was built
# against, works from the installed paths alone, and leaves nothing behind
# when purged. It builds with the network off (fio's source comes with the
# source package), with dpkg-buildflags' flags, Built-Using fio, and
# lintian prints nothing on it but documented overrides.

load helpers
load deb

setup() { common_setup; }
teardown() {
	# A failed test must not leave the package installed.
	if [ -n "${DEB_INSTALLED:-}" ]; then
		dpkg_wait -P tswap >/dev/null 2>&1 || true
	fi
	common_teardown
}

tswap_version() {
	sed -n 's/^TSWAP_VERSION := //p' "$REPO/Makefile"
}

# no_groff_warnings PAGE - PAGE renders with no groff warning, checked the
# way lintian checks (groff-message) and with groff -ww.
no_groff_warnings() {
	local page=$1
	run --separate-stderr env LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
		man --warnings -E UTF-8 -l -Tutf8 -Z "$page"
	[ "$status" -eq 0 ] || fail "man --warnings -l $page failed ($status): $stderr"
	[ -z "$stderr" ] || fail "groff warnings in $page (man --warnings): $stderr"
	run --separate-stderr groff -t -man -ww -z "$page"
	[ "$status" -eq 0 ] || fail "groff -t -man -ww -z $page failed ($status): $stderr"
	[ -z "$stderr" ] || fail "groff warnings in $page (groff -ww): $stderr"
}

@test "debian/changelog: TSWAP_VERSION, and the latest entry names tswap-zero" {
	local v
	v=$(tswap_version)
	[ -n "$v" ] || fail "no TSWAP_VERSION in the Makefile"
	run -0 deb_version
	assert_output --regexp "^${v//./\\.}-[0-9]+\$"
	run -0 dpkg-parsechangelog -l "$REPO/debian/changelog" -S Changes
	assert_output --partial 'tswap-zero'
	assert_output --partial 'tswap-zero(1)'
}

@test "LICENSE is GPL-2's text; debian/copyright and every SPDX header say GPL-2.0-only" {
	[ -f /usr/share/common-licenses/GPL-2 ] || skip "requires /usr/share/common-licenses/GPL-2 (base-files)"
	run -0 cmp "$REPO/LICENSE" /usr/share/common-licenses/GPL-2
	# the sources' own word (the C and C++ files'), and no other license
	run -0 bash -c 'grep -rhoE --include="*.[ch]" --include="*.cpp" \
		"SPDX-License-Identifier: [^ */]+" "$1"/{engine,tests} | sort -u' _ "$REPO"
	assert_output 'SPDX-License-Identifier: GPL-2.0-only'
	# debian/copyright, DEP-5: the tree (Files: *) under GPL-2.0-only, whose
	# standalone paragraph points at the same text
	run -0 head -n 1 "$REPO/debian/copyright"
	assert_output 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/'
	run -0 awk -v RS= '$1 == "Files:" && $2 == "*"' "$REPO/debian/copyright"
	assert_line 'License: GPL-2.0-only'
	run -0 awk -v RS= '$1 == "License:" && $2 == "GPL-2.0-only" && !/Files:/' "$REPO/debian/copyright"
	assert_output --partial '/usr/share/common-licenses/GPL-2.'
	assert_output --partial 'version 2 as published'
	refute_output --partial 'any later version'
}

@test "make man: tswap-sweep(1) and tswap-zero(1) from --help, tswap(7) from docs/engine.md" {
	command -v help2man >/dev/null || skip "requires help2man (make deps)"
	command -v pandoc >/dev/null || skip "requires pandoc (make deps)"
	run -0 make -C "$REPO" --no-print-directory man
	run -0 man -l "$REPO/build/man/tswap-sweep.1"
	assert_line --regexp '^ +tswap-sweep - '
	assert_output --partial -- '--destructive'
	assert_output --partial -- '--ds-version'
	run -0 man -l "$REPO/build/man/tswap-zero.1"
	assert_line --regexp '^ +tswap-zero +- '
	assert_output --partial -- '--version'
	run -0 man -l "$REPO/build/man/tswap.7"
	assert_line --regexp '^ +tswap - fio ioengine'
	# every engine option is in the page
	local opt
	for opt in "${TSWAP_OPTIONS[@]}"; do
		assert_output --partial "$opt"
	done
	assert_output --partial '$jobname'
	# tswap(7)'s tables are definition lists: term, then HEADER: cell
	assert_line --regexp '^ +tswap_block_size$'
	assert_line --regexp '^ +default: 1M$'
}

@test "make man: no page has a groff warning (tswap(7)'s tables fit the page)" {
	command -v help2man >/dev/null || skip "requires help2man (make deps)"
	command -v pandoc >/dev/null || skip "requires pandoc (make deps)"
	command -v groff >/dev/null || skip "requires groff (man-db)"
	run -0 make -C "$REPO" --no-print-directory man
	local page
	for page in tswap-sweep.1 tswap-zero.1 tswap-check.1 tswap.7; do
		no_groff_warnings "$REPO/build/man/$page"
	done
}

@test "the packaged man pages, tswap(7) with its tables, have no groff warning" {
	command -v groff >/dev/null || skip "requires groff (man-db)"
	deb_build
	run -0 dpkg-deb -x "$DEB" "$SCRATCH/x"
	local -a pages=()
	mapfile -t pages < <(find "$SCRATCH/x/usr/share/man" -name '*.gz' | sort)
	[ "${#pages[@]}" -eq 4 ] || fail "expected 4 man pages in the package, found: ${pages[*]}"
	assert_file_exists "$SCRATCH/x/usr/share/man/man1/tswap-check.1.gz"
	assert_file_exists "$SCRATCH/x/usr/share/man/man7/tswap.7.gz"
	local gz
	for gz in "${pages[@]}"; do
		gunzip -k "$gz"
		no_groff_warnings "${gz%.gz}"
	done
	# the tables are in it, as definition lists
	run -0 env MANWIDTH=80 man -l "$SCRATCH/x/usr/share/man/man7/tswap.7"
	assert_line --regexp '^ +tswap_block_size$'
}

@test "mk/man-tables.lua: a table wider than the page gets no groff warning (it does without)" {
	command -v pandoc >/dev/null || skip "requires pandoc (make deps)"
	command -v groff >/dev/null || skip "requires groff (man-db)"
	local md=$SCRATCH/wide.md
	{
		printf '# NAME\n\nwide - a test page\n\n# TABLE\n\n'
		printf '| option | values | default | what DeepSpeed calls it |\n|---|---|---|---|\n'
		printf '| `tswap_sqpoll`, `tswap_sqpoll_idle` | `bool`, ms `0..2147483647` | off, 1000 | %s |\n' \
			'not a DeepSpeed setting: io_uring only, the kernel polls the submission queue from a thread of its own'
		printf '| `tswap_block_size` | %s | `1M` | `block_size` |\n' \
			'bytes, a multiple of the DIO offset alignment, at most MAX_RW_COUNT rounded down to it'
	} >"$md"
	run -0 pandoc -s -f markdown -t man -M title=WIDE -M section=7 -o "$SCRATCH/plain.7" "$md"
	run --separate-stderr env LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
		man --warnings -E UTF-8 -l -Tutf8 -Z "$SCRATCH/plain.7"
	[ -n "$stderr" ] || fail "the unfiltered wide table rendered without a warning: this test checks nothing"
	run -0 pandoc -s -f markdown -t man --lua-filter="$REPO/mk/man-tables.lua" \
		-M title=WIDE -M section=7 -o "$SCRATCH/filtered.7" "$md"
	no_groff_warnings "$SCRATCH/filtered.7"
	run -0 env MANWIDTH=80 man -l "$SCRATCH/filtered.7"
	assert_line --regexp '^ +tswap_sqpoll, tswap_sqpoll_idle$'
	assert_line --regexp '^ +values: bool, ms 0\.\.2147483647$'
	assert_line --regexp '^ +default: off, 1000$'
	assert_output --partial 'what DeepSpeed calls it: not a DeepSpeed setting'
}

@test "make: CPPFLAGS, CFLAGS, LDFLAGS come after the engine's own flags, which stay" {
	local fio_src=${FIO_SRC:-$REPO/build/fio-src}
	[ -f "$fio_src/config-host.h" ] || skip "requires a configured fio tree: make fio-src, or FIO_SRC=DIR"
	run -0 env -u CPPFLAGS -u CFLAGS -u LDFLAGS make -C "$REPO" --no-print-directory \
		BUILD="$SCRATCH/plain" FIO_SRC="$fio_src" V=1 "$SCRATCH/plain/tswap.so"
	assert_line --regexp "^\\+ .* -O2 -g -fPIC -Wall -Wextra -Werror .* -fvisibility=hidden -include [^ ]*/config-host.h .* -o $SCRATCH/plain/tswap.so "
	refute_output --partial 'fstack-protector-all'
	run -0 env -u CPPFLAGS -u CFLAGS -u LDFLAGS make -C "$REPO" --no-print-directory \
		BUILD="$SCRATCH/flags" FIO_SRC="$fio_src" V=1 CPPFLAGS=-D_FORTIFY_SOURCE=2 \
		CFLAGS='-O2 -fstack-protector-all' LDFLAGS='-Wl,-z,noexecstack -Wl,-soname,tswap-ldflags.so' \
		"$SCRATCH/flags/tswap.so"
	assert_line --regexp "^\\+ .* -O2 -g -fPIC -Wall -Wextra -Werror .* -fvisibility=hidden -include [^ ]*/config-host.h .* -D_FORTIFY_SOURCE=2 -O2 -fstack-protector-all .* -shared .* -Wl,-z,noexecstack -Wl,-soname,tswap-ldflags\\.so -o $SCRATCH/flags/tswap.so "
	# and they took effect: the stack protector and fortified calls, and
	# the linker's soname
	run -0 nm -D "$SCRATCH/flags/tswap.so"
	assert_output --partial '__stack_chk_fail'
	assert_output --regexp '__[a-z]*printf_chk'
	run -0 readelf -dW "$SCRATCH/flags/tswap.so"
	assert_line --regexp '\(SONAME\) +Library soname: \[tswap-ldflags\.so\]'
}

@test "make deb builds with the network off (unshare -n): fio's source comes in the source package" {
	deb_build
	assert_file_exists "$DEB"
	assert_file_exists "$DSC"
	# the source package: tswap's tarball and fio's as a second component
	local up=${DEB_TREE##*/tswap-}
	run -0 grep -E "^ [0-9a-f]{64} [0-9]+ tswap_$up\\.orig-fio\\.tar\\.xz$" "$DSC"
	run -0 grep -E "^ [0-9a-f]{64} [0-9]+ tswap_$up\\.orig\\.tar\\.xz$" "$DSC"
	run -0 grep -x 'Format: 3.0 (quilt)' "$DSC"
	# fio's Debian source, without what configure or a build wrote
	run -0 tar -tJf "$REPO/build/deb/tswap_$up.orig-fio.tar.xz"
	assert_line 'fio/debian/changelog'
	assert_line 'fio/ioengines.h'
	refute_line --regexp '(config-host\.(h|mak)|\.o|/\.pc/.*|\.tswap-debver)$'
	# the build configured and used fio/, nothing outside the tree
	run -0 grep -E -- '-include [^ ]*/debian/fio-build/config-host\.h ' "$DEB_LOG"
}

@test "the source package alone (.dsc) holds the tree the package was built from" {
	deb_build
	local src=$SCRATCH/src
	run -0 dpkg-source -x "$DSC" "$src"
	assert_file_exists "$src/fio/debian/changelog"
	assert_file_not_exists "$src/fio/config-host.h"
	# what make deb built from (under unshare -n, no FIO_SRC: debian/rules
	# configures fio/) is exactly what the .dsc unpacks to, so the .dsc
	# alone rebuilds it with the network off; a second package build here
	# would take minutes and prove no more
	run diff -r -q -x debian -x build -x .pc "$src" "$DEB_TREE"
	assert_success
	assert_output ''
	run diff -r -q "$src/debian" "$REPO/debian"
	assert_success
}

@test "the package build log shows dpkg-buildflags' flags on the engine's compile line" {
	deb_build
	local line var flag flags
	line=$(grep -E '^\+ .* -o build/tswap\.so ' "$DEB_LOG") ||
		fail "no compile line of build/tswap.so (V=1) in $DEB_LOG"
	for var in CPPFLAGS CFLAGS LDFLAGS; do
		# as debian/rules asks for them, in the tree the build ran in
		flags=$(cd "$DEB_TREE" && DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get "$var")
		[ -n "$flags" ] || fail "dpkg-buildflags --get $var is empty"
		for flag in $flags; do
			[[ " $line " == *" $flag "* ]] || fail "$var's $flag is not on the compile line: $line"
		done
	done
}

@test "the packaged tswap.so is hardened: RELRO, BIND_NOW, stack protector, FORTIFY" {
	command -v readelf >/dev/null || skip "requires readelf (binutils, make deps)"
	deb_build
	local so=$SCRATCH/x/usr/lib/fio/tswap.so
	run -0 dpkg-deb -x "$DEB" "$SCRATCH/x"
	assert_file_exists "$so"
	# -z relro: a read-only segment after relocation
	run -0 readelf -lW "$so"
	assert_line --regexp '^ +GNU_RELRO '
	assert_line --regexp '^ +GNU_STACK .* RW +0x'
	# -z now: every symbol bound at load, so all of the GOT is read-only
	run -0 readelf -dW "$so"
	assert_line --regexp '\(FLAGS\) +.*BIND_NOW'
	assert_line --regexp '\(FLAGS_1\) +Flags: .*NOW'
	refute_line --partial '(TEXTREL)'
	# -fstack-protector-strong and -D_FORTIFY_SOURCE=2 (CFLAGS, CPPFLAGS):
	# neither is on by default in Debian's gcc, only dpkg-buildflags adds them
	run -0 readelf --dyn-syms -W "$so"
	assert_output --partial ' __stack_chk_fail@'
	assert_output --regexp ' __(snprintf|fprintf|vsnprintf|realpath)_chk@'
}

@test "hardening-check (devscripts) passes on the packaged tswap.so" {
	command -v hardening-check >/dev/null || skip "requires hardening-check (devscripts, make deps)"
	deb_build
	local so=$SCRATCH/x/usr/lib/fio/tswap.so cflags
	local -a opts=()
	run -0 dpkg-deb -x "$DEB" "$SCRATCH/x"
	# control flow protection only where dpkg-buildflags asks for it
	# (-fcf-protection: dpkg >= 1.22 with hardening=+all; Debian 12's
	# dpkg 1.21 does not); a shared library is not PIE, which it ignores
	cflags=$(cd "$DEB_TREE" && DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CFLAGS)
	[[ " $cflags " == *" -fcf-protection "* ]] || opts+=(--nocfprotection)
	run hardening-check "${opts[@]}" "$so"
	[ "$status" -eq 0 ] || fail "hardening-check ${opts[*]} ($status): $output"
	assert_line --regexp '^ Stack protected: yes'
	assert_line --regexp '^ Fortify Source functions: yes'
	assert_line --regexp '^ Read-only relocations: yes'
	assert_line --regexp '^ Immediate binding: yes'
}

@test "the package: Built-Using names the fio source compiled in; its copyright is debian/copyright" {
	deb_build
	local fio_source fio_version copyright
	fio_source=$(dpkg-query -W -f='${source:Version}' fio)
	fio_version=$(dpkg-query -W -f='${Version}' fio)
	copyright=$(cat "$REPO/debian/copyright")
	run -0 dpkg-deb -f "$DEB" Built-Using
	assert_output "fio (= $fio_source)"
	run -0 dpkg-parsechangelog -l "$DEB_TREE/fio/debian/changelog" -S Version
	assert_output "$fio_source"
	run -0 dpkg-deb -f "$DEB" Depends
	assert_output --partial "fio (= $fio_version)"
	run -0 bash -c 'dpkg-deb --fsys-tarfile "$1" | tar -xO ./usr/share/doc/tswap/copyright' _ "$DEB"
	assert_output "$copyright"
}

@test "lintian: nothing on the .deb and the source package but documented overrides" {
	command -v lintian >/dev/null || skip "requires lintian (make deps)"
	deb_build
	run --separate-stderr timeout 600 lintian --info --pedantic \
		--fail-on error,warning,info,pedantic "$DEB" "$DSC"
	[ "$status" -eq 0 ] || fail "lintian ($status): $output $stderr"
	assert_output ''
	# the overrides are in the package, and each has its reason: every
	# paragraph of an overrides file opens with a comment
	run -0 dpkg-deb -c "$DEB"
	assert_output --partial './usr/share/lintian/overrides/tswap'
	local f line prev n=0
	for f in "$REPO/debian/tswap.lintian-overrides" "$REPO/debian/source/lintian-overrides"; do
		prev=
		while IFS= read -r line; do
			if [ -n "$line" ] && [ "${line:0:1}" != '#' ]; then
				[ -n "$prev" ] || fail "$f: override without a comment above it: $line"
				n=$((n + 1))
			fi
			prev=$line
		done <"$f"
	done
	[ "$n" -gt 0 ] || fail "no overrides read"
}

@test "dpkg_wait: waits while another process holds the dpkg lock" {
	requires root
	command -v python3 >/dev/null || skip "requires python3 (make deps) to hold the lock as apt does (fcntl)"
	local flag=$SCRATCH/locked
	# holds /var/lib/dpkg/lock-frontend as apt and dpkg do, for 3 s
	python3 -c '
import fcntl, os, sys, time
fd = os.open("/var/lib/dpkg/lock-frontend", os.O_RDWR | os.O_CREAT, 0o640)
fcntl.lockf(fd, fcntl.LOCK_EX)
open(sys.argv[1], "w").close()
time.sleep(3)
' "$flag" 3>&- &
	local holder=$!
	run -0 timeout 600 bash -c 'until [ -e "$1" ]; do sleep 0.1; done' _ "$flag"
	run dpkg_wait -P tswap-no-such-package
	wait "$holder"
	[ "$status" -eq 0 ] || fail "dpkg_wait failed ($status): $output"
	assert_output --partial 'dpkg_wait: the dpkg lock is held by another process; waiting'
	assert_output --partial "isn't installed"
}

@test "dpkg -i the package; the installed engine, sweep and man pages work; dpkg -P leaves nothing" {
	requires root
	if dpkg-query -W -f='${Status}' tswap 2>/dev/null | grep -q 'ok installed'; then
		skip "a tswap package is already installed on this machine: not replacing it"
	fi
	deb_build
	local deb=$DEB
	assert_file_exists "$deb"

	# Depends on exactly the fio it was built against.
	run -0 dpkg-deb -f "$deb" Depends
	assert_output --partial "fio (= $(dpkg-query -W -f='${Version}' fio))"

	# Paths the package will own, and whether each existed before.
	local -a paths=() preexisting=()
	mapfile -t paths < <(dpkg-deb -c "$deb" | awk '{ print substr($6, 2) }' | sed 's:/$::' | grep .)
	local p
	for p in "${paths[@]}"; do
		[ -e "$p" ] || [ -L "$p" ] && preexisting+=("$p")
	done

	DEB_INSTALLED=1
	run -0 dpkg_wait -i "$deb"
	assert_file_exists /usr/lib/fio/tswap.so
	assert_link_exists /usr/lib/fio/fio-tswap.so
	run -0 timeout 60 fio --enghelp=/usr/lib/fio/tswap.so
	assert_output --partial tswap_block_size
	run -0 man -w tswap-sweep
	run -0 man -w tswap-zero
	assert_file_executable /usr/bin/tswap-zero
	# tswap-zero plans from the installed paths only: the Python package
	# under /usr/share/tswap, shared with tswap-sweep.
	run -0 env -u TSWAP_ENGINE PATH=/usr/bin:/bin timeout 60 tswap-zero \
		--ds-config /usr/share/tswap/jobs/ds_config.zero-infinity-defaults.json \
		--params 7e9 --ranks 8 --scale 1024 --target "$SCRATCH" --dry-run \
		--out "$SCRATCH/zero"
	assert_file_exists "$SCRATCH/zero/plan.json"
	run -2 env -u TSWAP_ENGINE PATH=/usr/bin:/bin tswap-zero --bogus
	assert_output 'tswap-zero: --bogus: unknown option (see --help)'
	run -0 man -w 7 tswap
	assert_file_exists /usr/share/tswap/grids/quick.grid

	# A tiny sweep from the installed paths only (no checkout on PATH or
	# in the environment).
	local rd=$SCRATCH/run
	run env -u TSWAP_ENGINE PATH=/usr/bin:/bin timeout 300 tswap-sweep --grid quick --rw read --repeat 1 \
		--backend libaio --tensor-size 4m --size 32m --io-size 8m --no-ceiling \
		--target "$SCRATCH/t.swap" --out "$rd"
	[ "$status" -eq 0 ] || fail "installed tswap-sweep failed ($status): $output"
	assert_file_exists "$rd/report.md"
	run -0 jq -e '[.points[] | select(.status == "ok")] | length > 0' "$rd/aggregate.json"

	run -0 dpkg_wait -P tswap
	DEB_INSTALLED=
	for p in "${paths[@]}"; do
		local was=0 q
		for q in "${preexisting[@]}"; do [ "$q" = "$p" ] && was=1; done
		if [ "$was" = 0 ] && { [ -e "$p" ] || [ -L "$p" ]; }; then
			fail "left behind after dpkg -P: $p"
		fi
	done
}
