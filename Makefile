# tswap - fio external ioengine for AI tensor swapping to NVMe.
#
#   make            build build/tswap.so against the installed fio's source
#   make deps       install the Debian packages the project needs (root), or
#                   print the apt-get line to run
#   make run        the main job: a short tswap run on a scratch file
#   make check      C unit tests + bats integration tests (README, .ci/run)
#   make install    PREFIX=/usr/local: engine, job library, sweep script (its
#                   modules and Python package in
#                   PREFIX/share/tswap/{lib,tswap}),
#                   tswap-zero, tswap-check, man pages
#   make uninstall
#   make man        build/man/tswap-sweep.1, tswap-zero.1, tswap-check.1, tswap.7 (help2man,
#                   pandoc)
#   make deb        build/deb/tswap_VERSION_ARCH.deb and its source package
#                   (debhelper; debian/; fio's source in it: no network)
#
# Variables: FIO_SRC=DIR (a configured fio tree of the installed fio's
# version; default: fetched with `apt-get source` into build/), PREFIX,
# DESTDIR, CC, CPPFLAGS/CFLAGS/LDFLAGS (added to the engine's own), V=1,
# TSWAP_TARGET (scratch target of `make run`).

SHELL := /bin/bash
.DEFAULT_GOAL := all

PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
BUILD := build
TSWAP_VERSION := 0.1.0

# Everything the project uses, from Debian's archive.
DEB_PKGS := fio libaio-dev liburing-dev libcmocka-dev pkg-config dpkg-dev \
	bats bats-assert bats-support bats-file jq strace gnuplot-nox \
	shellcheck util-linux e2fsprogs procps kmod file libfuse3-dev dmsetup valgrind \
	linux-perf libxml2-utils help2man pandoc debhelper lintian devscripts g++ curl attr python3 \
	python3-pytest pyflakes3
# make bench-deepspeed only (deps-bench-deepspeed): DeepSpeed's async_io op
# through Debian's torch (libtorch-dev: torch's C++ headers; pybind11-dev;
# ninja-build: cpp_extension's JIT build; python3-cpuinfo: DeepSpeed's
# op_builder picks -march with it).
DS_BENCH_PKGS := python3-torch libtorch-dev pybind11-dev ninja-build python3-cpuinfo \
	python3-psutil

# --- fio source -----------------------------------------------------------
ifeq ($(FIO_SRC),)
FIO_SRC := $(BUILD)/fio-src
FIO_SRC_AUTO := 1
endif
FIO_CONFIG := $(FIO_SRC)/config-host.h

# --- engine ---------------------------------------------------------------
ENGINE_SRCS := engine/tswap.c engine/options.c engine/target.c engine/pin.c engine/alloc.c \
	engine/reopen.c engine/bounce.c engine/fill.c engine/statspath.c engine/plan.c engine/sched.c \
	engine/stats.c engine/be_libaio.c engine/be_uring.c
ENGINE_HDRS := $(wildcard engine/*.h)
CORE_SRCS := engine/plan.c engine/sched.c engine/stats.c

WARN := -Wall -Wextra -Werror
BASE_CFLAGS := -std=gnu11 -O2 -g -fPIC $(WARN) -D_GNU_SOURCE \
	-D_LARGEFILE_SOURCE -D_FILE_OFFSET_BITS=64
ENGINE_CFLAGS := $(BASE_CFLAGS) -fvisibility=hidden \
	-include $(FIO_CONFIG) -isystem $(FIO_SRC) \
	-DTSWAP_VERSION='"$(TSWAP_VERSION)"'
ENGINE_LDFLAGS := -shared -Wl,--version-script=engine/tswap.map \
	-Wl,-z,now -Wl,-z,relro
ENGINE_LIBS := -laio -luring -lpthread
# CPPFLAGS, CFLAGS and LDFLAGS (command line or environment; the package
# build passes dpkg-buildflags') are added after the flags above, never in
# place of them: hardening and -O levels apply, -fPIC, -fvisibility=hidden
# and -include config-host.h stay. V=1 prints the engine's compile line.

fio_version = $(shell cd $(FIO_SRC) 2>/dev/null && ./FIO-VERSION-GEN >/dev/null 2>&1; \
	sed -n 's/^FIO_VERSION = //p' FIO-VERSION-FILE 2>/dev/null)

.PHONY: check-asan check-tsan check-valgrind check-sanitizers
.PHONY: all deps fio-src run check check-unit check-bats install uninstall jobs-zero \
	clean distclean lint jobs sweep bench bench-deepspeed bench-sweep man deb \
	deps-bench-deepspeed

all: $(BUILD)/tswap.so $(BUILD)/pyc.stamp

# The Python package's bytecode (sweep/tswap/*/__pycache__/, ignored by
# git), by the python3 the tools run (/usr/bin/python3 first, as
# sweep/tswap-sweep): the tools start it with -B, which writes nothing at
# run time, so without this every start compiles the package's modules
# again (about 30 ms of each start). A module edited since is compiled
# again in memory (the bytecode records its source's mtime and size).
PYTHON3 := $(firstword $(wildcard /usr/bin/python3) python3)
PY_SRCS := $(wildcard sweep/tswap/*.py sweep/tswap/*/*.py)
# PYCOMPILE=0: make install leaves the bytecode out (debian/rules: Debian
# policy 3.7, the package ships none)
PYCOMPILE ?= 1
$(BUILD)/pyc.stamp: $(PY_SRCS)
	@mkdir -p $(BUILD)
	@echo "  PY  sweep/tswap (bytecode)"
	@$(PYTHON3) -m compileall -q sweep/tswap >/dev/null
	@touch $@

ifdef FIO_SRC_AUTO
$(FIO_CONFIG): mk/fio-src.sh
	@bash mk/fio-src.sh $(BUILD)
fio-src: $(FIO_CONFIG)
else
$(FIO_CONFIG):
	@echo "FIO_SRC=$(FIO_SRC) is not a configured fio tree: run ./configure --disable-native in it" >&2; exit 1
fio-src:
endif

$(BUILD)/tswap.so: $(ENGINE_SRCS) $(ENGINE_HDRS) engine/tswap.map $(FIO_CONFIG)
	@mkdir -p $(BUILD)
	@v='$(fio_version)'; [ -n "$$v" ] || { echo "cannot read the fio version of $(FIO_SRC)" >&2; exit 1; }; \
	echo "  CC  $@ (for $$v)"; \
	$(if $(filter 1,$(V)),set -x;) $(CC) $(ENGINE_CFLAGS) $(CPPFLAGS) $(CFLAGS) -DTSWAP_FIO_VERSION="\"$$v\"" \
		$(ENGINE_LDFLAGS) $(LDFLAGS) -o $@ $(ENGINE_SRCS) $(ENGINE_LIBS)

# An engine that claims another fio version: only for the version-check test.
$(BUILD)/tswap-wrongver.so: $(ENGINE_SRCS) $(ENGINE_HDRS) engine/tswap.map $(FIO_CONFIG)
	@mkdir -p $(BUILD)
	$(CC) $(ENGINE_CFLAGS) $(CPPFLAGS) $(CFLAGS) -DTSWAP_FIO_VERSION='"fio-0.0-test"' \
		$(ENGINE_LDFLAGS) $(LDFLAGS) -o $@ $(ENGINE_SRCS) $(ENGINE_LIBS)

# --- dependencies ---------------------------------------------------------
# install_pkgs: install the packages of $(1) that are missing when root
# (waiting up to 600 s for the dpkg lock another apt or dpkg holds);
# otherwise print the line to run and fail.
define install_pkgs
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' "$$p" 2>/dev/null | grep -q '^install ok installed' || echo "$$p"; \
	done | xargs); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" -ne 0 ]; then \
		echo "make $@: missing Debian packages; run as root:" >&2; \
		echo "  apt-get update && apt-get install -y $$missing" >&2; exit 1; \
	fi; \
	echo "make $@: installing $$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get -o DPkg::Lock::Timeout=600 update -qq && \
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $$missing >/dev/null
endef

# Installs what is missing when root; otherwise prints the line to run.
deps:
	$(call install_pkgs,$(DEB_PKGS))

# Only make bench-deepspeed's Python side needs these (DeepSpeed's async_io
# op JIT-built through torch.utils.cpp_extension, as DeepSpeed's
# AsyncIOBuilder does): python3-torch is large, so neither make deps nor
# make check (CI) installs them.
deps-bench-deepspeed: deps
	$(call install_pkgs,$(DS_BENCH_PKGS))

# --- the main job -----------------------------------------------------------
TSWAP_TARGET ?= $(BUILD)/scratch/tswap.swap
run: deps
	@$(MAKE) --no-print-directory all
	@mk/scratch-target.sh "$(TSWAP_TARGET)"
	fio --ioengine=external:$(CURDIR)/$(BUILD)/tswap.so \
		--filename="$(TSWAP_TARGET)" --direct=1 --size=256m --bs=16m \
		--iodepth=2 --tswap_block_size=1m --tswap_queue_depth=8 \
		--tswap_submit=block --tswap_window=overlap --tswap_threads=2 \
		--name=swap-out --rw=write --name=swap-in --stonewall --rw=read

# --- job-library grid and the sweep -----------------------------------------
# `make jobs` regenerates jobs/grid/GRID-{read,write}.fio from sweep/grids/.
# and jobs/zero-infinity-step-{7b,70b}.fio (tswap-zero, DeepSpeed's default
# offload settings, 8 ranks, tensors scaled down to fit a scratch folder;
# 70b in 1e8-element tensors: with 5e7 DeepSpeed's default
# offload_param.buffer_count 5 cannot hold the 10 kept for backward).
# `make jobs-zero ZERO_JOBS=DIR` writes the two ZeRO profiles into DIR
# (tests/sweep.bats compares them with jobs/).
GRIDS := quick deepspeed deepspeed-0.17 deepspeed-full full
ZERO_JOBS := jobs
jobs: jobs-zero
	@rm -f jobs/grid/*.fio
	@for g in $(GRIDS); do sweep/tswap-sweep --grid "$$g" --emit-jobs jobs/grid || exit 1; done

jobs-zero:
	@rm -rf $(BUILD)/zero/jobs-7b $(BUILD)/zero/jobs-70b
	sweep/tswap-zero --ds-config jobs/ds_config.zero-infinity-defaults.json --params 7e9 --ranks 8 \
		--scale 128 --emit-jobs $(ZERO_JOBS)/zero-infinity-step-7b.fio --out $(BUILD)/zero/jobs-7b >/dev/null
	sweep/tswap-zero --ds-config jobs/ds_config.zero-infinity-defaults.json --params 70e9 --ranks 8 \
		--param-numel 1e8 --scale 1024 --emit-jobs $(ZERO_JOBS)/zero-infinity-step-70b.fio \
		--out $(BUILD)/zero/jobs-70b >/dev/null

# The quick grid on the scratch target: report, summary.csv, best-aio.json
# and plots in build/sweep/latest/. More options: make sweep SWEEP_ARGS='...'.
sweep: deps
	@$(MAKE) --no-print-directory all
	sweep/tswap-sweep --target "$(TSWAP_TARGET)" $(SWEEP_ARGS)

# tswap against fio's own libaio/io_uring engines (docs/performance.md): the
# table on stdout, results.{md,json} in build/bench/latest/. Scale with
# BENCH_RUNS, BENCH_RUNTIME, BENCH_TARGETS, BENCH_ROWS; BENCH_ARGS='...' for
# other options (tests/bench/tswap-bench --help).
bench: deps
	@$(MAKE) --no-print-directory all
	tests/bench/tswap-bench $(BENCH_ARGS)

# tswap beside DeepSpeed's own AIO handle (docs/performance.md): DeepSpeed's
# unmodified csrc/aio built with tests/bench/ds-driver, from
# DEEPSPEED_SRC=DIR or the pinned v0.16.4 release downloaded from GitHub;
# results.{md,json} in build/bench-ds/latest/. Options in BENCH_DS_ARGS
# (tests/bench/tswap-bench-deepspeed --help).
bench-deepspeed: deps-bench-deepspeed
	@$(MAKE) --no-print-directory all
	tests/bench/tswap-bench-deepspeed $(BENCH_DS_ARGS)

# The sweep's --budget against its exhaustive run (docs/performance.md,
# "Budget against exhaustive"; tests/bench/tswap-bench-sweep --help):
# about 25 minutes with BENCH_SWEEP_OPTS="--rows deepspeed".
bench-sweep: deps
	@$(MAKE) --no-print-directory all
	tests/bench/tswap-bench-sweep $(BENCH_SWEEP_OPTS)

# --- tests ----------------------------------------------------------------
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(wildcard tests/unit/test_*.c))
UNIT_CFLAGS := $(BASE_CFLAGS) -iquote engine -fsanitize=undefined -fno-sanitize-recover
UNIT_SUPPORT := $(wildcard tests/unit/fake_backend.c)

$(BUILD)/unit/%: tests/unit/%.c $(CORE_SRCS) $(ENGINE_HDRS) $(UNIT_SUPPORT) $(wildcard tests/unit/*.h)
	@mkdir -p $(BUILD)/unit
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(CORE_SRCS) $(UNIT_SUPPORT) -lcmocka -lpthread

# The io_uring backend on real rings (not over the fake backend).
UNIT_TESTS += $(BUILD)/unit/test_be_uring
$(BUILD)/unit/test_be_uring: tests/unit/be_uring_test.c engine/be_uring.c engine/backend.h
	@mkdir -p $(BUILD)/unit
	$(CC) $(UNIT_CFLAGS) -o $@ $< engine/be_uring.c -lcmocka -luring

# Fault-injection test tools (tests/tools/, used by tests/faults-device.bats
# and tests/faults-sys.bats).
TEST_TOOLS := $(BUILD)/tools/faultfs $(BUILD)/tools/shim.so
$(BUILD)/tools/faultfs: tests/tools/faultfs.c
	@mkdir -p $(BUILD)/tools
	$(CC) $(BASE_CFLAGS) $$(pkg-config --cflags fuse3) -o $@ $< $$(pkg-config --libs fuse3)
$(BUILD)/tools/shim.so: tests/tools/shim.c
	@mkdir -p $(BUILD)/tools
	$(CC) $(BASE_CFLAGS) -shared -o $@ $< -ldl -Wl,--no-as-needed -laio -luring
# A measuring tool (docs/performance.md, the disk gap): not a test dependency.
$(BUILD)/tools/pagemap-runs: tests/tools/pagemap-runs.c
	@mkdir -p $(BUILD)/tools
	$(CC) $(BASE_CFLAGS) -o $@ $<

# The builds in parallel, one job a CPU (36 s to 18 s on 2 cores).
check: deps
	@$(MAKE) --no-print-directory -j"$$(nproc)" all $(BUILD)/tswap-wrongver.so $(UNIT_TESTS) $(TEST_TOOLS) \
		$(SANITIZE_BUILDS)
	@bash tests/run-all

check-unit: $(UNIT_TESTS)
	@bash tests/run-all --unit-only

check-bats: all $(BUILD)/tswap-wrongver.so $(TEST_TOOLS)
	@bash tests/run-all --bats-only

# --- sanitizers and valgrind (docs/reliability.md, tests/sanitize) ------------
# make check runs a subset (tests/sanitizers.bats); these run the full sets.
ASAN_FLAGS := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
$(BUILD)/asan/tswap.so: $(ENGINE_SRCS) $(ENGINE_HDRS) engine/tswap.map $(FIO_CONFIG)
	@mkdir -p $(BUILD)/asan
	$(CC) $(ENGINE_CFLAGS) $(ASAN_FLAGS) -DTSWAP_FIO_VERSION='"$(fio_version)"' \
		$(ENGINE_LDFLAGS) -o $@ $(ENGINE_SRCS) $(ENGINE_LIBS)
TSAN_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tsan/%,$(wildcard tests/unit/test_*.c))
$(BUILD)/tsan/%: tests/unit/%.c $(CORE_SRCS) $(ENGINE_HDRS) $(UNIT_SUPPORT) $(wildcard tests/unit/*.h)
	@mkdir -p $(BUILD)/tsan
	$(CC) $(BASE_CFLAGS) -O1 -iquote engine -fsanitize=thread -fno-omit-frame-pointer \
		-o $@ $< $(CORE_SRCS) $(UNIT_SUPPORT) -lcmocka -lpthread
SANITIZE_BUILDS := $(BUILD)/asan/tswap.so $(TSAN_TESTS)

check-asan: all $(BUILD)/asan/tswap.so $(BUILD)/tswap-wrongver.so $(TEST_TOOLS)
	@bash tests/sanitize asan
check-tsan: $(TSAN_TESTS)
	@bash tests/sanitize tsan
check-valgrind: all
	@bash tests/sanitize valgrind
check-sanitizers: check-asan check-tsan check-valgrind

# Every shell script (the sweep is the Python package but its entry and
# the collector it ships to fleet hosts, sweep/lib/meta-collect.sh).
lint:
	shellcheck -x mk/*.sh tests/run-all tests/sanitize .ci/run tests/drive/refdrive $(wildcard sweep/tswap-sweep sweep/*.sh tests/bench/tswap-bench tests/bench/lib/*.bash tests/bench/tswap-bench-deepspeed tests/bench/tswap-bench-sweep tests/bench/fastpersist-compare tests/bench/fastpersist-ratio jobs/fastpersist-plan tests/*.bash)
	shellcheck -x -o all sweep/tswap-check sweep/tswap-zero jobs/run-grid sweep/lib/meta-collect.sh
	shellcheck -x -P SCRIPTDIR tests/*.bats
	pyflakes3 sweep/tswap tests/py tests/bench/ds-driver/fastpersist_driver.py tests/bench/ds-driver/fastpersist_pages.py tests/bench/ds-driver/memwarm.py tests/bench/sweep-overhead

# --- man pages ------------------------------------------------------------
# One source each, so they cannot drift: tswap-sweep(1) and tswap-zero(1)
# are their --help (help2man), tswap(7) is docs/engine.md (pandoc).
# The pages' date: SOURCE_DATE_EPOCH's (the package build: the changelog's),
# else the last commit's.
MAN_DATE := $(shell { [ -n "$$SOURCE_DATE_EPOCH" ] && date -u -d "@$$SOURCE_DATE_EPOCH" +%F; } || \
	git log -1 --format=%cs 2>/dev/null || date -u +%F)
man: $(BUILD)/man/tswap-sweep.1 $(BUILD)/man/tswap-zero.1 $(BUILD)/man/tswap-check.1 $(BUILD)/man/tswap.7
HELP2MAN := help2man --no-info --no-discard-stderr --version-string='$(TSWAP_VERSION)'
$(BUILD)/man/tswap-sweep.1: sweep/tswap-sweep sweep/tswap/cli/sweep_args.py
	@mkdir -p $(BUILD)/man
	$(HELP2MAN) --name='find the best DeepSpeed aio settings for a drive with fio and tswap' \
		--output=$@ sweep/tswap-sweep
$(BUILD)/man/tswap-zero.1: sweep/tswap-zero sweep/tswap/cli/zero_args.py
	@mkdir -p $(BUILD)/man
	$(HELP2MAN) --name='plan and replay one ZeRO-Infinity training step from a ds_config' \
		--output=$@ sweep/tswap-zero
$(BUILD)/man/tswap-check.1: sweep/tswap-check sweep/tswap/cli/check_main.py
	@mkdir -p $(BUILD)/man
	$(HELP2MAN) --name='check a host storage stack for DeepSpeed NVMe tensor swapping' \
		--output=$@ sweep/tswap-check
# Tables become definition lists (mk/man-tables.lua): a table wider than
# the page is a groff warning, and engine.md's tables are.
$(BUILD)/man/tswap.7: docs/engine.md mk/man-tables.lua
	@mkdir -p $(BUILD)/man
	{ printf '# NAME\n\ntswap - fio ioengine for AI tensor swapping to NVMe (DeepSpeed aio)\n\n'; \
	  sed '1{/^# /d}' docs/engine.md; } | pandoc -s -f markdown -t man --lua-filter=mk/man-tables.lua \
		-M title=TSWAP -M section=7 \
		-M date=$(MAN_DATE) -M header='tswap engine' -M footer='tswap $(TSWAP_VERSION)' -o $@

# --- Debian package ---------------------------------------------------------
# build/deb/tswap_VERSION_ARCH.deb and its source package (format 3.0
# (quilt): tswap's tarball plus fio's source as a second component, from
# FIO_SRC, mk/deb-source.sh), built with debhelper (debian/) with no network:
# debian/rules builds the engine against fio/ with dpkg-buildflags' flags.
# The package depends on exactly the installed fio (Built-Using: its source).
# The build log is build/deb/tswap_VERSION_ARCH.build.
DEB_DIR := $(BUILD)/deb
DEB_LOG = $(DEB_DIR)/tswap_$(shell dpkg-parsechangelog -S Version)_$(shell dpkg-architecture -qDEB_HOST_ARCH 2>/dev/null).build
deb: deps $(FIO_CONFIG)
	@rm -rf $(DEB_DIR)
	@set -o pipefail; tree=$$(bash mk/deb-source.sh $(TSWAP_VERSION) $(FIO_SRC) $(DEB_DIR)) && \
	echo "  DEB $$tree (log: $(DEB_LOG))" && \
	(cd "$$tree" && dpkg-buildpackage -us -uc -sa) 2>&1 | tee $(DEB_LOG) >&2
	@ls $(DEB_DIR)/*.deb

# --- install --------------------------------------------------------------
install: all man
	install -D -m 0755 $(BUILD)/tswap.so $(DESTDIR)$(PREFIX)/lib/fio/tswap.so
	ln -sf tswap.so $(DESTDIR)$(PREFIX)/lib/fio/fio-tswap.so
	@if [ -d jobs ]; then \
		find jobs -name '*.fio' -print0 | while IFS= read -r -d '' f; do \
			install -D -m 0644 "$$f" "$(DESTDIR)$(PREFIX)/share/tswap/$$f"; done; fi
	install -D -m 0644 jobs/env.sh $(DESTDIR)$(PREFIX)/share/tswap/jobs/env.sh
	install -D -m 0755 jobs/run-grid $(DESTDIR)$(PREFIX)/share/tswap/jobs/run-grid
	install -D -m 0755 jobs/fastpersist-plan $(DESTDIR)$(PREFIX)/share/tswap/jobs/fastpersist-plan
	# tswap-sweep --version reads it when installed (no Makefile, no git)
	printf '%s\n' '$(TSWAP_VERSION)' >$(BUILD)/VERSION
	install -D -m 0644 $(BUILD)/VERSION $(DESTDIR)$(PREFIX)/share/tswap/VERSION
	@for f in sweep/grids/*.grid; do \
		install -D -m 0644 "$$f" "$(DESTDIR)$(PREFIX)/share/tswap/grids/$${f##*/}"; done
	@for f in sweep/lib/meta-collect.sh sweep/tswap/*.py sweep/tswap/*/*.py; do \
		install -D -m 0644 "$$f" "$(DESTDIR)$(PREFIX)/share/tswap/$${f#sweep/}"; done
	@if [ "$(PYCOMPILE)" = 1 ]; then set -x; \
		$(PYTHON3) -m compileall -q -d $(PREFIX)/share/tswap/tswap $(DESTDIR)$(PREFIX)/share/tswap/tswap >/dev/null; fi
	install -D -m 0755 sweep/tswap-sweep $(DESTDIR)$(PREFIX)/bin/tswap-sweep
	install -D -m 0755 sweep/tswap-zero $(DESTDIR)$(PREFIX)/bin/tswap-zero
	install -D -m 0755 sweep/tswap-check $(DESTDIR)$(PREFIX)/bin/tswap-check
	install -D -m 0644 jobs/ds_config.example.json $(DESTDIR)$(PREFIX)/share/tswap/jobs/ds_config.example.json
	install -D -m 0644 jobs/ds_config.zero-infinity-defaults.json $(DESTDIR)$(PREFIX)/share/tswap/jobs/ds_config.zero-infinity-defaults.json
	install -D -m 0644 $(BUILD)/man/tswap-sweep.1 $(DESTDIR)$(PREFIX)/share/man/man1/tswap-sweep.1
	install -D -m 0644 $(BUILD)/man/tswap-zero.1 $(DESTDIR)$(PREFIX)/share/man/man1/tswap-zero.1
	install -D -m 0644 $(BUILD)/man/tswap-check.1 $(DESTDIR)$(PREFIX)/share/man/man1/tswap-check.1
	install -D -m 0644 $(BUILD)/man/tswap.7 $(DESTDIR)$(PREFIX)/share/man/man7/tswap.7

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/fio/tswap.so $(DESTDIR)$(PREFIX)/lib/fio/fio-tswap.so \
		$(DESTDIR)$(PREFIX)/bin/tswap-sweep $(DESTDIR)$(PREFIX)/bin/tswap-zero $(DESTDIR)$(PREFIX)/bin/tswap-check \
		$(DESTDIR)$(PREFIX)/share/man/man1/tswap-sweep.1 $(DESTDIR)$(PREFIX)/share/man/man1/tswap-zero.1 \
		$(DESTDIR)$(PREFIX)/share/man/man1/tswap-check.1 \
		$(DESTDIR)$(PREFIX)/share/man/man7/tswap.7
	rm -rf $(DESTDIR)$(PREFIX)/share/tswap
	-rmdir $(DESTDIR)$(PREFIX)/lib/fio 2>/dev/null

clean:
	rm -rf $(BUILD)/tswap.so $(BUILD)/tswap-wrongver.so $(BUILD)/unit $(BUILD)/scratch \
		$(BUILD)/asan $(BUILD)/tsan $(BUILD)/tools $(BUILD)/valgrind $(BUILD)/pyc.stamp
	find sweep/tswap -name __pycache__ -type d -prune -exec rm -rf {} +

distclean:
	rm -rf $(BUILD)
