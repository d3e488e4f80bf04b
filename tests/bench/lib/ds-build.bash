# shellcheck shell=bash
# shellcheck disable=SC2034 # DS_PINNED, DRIVER, PY_BUILD are read by the caller
# tests/bench/lib/ds-build.bash - tswap-bench-deepspeed's side B: DeepSpeed's
# source and the driver built from it (the C++ driver, or DeepSpeed's
# async_io op for the Python driver).  Sourced by
# tests/bench/tswap-bench-deepspeed, never run.
#
# Reads: DS_SRC (--ds-src or DEEPSPEED_SRC; empty: download), DS_VERSION,
# DS_URL, DS_MANIFEST, ROOT, SCRIPT_DIR, OUT, PYTHON, PY_EXT, and
# PROG/EXIT_* through note/die/usage_error (bench-lib.bash).
# Writes: DS_SRC (absolute), DS_PINNED (yes|no), DRIVER, PY_BUILD.

# manifest_check DIR: 0 when DIR has the pinned sources, byte for byte.
manifest_check() {
	(cd "$1" && grep -v '^#' "$DS_MANIFEST" | sha256sum --quiet -c - >/dev/null 2>&1)
}

# ds_source: DS_SRC made absolute and DS_PINNED set.  Without DS_SRC, the
# DS_VERSION release archive from DS_URL, unpacked once into
# build/deepspeed-DS_VERSION; exit EXIT_SKIP (with a note) when it cannot
# be downloaded, EXIT_ERROR when it does not match DS_MANIFEST.  A DS_SRC
# without csrc/aio/common and csrc/aio/py_lib is bad usage; one that does
# not match DS_MANIFEST is used, with a note.
ds_source() {
	DS_PINNED=no
	if [ -z "$DS_SRC" ]; then
		DS_SRC=$ROOT/build/deepspeed-$DS_VERSION
		if [ ! -d "$DS_SRC/csrc/aio" ]; then
			rm -rf "$DS_SRC.tmp" && mkdir -p "$DS_SRC.tmp"
			if ! curl -fsSL --max-time 120 "$DS_URL" | tar -xz -C "$DS_SRC.tmp" --strip-components=1; then
				rm -rf "$DS_SRC.tmp"
				note "skipped: no DeepSpeed source (set DEEPSPEED_SRC=DIR, or allow access to $DS_URL)"
				exit "$EXIT_SKIP"
			fi
			manifest_check "$DS_SRC.tmp" ||
				die "$EXIT_ERROR" "$DS_URL does not match $DS_MANIFEST; refusing to build it"
			mv "$DS_SRC.tmp" "$DS_SRC"
		fi
	fi
	if [ ! -d "$DS_SRC/csrc/aio/common" ] || [ ! -d "$DS_SRC/csrc/aio/py_lib" ]; then
		usage_error "--ds-src $DS_SRC: no csrc/aio/common and csrc/aio/py_lib there"
	fi
	DS_SRC=$(cd "$DS_SRC" && pwd)
	if manifest_check "$DS_SRC"; then DS_PINNED=yes; else
		note "$DS_SRC is not DeepSpeed $DS_VERSION byte for byte ($DS_MANIFEST); using it anyway"
	fi
}

# ds_driver: DRIVER=OUT/ds_driver, built from DS_SRC (its log in
# OUT/build.log); exit EXIT_ERROR when the build fails.
# The sources of DeepSpeed's async_io op (op_builder/async_io.py) that the
# handle needs, and its flags: -O0 (async_io.py), -std=c++17 -g
# -Wno-reorder (TorchCPUOpBuilder), -DNDEBUG (Python's CFLAGS, as
# setuptools compiles it).  deepspeed_py_aio.cpp (one-shot functions),
# deepspeed_py_copy.cpp and py_ds_aio.cpp (Python bindings) are not used.
ds_driver() {
	local a=$DS_SRC/csrc/aio
	DRIVER=$OUT/ds_driver
	g++ -O0 -g -std=c++17 -Wno-reorder -DNDEBUG -pthread -I"$SCRIPT_DIR/ds-driver" \
		-I"$a/py_lib" -I"$a/common" -o "$DRIVER" "$SCRIPT_DIR/ds-driver/ds_driver.cpp" \
		"$a"/py_lib/deepspeed_{py_io_handle,py_aio_handle,aio_thread,cpu_op,aio_op_desc,pin_tensor}.cpp \
		"$a"/common/deepspeed_aio_{utils,common,types}.cpp -laio >"$OUT/build.log" 2>&1 ||
		die "$EXIT_ERROR" "building DeepSpeed's handle failed (see $OUT/build.log)"
}

# ds_python_check: exit EXIT_SKIP, saying why, unless PYTHON imports torch
# (make bench-deepspeed installs python3-torch: make deps-bench-deepspeed).
ds_python_check() {
	local why
	command -v "$PYTHON" >/dev/null || {
		note "skipped: --side python: no $PYTHON (Debian's python3, where python3-torch installs)"
		exit "$EXIT_SKIP"
	}
	why=$("$PYTHON" -c 'import torch' 2>&1 | tail -n 1) || {
		note "skipped: --side python: $PYTHON cannot import torch ($why): run make deps-bench-deepspeed (python3-torch)"
		exit "$EXIT_SKIP"
	}
	command -v ninja >/dev/null || {
		note "skipped: --side python: no ninja (torch's JIT build): run make deps-bench-deepspeed (ninja-build)"
		exit "$EXIT_SKIP"
	}
}

# ds_python: DRIVER=the Python driver (ds-driver/ds_py_driver.py) and
# PY_BUILD=OUT/py-build.json (the builder DeepSpeed picked and the flags of
# the build), after building DeepSpeed's async_io op from DS_SRC as
# DeepSpeed's OpBuilder.jit_load does, into PY_EXT (a build whose sources
# and flags have not changed is reused: the first takes minutes on 2
# cores).  Exit EXIT_ERROR when the build fails (the log in
# OUT/py-build.log).
ds_python() {
	DRIVER=$SCRIPT_DIR/ds-driver/ds_py_driver.py
	PY_BUILD=$OUT/py-build.json
	mkdir -p "$PY_EXT"
	note "building (or reusing) DeepSpeed's async_io op in $PY_EXT"
	"$PYTHON" "$DRIVER" --ds-src "$DS_SRC" --ext-dir "$PY_EXT" --build-only \
		--json "$PY_BUILD" >"$OUT/py-build.log" 2>&1 ||
		die "$EXIT_ERROR" "building DeepSpeed's async_io op failed (see $OUT/py-build.log)"
}
