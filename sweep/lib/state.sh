# shellcheck shell=bash
# state.sh - every global of tswap-sweep, named in one place: constants,
# the settings (from the command line, the grid, or a resumed run's
# sweep.json), the run's state, and the fleet's hosts.
#
# Owns: nothing but the declarations. Reads: SCRIPT_DIR, SWEEP_HOME (the
# entry point). Sourced first; declare -g keeps the arrays global even when
# a test sources the modules from a function (tests/sweep-lib.bats). The
# comment over each variable names the module that writes it; the others
# only read it.
#
# Single-quoted ${TSWAP_*} and `...` in the modules are literal on purpose:
# fio expands ${VAR} in job files, and backticks are markdown.
# shellcheck disable=SC2034 # used by the other modules

readonly PROG=tswap-sweep
# EXIT_UNTRUSTED: every point with a result is flagged (tswap.report.verdict
# run_verdict): no pick, best-aio.json without an aio block.
readonly EXIT_OK=0 EXIT_THRESHOLD=1 EXIT_USAGE=2 EXIT_ERROR=3 EXIT_UNTRUSTED=4 EXIT_INTERRUPTED=130
# The device ceiling: fio's own libaio engine at bs CEILING_BS, iodepth
# CEILING_QD and CEILING_JOBS fio jobs per handle for this run (a new run's:
# tswap.plan.expand; a resumed run's: sweep.json, CEILING_QD_MIN when
# older than the key).
readonly CEILING_BS=1m CEILING_QD_MIN=64
CEILING_QD=$CEILING_QD_MIN CEILING_JOBS=1
# A point's CV above CV_FLAG and above CV_REL x the median CV of the run's
# other points, or above CV_MAX in any case, is flagged (tswap.stats.aggregate
# cv_limit); GB/s above CACHE_FACTOR x the
# ceiling is taken for a cache serving reads (report warnings).
readonly CV_FLAG=0.05 CV_REL=2 CV_MAX=0.20 CACHE_FACTOR=1.10
# A tie within noise is resolved by the cost order among the tied configs
# whose median is within COST_TOL (a fraction) of the fastest one: the
# pick gives up at most 3% of the fastest median for a cheaper config
# (tswap.stats.pick pick; docs/sweep.md "How the pick is made").
readonly COST_TOL=0.03
# Steady state (steady.sh, fio HOWTO "Steady state"): fio's criterion and
# its window in seconds (one sample a second); SNIA SSS PTS: a slope
# excursion within 10% of the window's mean over 5 rounds = 2% a second.
readonly SS_CRIT=bw_slope:2% SS_DUR=5
# Bandwidth logs (bwlog.sh): fio's log_avg_msec; a point whose last third
# averages more than DROP_PCT % below its first third "drops during the run";
# judged on BWLOG_MIN_SAMPLES samples or more (2 s: a third of a shorter log
# is one or two samples, noise rather than a trend).
readonly BWLOG_MSEC=250 DROP_PCT=20 BWLOG_MIN_SAMPLES=8
# Preconditioning (precondition.sh): fio libaio sequential writes, passes.
readonly PRECOND_BS=1m PRECOND_QD=32 PRECOND_LOOPS=2

# ROOT: the checkout when the script runs from one (sweep/../Makefile and
# engine/), else empty (installed): build/sweep/latest (settings.sh).
ROOT=
if [ -f "$SCRIPT_DIR/../Makefile" ] && [ -d "$SCRIPT_DIR/../engine" ]; then
	ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
fi
readonly ROOT

# --- settings: tswap/cli/sweep_main.py (the options; a new run's settings
# over the grid's values over the defaults, or a resumed run's sweep.json:
# the state run.sh sources) ---------------------------------------------------
TARGET='' SIZE='' RUNTIME='' RAMP='' IO_SIZE='' REPEAT='' OUT='' RESUME='' DRY_RUN=0
MIN_READ='' MIN_WRITE='' COMPARE='' DESTRUCTIVE=0 FORCE=0 ENGINE='' CEILING=1
# --fixed-runtime: no steady-state detection; STEADY: on or off for this
# run, saved in sweep.json.
FIXED_RUNTIME=0 STEADY=''
# --precondition / --no-precondition: on, off, or auto (on for write
# points on a block device); saved in sweep.json (precondition.sh).
PRECONDITION=auto
# QUIET: --quiet; progress lines (run.sh's fd 8) go to stderr, or
# nowhere with --quiet; results go to stdout, errors to stderr always.
QUIET=0
# DS_VERSION: --ds-version, or a resumed run's (settings.sh): the
# DeepSpeed release best-aio.json's keys are for; empty: the newest.
DS_VERSION=''
# WORKLOAD: --workload (tensor or checkpoint), or a resumed run's
# (tswap/cli/sweep_resume.py); saved in sweep.json.
WORKLOAD=tensor
# TARGETS: the targets, --target split at commas; TARGET is the first of
# them. TARGET_KINDS: file or block per target (the target check:
# tswap/cli/targets_check.py).
# DEFAULT_TARGET: the target without --target (build/scratch/tswap.swap in
# a checkout, ./tswap-scratch.swap installed).
declare -ga TARGETS=() TARGET_KINDS=()
DEFAULT_TARGET=''
# TARGET_KIND: file, block (target.sh) or fleet (the front end); SIZE_BYTES:
# bytes of the target used; TARGET_OWNED (target.sh): a file
# target is new (the sweep creates it), ours (scratch.sh) or theirs.
TARGET_KIND='' SIZE_BYTES='' TARGET_OWNED=''
# TARGET_OWNS[PATH]: TARGET_OWNED of each target and rank file, and
# TARGET_SEEN[PATH] what it named (target_identity), when checked
# (tswap/cli/targets_check.py, in the front end).
declare -gA TARGET_OWNS=() TARGET_SEEN=()
# TARGET_IDS[PATH]: what each path the points use named once prepared,
# checked again before every fio run (target.sh target_ids_keep);
# TARGET_FDS[PATH]=FD: those paths held open for the fio run starting
# (target_fds_open); TARGET_REFS[PATH]=FD: each held open from then on
# (target_ids_keep), its DEV:INODE the one it had.
declare -gA TARGET_IDS=() TARGET_FDS=() TARGET_REFS=()
# G_NAME, G_DESC: the grid's name and description
G_NAME='' G_DESC=''

# --- the run --------------------------------------------------------------------
# PLAN_TEXT: the plan, one tab-separated line per point (tswap.plan.expand,
# format there; RUN/plan.json holds it as JSON, pipeline.sh); RUN: the run directory (settings.sh); NOTES: notes for the report
# (util.sh note, also in RUN/notes.txt). On this host RUN is made or
# resumed, and locked, by the front end (tswap/cli/sweep_local.py), and
# lock.sh's RUN_LOCKED, LOCK_DIR and TARGET_LOCK_FDS come with it.
PLAN_TEXT='' RUN=''
# SWEEP_JSON: a new run's sweep.json, its text before and after
# target_kind's value (the target check's TARGET_KIND), and a --budget
# run's "budget" member (settings.sh config_budget); PLAN_JSON: its
# plan.json's text (tswap/cli/sweep_start.py; settings.sh save_config
# writes them). Empty for a dry run and --resume.
declare -ga SWEEP_JSON=()
PLAN_JSON=''
# PLAN_LINES: RUN/plan.json's points as pipeline.sh plan_lines gives them,
# from the front end (a new run's, or a resumed run's with a plan.json);
# empty: plan_lines asks jq. FIO_VERSION_TEXT: `fio --version` as the
# front end read it for a new run's sweep.json (empty: not read).
PLAN_LINES='' FIO_VERSION_TEXT=''
# The kept answers of plan_facts (for the plan PLAN_FACTS_OF) and
# targets_json (for the targets TARGETS_JSON_OF): ranks.sh facts_keep.
PLAN_FACTS='' PLAN_FACTS_OF='' TARGETS_JSON='' TARGETS_JSON_OF=''
# Each point's job file by H/KEY (H: a fleet host's index, or empty), the
# error of a point without one, and the settings they were made for
# (jobs.sh point_job).
declare -gA JOBS=() JOBS_ERR=()
JOBS_OF=''
declare -ga NOTES=()
# exec-local.sh: the point stage running now (fio's process control:
# tswap/cli/point.py; exec_stop stops it) and the point directory it
# writes (the signal trap removes it); FINISHED[RUNKEY]=GB/s of the runs
# done earlier (fleet: RUNKEY/HOSTID); DROP_NOTED: the page-cache note was
# given; POINT_REPLY: the fd of the stage's reply (a pipe, made once).
FIO_PID='' TMP_POINT='' DROP_NOTED=0 POINT_REPLY=''
# status.sh: a status line every STATUS_EVERY seconds of a point.
readonly STATUS_EVERY=10
declare -gA FINISHED=()
# FINISHED_LOADED: 1 when the front end has set FINISHED (this host's runs:
# tswap/cli/sweep_local.py), 0 when load_done reads it (a fleet's).
FINISHED_LOADED=0

# --- the budget (budget.sh): --budget SECONDS (BUDGET, empty: every point
# of the plan), or the default rule's (tswap/cli/sweep_start.py; refused
# there too when too small), --exhaustive (no default budget); BUDGET_AUTO:
# the default rule set BUDGET; BUDGET_T0: the script's start (the budget's
# clock) ---------------------------------------------------------------------
BUDGET='' EXHAUSTIVE=0 BUDGET_AUTO=0
BUDGET_T0=$EPOCHREALTIME
# The budget's constants (the start-up estimate, the outputs' reserve, the
# final round's repeats and floor): tswap/plan/budget_start.py.

# --- fleet mode (--hosts): settings (the options and their defaults,
# tswap/cli/sweep_fleet.py), one entry per host in the H_* arrays (the
# hosts file, tswap.plan.hosts), the fio clients running now (exec-fleet.sh)
HOSTS_FILE='' FLEET=0 OUTLIER_PCT='' CONNECT_TIMEOUT='' HOST_TIMEOUT='' JUNIT_OUT='' FIO_WANT=''
# H_ADDR: HOST,PORT for fio --client; H_LABEL: the name in reports; H_ID:
# hNN-LABEL, the directory name; H_TARGET, H_ENGINE: paths on the host;
# H_OPTS: the host's fio options, one a line; H_WHERE: FILE:LINE of the
# hosts file; H_LOST: why the host is out of the rest of the run, or empty.
declare -ga H_ADDR=() H_LABEL=() H_ID=() H_TARGET=() H_ENGINE=() H_OPTS=() H_WHERE=() H_LOST=()
# FLEET_PIDS: the fio clients running now, FLEET_TMPS their directories;
# FLEET_RAN: the hosts the point running now was started on (exec-fleet.sh).
declare -ga FLEET_PIDS=() FLEET_TMPS=() FLEET_RAN=()
