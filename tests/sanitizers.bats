#!/usr/bin/env bats
# shellcheck disable=SC2154  # bats sets $output, $status
#
# The CI subset of the sanitizer and valgrind runs (docs/reliability.md):
# the ASan+UBSan engine on verified jobs over both backends, windows and
# thread counts; the scheduler's unit tests under ThreadSanitizer; memcheck
# on one small job per backend. The full sets are `make check-asan`,
# `make check-tsan`, `make check-valgrind` (tests/sanitize).

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

SANITIZE=$REPO/tests/sanitize

# sanitize MODE - run tests/sanitize MODE; fail with its output unless clean.
sanitize() {
	run timeout -k 10 900 bash "$SANITIZE" "$1"
	if [ "$status" -ne 0 ] || [ "${lines[${#lines[@]} - 1]}" != "sanitize $1: clean" ]; then
		printf '%s\n' "$output" | clip >&2
		fail "tests/sanitize $1: not clean (exit $status)"
	fi
	printf '%s\n' "$output" | grep '^#' >&3 || true
}

@test "sanitizers: the ASan+UBSan engine in the distribution's fio: verified jobs, both backends, windows, 1 and 4 threads, no report" {
	if [ ! -f "$REPO/build/asan/tswap.so" ]; then
		skip "requires build/asan/tswap.so (make build/asan/tswap.so)"
	fi
	sanitize asan-quick
}

@test "sanitizers: the scheduler's unit tests under ThreadSanitizer: no race" {
	if [ ! -x "$REPO/build/tsan/test_sched" ]; then
		skip "requires build/tsan/test_sched (make check-tsan)"
	fi
	sanitize tsan
}

@test "sanitizers: valgrind memcheck, a verified job per backend: no invalid access, no definite leak" {
	if ! command -v valgrind >/dev/null; then
		skip "requires valgrind (make deps)"
	fi
	sanitize valgrind-quick
}
