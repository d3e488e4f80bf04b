# shellcheck shell=bash
# jobs/env.sh - default environment for the tswap job library.
#
#   . jobs/env.sh            (from bash, in the checkout or anywhere)
#   fio jobs/deepspeed-zero-infinity.fio
#
# fio expands ${VAR} in job files but has no default syntax, and an unset
# variable becomes an empty value that fio rejects ("failed parsing
# filename="). Sourcing this file sets, only where they are not set already:
#
#   TSWAP_ENGINE  absolute path of tswap.so      default: <checkout>/build/tswap.so
#   TSWAP_TARGET  swap file or block device       default: <checkout>/build/scratch/tswap.swap
#                                                 (installed copy: ./tswap-scratch.swap)
#   TSWAP_SIZE    bytes of the target to use      default: 1g (fio size notation)
#   TSWAP_FP_*, TSWAP_THREADS, TSWAP_BLOCK_SIZE, ...  fastpersist-checkpoint.fio's
#                 plan, unless TSWAP_FP_DRAIN is set: a 1 GiB checkpoint
#                 at DeepSpeed's defaults, TSWAP_THREADS kept (default 1)
#   TSWAP_ZERO_DIR  folder for the zero-infinity-step-*.fio swap files
#                                                 default: <checkout>/build/scratch/zero
#                                                 (installed copy: ./tswap-zero)
#
# and creates the directories of the default scratch file and folder. A TSWAP_TARGET that
# contains ':' must escape it as '\:' (fio splits filename= on ':').
# The write profiles overwrite TSWAP_SIZE bytes of TSWAP_TARGET: never point
# them at a device that holds data you want.

_tswap_jobs_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_tswap_root=$(dirname "$_tswap_jobs_dir")
if [ -z "${TSWAP_ENGINE:-}" ]; then
	if [ -f "$_tswap_root/build/tswap.so" ]; then
		TSWAP_ENGINE=$_tswap_root/build/tswap.so
	else
		# installed layout: PREFIX/share/tswap/jobs -> PREFIX/lib/fio/tswap.so
		TSWAP_ENGINE=$(cd "$_tswap_root/../.." 2>/dev/null && pwd)/lib/fio/tswap.so
	fi
fi
if [ -z "${TSWAP_TARGET:-}" ]; then
	if [ -f "$_tswap_root/Makefile" ]; then
		TSWAP_TARGET=$_tswap_root/build/scratch/tswap.swap
		mkdir -p "$(dirname "$TSWAP_TARGET")"
	else
		TSWAP_TARGET=$PWD/tswap-scratch.swap # installed: the current directory
	fi
fi
if [ -z "${TSWAP_ZERO_DIR:-}" ]; then
	if [ -f "$_tswap_root/Makefile" ]; then
		TSWAP_ZERO_DIR=$_tswap_root/build/scratch/zero
		mkdir -p "$TSWAP_ZERO_DIR"
	else
		TSWAP_ZERO_DIR=$PWD/tswap-zero # installed: the current directory
	fi
fi
: "${TSWAP_SIZE:=1g}"
export TSWAP_ENGINE TSWAP_TARGET TSWAP_SIZE TSWAP_ZERO_DIR
# fastpersist-checkpoint.fio's sizes, unless a plan is set already: one
# 1 GiB checkpoint file at DeepSpeed's checkpoint.writer defaults
# (io_buffer_size 64 MiB, double buffered), TSWAP_THREADS threads (1)
if [ -z "${TSWAP_FP_DRAIN:-}" ]; then
	eval "$("$_tswap_jobs_dir/fastpersist-plan" 1073741824 67108864 1 "${TSWAP_THREADS:-1}")"
fi
unset _tswap_jobs_dir _tswap_root
