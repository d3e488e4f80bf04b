#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $output, $status
#
# The Debian package (make deb, debian/) and the man pages (make man): the
# package installs the engine, the job library, tswap-sweep and the man
# pages in their FHS places, depends on exactly the fio it was built
# against, works from the installed paths alone, and leaves nothing behind
# when purged.

load helpers

setup() { common_setup; }
teardown() {
	# A failed test must not leave the package installed.
	if [ -n "${DEB_INSTALLED:-}" ]; then
		dpkg -P tswap >/dev/null 2>&1 || true
	fi
	common_teardown
}

tswap_version() {
	sed -n 's/^TSWAP_VERSION := //p' "$REPO/Makefile"
}

@test "debian/changelog's version is the Makefile's TSWAP_VERSION" {
	local v
	v=$(tswap_version)
	[ -n "$v" ] || fail "no TSWAP_VERSION in the Makefile"
	run -0 dpkg-parsechangelog -l "$REPO/debian/changelog" -S Version
	assert_output "$v-1"
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
}

@test "make deb; dpkg -i; the installed engine, sweep and man pages work; dpkg -P leaves nothing" {
	requires root
	command -v dpkg-buildpackage >/dev/null || skip "requires dpkg-dev and debhelper (make deps)"
	if dpkg-query -W -f='${Status}' tswap 2>/dev/null | grep -q 'ok installed'; then
		skip "a tswap package is already installed on this machine: not replacing it"
	fi
	run -0 timeout 600 make -C "$REPO" --no-print-directory deb
	local deb
	deb=$(find "$REPO/build/deb" -maxdepth 1 -name "tswap_$(tswap_version)-1_*.deb" | head -n 1)
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
	run -0 dpkg -i "$deb"
	assert_file_exists /usr/lib/fio/tswap.so
	assert_link_exists /usr/lib/fio/fio-tswap.so
	run -0 timeout 60 fio --enghelp=/usr/lib/fio/tswap.so
	assert_output --partial tswap_block_size
	run -0 man -w tswap-sweep
	run -0 man -w tswap-zero
	assert_file_executable /usr/bin/tswap-zero
	# tswap-zero plans from the installed paths only: its modules and
	# sweep/lib/util.sh, which it shares with tswap-sweep.
	run -0 env -u TSWAP_ENGINE PATH=/usr/bin:/bin timeout 60 tswap-zero \
		--ds-config /usr/share/tswap/jobs/ds_config.zero-infinity-defaults.json \
		--params 7e9 --ranks 2 --scale 1024 --target "$SCRATCH" --dry-run \
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

	run -0 dpkg -P tswap
	DEB_INSTALLED=
	for p in "${paths[@]}"; do
		local was=0 q
		for q in "${preexisting[@]}"; do [ "$q" = "$p" ] && was=1; done
		if [ "$was" = 0 ] && { [ -e "$p" ] || [ -L "$p" ]; }; then
			fail "left behind after dpkg -P: $p"
		fi
	done
}
