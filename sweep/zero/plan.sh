# shellcheck shell=bash
# sweep/zero/plan.sh - build a tswap-zero plan and its fio jobs, print it.
#
# Owns: checking the ds_config file, running plan.jq and fiojob.jq, the
# dry-run table. Reads: the ds_config, $ZERO_LIB/plan.jq, fiojob.jq.
# Writes: the files named by its callers (plan.json, *.fio).

# zero_check_config DS_CONFIG: refuse (one line naming the file and the
# rule, exit 2) what is not one JSON object: an empty or whitespace file,
# hjson that DeepSpeed reads and jq does not (comments, trailing commas:
# runtime/config.py DeepSpeedConfig reads the file with hjson.load), several
# values; and a key given twice, which DeepSpeed refuses
# (dict_raise_error_on_duplicate_keys) where jq would keep the last.
zero_check_config() {
	local cfg=$1 dup
	if [ ! -f "$cfg" ] || [ ! -r "$cfg" ]; then
		usage_error "--ds-config $cfg: no such readable file"
	fi
	if jq -s -e 'length == 1 and (.[0] | type) == "object"' "$cfg" >/dev/null 2>&1; then
		dup=$(jq -rn --stream '[inputs | select(length == 2) | .[0] | map(tostring) | join(".")]
			| group_by(.) | map(select(length > 1) | .[0]) | first // empty' "$cfg")
		[ -z "$dup" ] ||
			usage_error "--ds-config $cfg: key $dup given twice (DeepSpeed refuses duplicate keys: runtime/config.py dict_raise_error_on_duplicate_keys)"
		return 0
	fi
	if ! grep -q '[^[:space:]]' "$cfg"; then
		usage_error "--ds-config $cfg: not a JSON object (the file is empty)"
	fi
	if ! jq -s . "$cfg" >/dev/null 2>&1 &&
		{ grep -Eq '^[[:space:]]*(#|//)|/\*' "$cfg" || grep -zEq ',[[:space:]]*[]}]' "$cfg"; }; then
		usage_error "--ds-config $cfg: not a JSON object: comments or trailing commas (hjson, which DeepSpeed also reads); tswap-zero reads JSON only: remove them"
	fi
	usage_error "--ds-config $cfg: not a JSON object (a DeepSpeed ds_config)"
}

# zero_make_plan DS_CONFIG PARAMS WORLD RANKS PARAM_NUMEL STEP DTYPE OUT:
# plan.json to OUT for STEP (steady, first or init) with the parameter
# dtype DTYPE ("" = from the ds_config); a file that is not a JSON object
# or a ds_config DeepSpeed would reject: one line, exit 2.
zero_make_plan() {
	local cfg=$1 params=$2 world=$3 ranks=$4 pnumel=$5 step=$6 dtype=$7 out=$8 err
	zero_check_config "$cfg"
	jq --argjson params "$params" --argjson world "$world" --argjson ranks "$ranks" \
		--argjson param_numel "$pnumel" --arg step "$step" --arg dtype "$dtype" \
		-f "$ZERO_LIB/plan.jq" "$cfg" >"$out.tmp" ||
		die "$EXIT_ERROR" "plan.jq failed on $cfg"
	err=$(jq -r '.error // empty' "$out.tmp")
	if [ -n "$err" ]; then
		rm -f "$out.tmp"
		case $err in
		--*) usage_error "$err" ;; # about a command-line option
		*) usage_error "--ds-config $cfg: ${err#ds_config: }" ;;
		esac
	fi
	mv -f "$out.tmp" "$out"
}

# zero_jobs PLAN MODE DIRS_JSON SCALE ENGINE [HEADER]: fiojob.jq's output
# (fio job text, or the totals object for MODE=totals) on stdout.
zero_jobs() {
	local plan=$1 mode=$2 dirs=$3 scale=$4 engine=$5 header=${6:-}
	jq -r --arg mode "$mode" --arg engine "$engine" --argjson dirs "$dirs" \
		--argjson unit "$ZERO_DIO_UNIT" --argjson scale "$scale" --arg header "$header" \
		-f "$ZERO_LIB/fiojob.jq" "$plan"
}

# zero_print_plan PLAN: the dry-run table on stdout: the settings, the
# tensors of one rank, and per phase and stage the bytes per rank and node.
zero_print_plan() {
	local plan=$1 table
	table=$(jq -r '
	def gb: . / 1e9 * 1000 | round / 1000 | tostring;
	"ZeRO-Infinity step: \(.inputs.params) params, world \(.inputs.world), \(.inputs.ranks) ranks on this node, \(.config.optimizer) (\(.config.optimizer_state | join(", "))), \(.config.param_dtype) params",
	"step: \({steady: "steady (a training step from the second on)", first: "first (the first training step)", init: "init (deepspeed.initialize)"}[.step]); stage3_max_reuse_distance \(.config.max_reuse_distance): \([.per_rank.nvme_params[] | select(.kept)] | length) of \(.per_rank.nvme_params | length) NVMe parameters kept from forward for backward after the first step",
	"swapper: \(.config.swapper) (pipeline_read=\(.config.pipeline_read), pipeline_write=\(.config.pipeline_write)); sub_group_size \(.config.sub_group_size); aio block_size=\(.config.block_size) queue_depth=\(.config.queue_depth) intra_op_parallelism=\(.config.intra_op_parallelism) single_submit=\(.config.single_submit) overlap_events=\(.config.overlap_events); gradient_accumulation_steps \(.config.gas)",
	(.defaults[] | "default: \(.)"), (.notes[] | "note: \(.)"),
	"",
	"per rank: partition \(.per_rank.partition_numel) elements in \(.per_rank.sub_groups | length) sub-groups; \(.per_rank.files) swap files, \(.per_rank.file_bytes) bytes",
	"",
	(["sub-group", "elements", "params", "optimizer-swap", "params-on-nvme", "state-tensor-bytes", "grad-files", "param-files"] | @tsv),
	(.per_rank.sub_groups[] | [.id, .numel, .params, .optimizer_swap, .params_on_nvme,
	   "\(.state_tensors | length) x \(.state_bytes)", (.grad_bytes | length), (.param_bytes | length)] | @tsv),
	"",
	(["phase", "stage", "tensors/rank", "read B/rank", "write B/rank", "read B/node", "write B/node"] | @tsv),
	(.inputs.ranks as $r | .phases[] | (.stages[] as $s | [.name, $s.name, ([$s.jobs[].count] | add),
	   $s.read_bytes_per_rank, $s.write_bytes_per_rank, $s.read_bytes_per_rank * $r, $s.write_bytes_per_rank * $r] | @tsv),
	   ([.name + (if .micro_step then " (micro-step \(.micro_step))" else "" end), "(total)", "", .read_bytes_per_rank, .write_bytes_per_rank, .read_bytes, .write_bytes] | @tsv)),
	"",
	"per step (node): read \(.read_bytes_per_step) B (\(.read_bytes_per_step | gb) GB), write \(.write_bytes_per_step) B (\(.write_bytes_per_step | gb) GB), \(.files) files",
	(.steps | "per rank: deepspeed.initialize read \(.init.read_bytes_per_rank) B, write \(.init.write_bytes_per_rank) B; first step read \(.first.read_bytes_per_rank) B, write \(.first.write_bytes_per_rank) B; steady step read \(.steady.read_bytes_per_rank) B, write \(.steady.write_bytes_per_rank) B")
	' "$plan")
	zero_columns <<<"$table"
}

# zero_columns: align the TSV runs of stdin (no `column` dependency).
zero_columns() {
	jq -Rrs -f "$ZERO_LIB/columns.jq"
}
