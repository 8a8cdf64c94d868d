"""`harness run` with faulty agents beside a built-in arm, as a team runs it: the command ends with exit code 0 and
every row, one row per fault, and no traceback on the terminal; a module that does not import stops it before any
row with one line and exit code 2; Ctrl-C during a run ends the agent's process with the harness, quietly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from harness.run.records import read_results
from tests.agents.isolation.test_faults import alive
from tests.cli.helpers import ROOT, harness

pytestmark = pytest.mark.cli
AGENTS = "agent:tests.agents.faulty_agents:"
FAULTS = {"exits": "agent_error", "hard_exit": "agent_error", "hangs": "timeout", "circular": "agent_error",
          "greedy": "resource_limit", "moves": "", "leaves_a_process": ""}


def test_a_suite_of_faulty_agents_ends_with_every_row_and_no_traceback(tmp_path):
    arms = ",".join(["direct", *(AGENTS + name for name in FAULTS), "cmd:sh -c 'sleep 3600 & echo IN'"])
    done = harness("run", "--suite", "smoke", "--tasks", "customer-country", "--model", "scripted:reference",
                   "--arms", arms, "--out", "results", "--run-id", "r", "--timeout", "5", "--agent-memory", "400",
                   cwd=tmp_path, env={"PYTHONPATH": str(ROOT)}, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    frame = read_results([tmp_path / "results" / "smoke" / "r.parquet"]).set_index("arm")
    assert len(frame) == len(FAULTS) + 2
    assert {name: frame.loc[AGENTS + name].error_type for name in FAULTS} == FAULTS
    assert frame.loc["direct"].success and frame.loc["cmd:sh -c 'sleep 3600 & echo IN'"].answer == "IN"


def test_a_module_that_does_not_import_stops_the_run_before_any_row_in_one_line(tmp_path):
    (tmp_path / "team_wip.py").write_text("def agent(task):\n    return helper(\n")
    done = harness("run", "--suite", "smoke", "--tasks", "customer-country", "--model", "scripted:reference",
                   "--arms", "direct,agent:team_wip:agent", "--out", "results", cwd=tmp_path,
                   env={"PYTHONPATH": os.pathsep.join((str(ROOT), str(tmp_path)))}, timeout=300)
    assert done.returncode == 2
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1 and f"{tmp_path / 'team_wip.py'}:2: SyntaxError" in lines[0]
    assert not (tmp_path / "results").exists()


def test_ctrl_c_ends_the_agents_process_group_and_the_harness_quietly(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    command = [sys.executable, "-c", "from harness.cli import main; main()", "run", "--suite", "smoke", "--tasks",
               "customer-country", "--model", "scripted:reference", "--arms", AGENTS + "hangs", "--out", "results",
               "--timeout", "300"]
    harness_run = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, env={**os.environ, "PYTHONPATH": str(ROOT),
                                                   "HARNESS_TEST_PIDS": str(pids), "COLUMNS": "200"})
    deadline = time.monotonic() + 240
    while not list(pids.iterdir()) and time.monotonic() < deadline:  # the agent's run has started
        time.sleep(0.2)
    harness_run.send_signal(signal.SIGINT)
    output, _ = harness_run.communicate(timeout=120)
    assert harness_run.returncode == 130 and "Traceback" not in output
    agent_pid = int(next(pids.iterdir()).name.rpartition("-")[2])
    assert not alive(agent_pid)
