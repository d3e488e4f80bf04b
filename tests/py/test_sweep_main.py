# SPDX-License-Identifier: GPL-2.0-only
"""tswap.cli.sweep_main's hand-over of plan.json's lines (PLAN_LINES):
run.sh's run_points takes them instead of asking jq (pipeline.sh
plan_lines), so they must be the lines plan_lines's jq filter gives,
which is what tswap.cli.sweep_resume reads back from a run's plan.json.
No fio, no run: the recorded runs' plan.json (tests/fixtures/runs/)."""
import glob
import os

import pytest

from tswap import jqjson
from tswap.cli import sweep_main, sweep_resume, sweep_start
from tswap.plan import expand, grid

RUNS = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'runs')


@pytest.mark.parametrize('run', sorted(glob.glob(os.path.join(RUNS, '*', 'plan.json'))))
def test_plan_lines_are_what_resume_reads_from_plan_json(run):
    with open(run, encoding='utf-8') as f:
        doc = jqjson.loads(f.read())
    assert sweep_main.plan_lines(doc) == sweep_resume._plan_text(os.path.dirname(run))


def test_plan_lines_of_a_new_runs_plan_json_are_its_plan():
    # ranks above 1 add the 12th field; a one-rank point has 11
    g, _ = grid.load('/g/t.grid', 'rw read write\ntensor 16m\nqd 4 8\nranks 1 2\n', '/w', lambda: 1024)
    text = '\n'.join(expand.expand(grid.with_defaults(g)).lines)
    lines = sweep_main.plan_lines(jqjson.loads(sweep_start.plan_doc(text)))
    assert lines == text
    assert {x.count('\t') for x in lines.split('\n')} == {10, 11}
