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
# The device ceiling: fio's own libaio engine at iodepth CEILING_QD and
# CEILING_JOBS fio jobs per handle for this run (a new run's:
# tswap.plan.expand; a resumed run's: sweep.json).
CEILING_QD=64 CEILING_JOBS=1
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
# Steady state (tswap.plan.jobs, fio HOWTO "Steady state"): fio's criterion and
# its window in seconds (one sample a second); SNIA SSS PTS: a slope
# excursion within 10% of the window's mean over 5 rounds = 2% a second.
readonly SS_CRIT=bw_slope:2% SS_DUR=5
# Bandwidth logs (tswap.results.bwlog): fio's log_avg_msec; a point whose last third
# averages more than DROP_PCT % below its first third "drops during the run";
# judged on BWLOG_MIN_SAMPLES samples or more (2 s: a third of a shorter log
# is one or two samples, noise rather than a trend).
readonly BWLOG_MSEC=250 DROP_PCT=20 BWLOG_MIN_SAMPLES=8

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
MIN_READ='' MIN_WRITE='' COMPARE='' DESTRUCTIVE=0 FORCE=0 ENGINE=''
# STEADY: steady-state detection on or off for this run, saved in sweep.json.
STEADY=''
# QUIET: --quiet; progress lines (run.sh's fd 8) go to stderr, or
# nowhere with --quiet; results go to stdout, errors to stderr always.
QUIET=0
# DS_VERSION: --ds-version, or a resumed run's (settings.sh): the
# DeepSpeed release best-aio.json's keys are for; empty: the newest.
DS_VERSION=''
# TARGETS: the targets, --target split at commas; TARGET is the first of
# them. TARGET_KINDS: file or block per target.
declare -ga TARGETS=() TARGET_KINDS=()
# TARGET_KIND: file, block or fleet (the front end); SIZE_BYTES: bytes of
# the target used.
TARGET_KIND='' SIZE_BYTES=''
# G_NAME: the grid's name
G_NAME=''

# --- the run --------------------------------------------------------------------
# PLAN_TEXT: the plan, one tab-separated line per point (tswap.plan.expand,
# format there; RUN/plan.json holds it as JSON, pipeline.sh); RUN: the run
# directory (settings.sh); NOTES: notes for the report (util.sh note, also
# in RUN/notes.txt).
PLAN_TEXT='' RUN=''
# SWEEP_JSON: a new run's sweep.json, its text before and after
# target_kind's value (the target check's TARGET_KIND); PLAN_JSON: its
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
# FINISHED[RUNKEY/HOSTID]=GB/s of the runs done earlier (pipeline.sh
# load_done).
declare -gA FINISHED=()

# --- fleet mode (--hosts): settings (the options and their defaults,
# tswap/cli/sweep_fleet.py), one entry per host in the H_* arrays (the
# hosts file, tswap.plan.hosts), the fio clients running now (exec-fleet.sh)
HOSTS_FILE='' FLEET=0 OUTLIER_PCT='' CONNECT_TIMEOUT='' HOST_TIMEOUT='' JUNIT_OUT='' FIO_WANT=''
# H_ADDR: HOST,PORT for fio --client; H_LABEL: the name in reports; H_ID:
# hNN-LABEL, the directory name; H_TARGET, H_ENGINE: paths on the host;
# H_OPTS: the host's fio options, one a line; H_LOST: why the host is out
# of the rest of the run, or empty.
declare -ga H_ADDR=() H_LABEL=() H_ID=() H_TARGET=() H_ENGINE=() H_OPTS=() H_LOST=()
# FLEET_PIDS: the fio clients running now, FLEET_TMPS their directories;
# FLEET_RAN: the hosts the point running now was started on (exec-fleet.sh).
declare -ga FLEET_PIDS=() FLEET_TMPS=() FLEET_RAN=()
