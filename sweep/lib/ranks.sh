# shellcheck shell=bash
# ranks.sh - several swappers at once: ranks, targets and readwrite points.
#
# A point of N ranks runs N swappers at once, one fio job each in one group
# (no stonewall, no group_reporting: fio's JSON keeps one entry per job),
# each job its own tswap instance = its own handle, as every DeepSpeed rank
# opens its own aio handle (deepspeed/runtime/swap_tensor/
# optimizer_utils.py, OptimizerSwapper.__init__: swap folder
# <nvme_path>/optimizer/rank<R>). A readwrite point gives each rank a
# read and a write handle at once on separate files, as the pipelined
# optimizer swapper does (deepspeed/runtime/swap_tensor/
# pipelined_optimizer_swapper.py: PipelinedOptimizerSwapper.__init__ makes
# read_aio_handle and write_aio_handle; swap_in_optimizer_state reads the
# next sub-group with one while swap_out_optimizer_state /
# _swap_out_optimizer_state writes the last with the other).
#
# Rank R uses target R mod (number of targets): round-robin, as users
# spread nvme_path over drives. On a file target the rank's handle uses
# the file TARGET.rankR (write handle of readwrite: TARGET.rankR.write),
# checked and written once like the single target (target.sh); on a block
# device it uses its own region (offset, size) of the sweep's --size. A
# point of 1 rank reading or writing uses TARGET itself, as before.
#
# Owns: targets_json, targets_key, facts_keep, plan_facts,
# plan_facts_into, plan_writes (a point's job sections: tswap.plan.jobs
# rank_sections). Reads: TARGET, TARGETS, PLAN_TEXT.
# Writes: PLAN_FACTS*, TARGETS_JSON*.
# shellcheck disable=SC2034 # sets PLAN_FACTS_OF, TARGETS_JSON_OF (state.sh)
# shellcheck disable=SC2153 # TARGETS: a global of state.sh (the front end declares it)
# shellcheck disable=SC2016 # ${TSWAP_RANK*} is literal: fio expands it

# targets_json: TARGETS as a JSON array (TARGET alone when TARGETS is
# empty); jq runs once for the targets of a run, see facts_keep.
targets_json() {
	local key
	key=$(targets_key)
	if [ -n "${TARGETS_JSON:-}" ] && [ "${TARGETS_JSON_OF:-}" = "$key" ]; then
		printf '%s\n' "$TARGETS_JSON"
	elif [ "${#TARGETS[@]}" -eq 0 ]; then
		jq -cn --arg t "$TARGET" '[$t]'
	else
		jq -cn '$ARGS.positional' --args "${TARGETS[@]}"
	fi
}

# targets_key: TARGETS (or TARGET) joined by US, the key of targets_json's
# kept answer.
targets_key() {
	local IFS=$'\x1f'
	if [ "${#TARGETS[@]}" -eq 0 ]; then printf '%s\n' "$TARGET"; else printf '%s\n' "${TARGETS[*]}"; fi
}

# facts_keep: keep what plan_facts and targets_json answer for
# the plan and targets of now (state.sh PLAN_FACTS*, TARGETS_JSON*), so
# that the calls of every point (several each, most in $(...)) run no jq.
# Each function asks jq again when PLAN_TEXT or the targets have changed
# since. Called by the entry point in its own shell once the plan is set,
# and again once the targets are checked.
facts_keep() {
	PLAN_FACTS=$(plan_facts)
	PLAN_FACTS_OF=$PLAN_TEXT
	TARGETS_JSON=$(targets_json)
	TARGETS_JSON_OF=$(targets_key)
}

# plan_facts: tswap.plan.points facts() for PLAN_TEXT: 1 or 0 (a point
# writes), true or false (a point of 1 rank reads or writes), then
# rank_slots' lines; the kept answer when PLAN_TEXT is unchanged.
plan_facts() {
	if [ -n "${PLAN_FACTS:-}" ] && [ "${PLAN_FACTS_OF:-}" = "$PLAN_TEXT" ]; then
		printf '%s\n' "$PLAN_FACTS"
	else
		py plan --facts <<<"$PLAN_TEXT"
	fi
}

# plan_facts_into ARRAY: plan_facts' lines into ARRAY.
plan_facts_into() {
	local -n _facts=$1
	local text
	text=$(plan_facts)
	mapfile -t _facts <<<"$text"
}

# plan_writes: 1 when a point of the plan writes (write, readwrite), else 0.
plan_writes() {
	local -a f
	plan_facts_into f
	printf '%s\n' "${f[0]}"
}
