"""An arm whose first runs all fail inside the harness the same way stops the suite; its held rows are not
stored, the other arms' are."""

import dataclasses
import subprocess
import sys

import pytest

from harness.errors import UserError
from harness.run.records import read_results
from harness.run.repeats import FIRST_RUNS, InternalErrorWatch
from harness.trace.trajectory import Trajectory
from tests.cli.helpers import ROOT
from tests.results_factory import record

MISSING = "ModuleNotFoundError: No module named 'llama_cpp'"
TRAJECTORY = Trajectory(task_id="t0", arm="direct", model="m", epoch=0, prompt="p", answer="", expected="")


def finished(task: int, arm: str = "direct", error: str = "internal", message: str = MISSING):
    return dataclasses.replace(record("r", task, arm, 0, False), error_type=error, error_message=message), TRAJECTORY


def test_the_first_runs_failing_alike_inside_the_harness_stop_the_suite_naming_arm_error_and_fix():
    watch = InternalErrorWatch({"direct": 10})
    for task in range(FIRST_RUNS - 1):
        assert watch.admit(*finished(task), "harness run --resume r") == []  # held back, not stored
    with pytest.raises(UserError) as stop:
        watch.admit(*finished(FIRST_RUNS), "harness run --resume r")
    assert "arm direct" in str(stop.value) and MISSING in str(stop.value) and "install the missing module" in \
        str(stop.value) and "harness run --resume r" in str(stop.value)


def test_an_arm_with_fewer_runs_than_the_first_runs_stops_after_all_of_them():
    with pytest.raises(UserError):
        InternalErrorWatch({"direct": 1}).admit(*finished(0), "resume")


def test_a_run_that_ends_otherwise_releases_the_held_runs_and_the_arm_is_watched_no_more():
    watch = InternalErrorWatch({"direct": 10})
    held = watch.admit(*finished(0), "resume")
    released = watch.admit(*finished(1, error="", message=""), "resume")
    assert held == [] and [r.task_id for r, _ in released] == ["t0", "t1"]
    assert len(watch.admit(*finished(2), "resume")) == 1 and len(watch.admit(*finished(3), "resume")) == 1


def test_internal_errors_with_different_messages_are_not_a_repeated_failure():
    watch = InternalErrorWatch({"direct": 10})
    watch.admit(*finished(0), "resume")
    assert len(watch.admit(*finished(1, message="KeyError: 'x'"), "resume")) == 2


def test_other_arms_are_not_held_back():
    watch = InternalErrorWatch({"direct": 10, "codemode": 10})
    watch.admit(*finished(0), "resume")
    assert len(watch.admit(*finished(0, arm="codemode", error="", message=""), "resume")) == 1


BROKEN_DIRECT = """
import harness.agents.direct as direct

async def broken(self, ctx):
    raise ModuleNotFoundError("No module named 'llama_cpp'")

direct.DirectAgent.run = broken
from harness.cli import main
main()
"""


@pytest.mark.sandbox
def test_a_suite_whose_direct_runs_all_raise_stops_with_one_line_and_keeps_the_codemode_rows(tmp_path):
    result = subprocess.run([sys.executable, "-c", BROKEN_DIRECT, "run", "--suite", "smoke", "--model",
                             "scripted:reference", "--arms", "direct,codemode", "--out", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    line, = result.stderr.strip().splitlines()[-1:]
    assert line.startswith("error: arm direct: its first 3 run(s)") and MISSING in line
    assert "Traceback" not in result.stderr
    frame = read_results([tmp_path])
    assert list(frame.arm) == ["codemode", "codemode"]  # tasks 1 and 2; direct's runs of them are not stored
