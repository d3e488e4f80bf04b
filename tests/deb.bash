# shellcheck shell=bash
# Variables set here are used by tests/deb.bats; status/output are bats'.
# shellcheck disable=SC2034,SC2154
#
# tests/deb.bash - the Debian package's test helpers (loaded by deb.bats):
#
#   deb_version        debian/changelog's version (0.1.0-2)
#   deb_build          `make deb` with the network off, once per bats run
#                      of deb.bats; sets DEB, DSC, DEB_LOG, DEB_TREE
#   dpkg_wait ARGS...  dpkg ARGS, waiting while another dpkg or apt holds
#                      the dpkg lock

deb_version() {
	dpkg-parsechangelog -l "$REPO/debian/changelog" -S Version
}

# deb_build - `make deb` in a network namespace of its own (unshare -n:
# the loopback device only), once per run of deb.bats (the result is kept
# in $BATS_FILE_TMPDIR); the build dependencies and fio's source are
# fetched before, with the network (`make deps fio-src`), as a user
# prepares a build. Sets DEB (build/deb/tswap_VERSION_ARCH.deb), DSC (the
# source package), DEB_LOG (dpkg-buildpackage's output) and DEB_TREE (the
# tree it built in). Skips when root, dpkg-dev or unshare -n is missing;
# fails the test with the build's last lines when the build failed.
deb_build() {
	requires root
	command -v dpkg-buildpackage >/dev/null || skip "requires dpkg-dev and debhelper (make deps)"
	command -v unshare >/dev/null || skip "requires unshare (util-linux)"
	unshare -n true 2>/dev/null || skip "unshare -n (a network namespace) is not permitted here"
	local st=$BATS_FILE_TMPDIR/deb-build rc=0
	if [ ! -f "$st.status" ]; then
		run make -C "$REPO" --no-print-directory deps fio-src
		[ "$status" -eq 0 ] || fail "make deps fio-src failed ($status): $output"
		# shellcheck disable=SC2016  # $1 is expanded by the inner bash
		unshare -n bash -c '
			[ "$(grep -c : /proc/net/dev)" -eq 1 ] && grep -q "^ *lo:" /proc/net/dev ||
				{ echo "deb_build: the namespace has a network device besides lo" >&2; exit 99; }
			echo "deb_build: network devices: lo only"
			exec timeout 1800 make -C "$1" --no-print-directory deb' _ "$REPO" \
			>"$st.out" 2>&1 || rc=$?
		echo "$rc" >"$st.status"
	fi
	rc=$(cat "$st.status")
	[ "$rc" -eq 0 ] || fail "make deb under unshare -n failed ($rc): see $st.out"
	grep -qx 'deb_build: network devices: lo only' "$st.out" ||
		fail "the build did not run in a network namespace with lo only"
	local v arch
	v=$(deb_version)
	arch=$(dpkg-architecture -qDEB_HOST_ARCH 2>/dev/null)
	DEB=$REPO/build/deb/tswap_${v}_$arch.deb
	DSC=$REPO/build/deb/tswap_$v.dsc
	DEB_LOG=$REPO/build/deb/tswap_${v}_$arch.build
	DEB_TREE=$REPO/build/deb/tswap-${v%-*}
}

# dpkg_wait ARGS... - dpkg ARGS; while another dpkg or apt holds the dpkg
# lock (dpkg then stops at once, before any change, with "... lock was
# locked by another process"), says so on stderr once and retries every
# 2 s, for up to 600 s. flock(1) cannot wait for it: dpkg and apt lock
# /var/lib/dpkg/lock-frontend with fcntl(2), which flock(2) does not see.
# Prints dpkg's output (LC_ALL=C, so the message can be matched); returns
# dpkg's status.
dpkg_wait() {
	local deadline=$((SECONDS + 600)) out rc said=
	while :; do
		rc=0
		out=$(LC_ALL=C dpkg "$@" 2>&1) || rc=$?
		if [ "$rc" -ne 0 ] && grep -q 'lock was locked by another process' <<<"$out" &&
			[ "$SECONDS" -lt "$deadline" ]; then
			[ -n "$said" ] || echo "dpkg_wait: the dpkg lock is held by another process; waiting" >&2
			said=1
			sleep 2
			continue
		fi
		printf '%s\n' "$out"
		return "$rc"
	done
}
