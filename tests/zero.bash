# shellcheck shell=bash
# ZERO and EXAMPLE are used by the tests.
# shellcheck disable=SC2034
#
# tests/zero.bash - what tests/zero-plan.bats and tests/zero.bats share
# (loaded after helpers.bash): the tswap-zero under test, the example
# ds_config, per-test set-up, and a hand calculation of DeepSpeed's swap
# rules to check plans against (docs/zero-infinity.md, "The hand
# calculation").
#
#   ZERO, EXAMPLE          sweep/tswap-zero, jobs/ds_config.example.json
#   $OUT                   a per-test output directory (not yet created)
#   cfg FILE SGS PIPE PDEV a stage-3 ds_config variant
#   hand P WORLD RANKS ... the node's read/write bytes per step and files
#   plan_numbers PLAN      the same three numbers from a plan.json

ZERO=$REPO/sweep/tswap-zero
EXAMPLE=$REPO/jobs/ds_config.example.json

setup() {
	common_setup
	OUT=$BATS_TEST_TMPDIR/out
}
teardown() { common_teardown; }

# pad N A: N rounded up to a multiple of A (DeepSpeed _io_aligned_numel).
pad() { echo $(( ($1 + $2 - 1) / $2 * $2 )); }
# head N A: N rounded down to a multiple of A (_adjust_for_misaligned_lengths).
head_aligned() { echo $(( $1 / $2 * $2 )); }

# cfg FILE SUB_GROUP_SIZE PIPELINE(true|false) PARAM_DEVICE(nvme|cpu): a
# stage-3 AdamW bf16 ds_config with the optimizer on NVMe.
cfg() {
	jq --argjson sgs "$2" --argjson pipe "$3" --arg pdev "$4" '
		.zero_optimization.sub_group_size = $sgs
		| .zero_optimization.offload_optimizer.pipeline_read = $pipe
		| .zero_optimization.offload_optimizer.pipeline_write = $pipe
		| .zero_optimization.offload_param.device = $pdev' "$EXAMPLE" >"$1"
}

# hand P WORLD RANKS PARAM_NUMEL SGS MAX_IN_CPU PARAM_NVME(0|1) [GAS] [RD]:
# the node's read and write bytes per steady step and the file count, by
# the rules of docs/zero-infinity.md, in bash arithmetic (AdamW: 3 state
# tensors, fp32 alignment 256 elements, bf16 alignment 512, 1 MiB minimum
# swap; every parameter has a file; NVMe parameters past MAX_IN_CPU are
# read in each micro-step's forward and, unless kept for reuse (2 x the
# full tensors after it < RD, default 1e9), again in its backward;
# gradients swap once). P a multiple of PARAM_NUMEL.
hand() {
	local P=$1 W=$2 R=$3 T=$4 S=$5 M=$6 PN=$7 G=${8:-1} RD=${9:-1000000000}
	local n=$(( (P + T - 1) / T )) t=$(( (T + W - 1) / W ))
	local k=$(( (S + t - 1) / t ))           # params per sub-group
	(( S >= n * t )) && k=$n                # one sub-group when it fits
	local read=0 write=0 files=0 left=$n end=0 np numel idx=0 j reads
	local ppad=$(( $(pad "$t" 512) * 2 ))
	while (( left > 0 )); do
		np=$(( left < k ? left : k )); left=$(( left - np ))
		numel=$(( np * t )); end=$(( end + numel ))
		state=$(( 3 * $(pad "$numel" 256) * 4 ))
		grads=$(( np * $(head_aligned "$t" 256) * 4 ))
		read=$(( read + state + grads )); write=$(( write + state + grads )); files=$(( files + 3 + np ))
		for (( j = idx; j < idx + np; j++ )); do
			(( PN )) || continue
			files=$(( files + 1 ))
			(( end > M )) || continue
			reads=$G
			(( 2 * (n - 1 - j) * T < RD )) || reads=$(( 2 * G ))
			read=$(( read + reads * ppad )); write=$(( write + ppad ))
		done
		idx=$(( idx + np ))
	done
	echo "$(( read * R )) $(( write * R )) $(( files * R ))"
}

plan_numbers() { jq -r '"\(.read_bytes_per_step) \(.write_bytes_per_step) \(.files)"' "$1"; }
