"""No agent from outside can take the harness down: one test per kind of fault a team's agent can have (it exits,
hangs in a plain function, changes directory, leaves a process behind, keeps stdout open from a child, returns what
cannot be stored, sends malformed requests, passes its memory limit). Each checks that the suite ended (a generous
time bound: it did not hang), the faulty run's row and error type, the other arm's row intact, that no process of the
agent is left, and that nothing reached the terminal."""

from __future__ import annotations

import os

import pytest

from harness.agents.arms import ARMS
from harness.agents.isolation.groups import group_alive
from tests.agents.faulty_agents import MALFORMED
from tests.agents.test_foreign import run

AGENTS = "agent:tests.agents.faulty_agents:"


@pytest.fixture(scope="module")
def pid_folder(tmp_path_factory):
    """Where the faulty agents note their pids (their zygotes inherit the variable when they start)."""
    folder = tmp_path_factory.mktemp("pids")
    os.environ["HARNESS_TEST_PIDS"] = str(folder)
    yield folder
    os.environ.pop("HARNESS_TEST_PIDS", None)


@pytest.fixture(autouse=True)
def forget_registered_arms():
    built_in = dict(ARMS)
    yield
    ARMS.clear()
    ARMS.update(built_in)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False


def faulty_run(tmp_path, pid_folder, capfd, arm: str, **options):
    """The suite with the direct arm and `arm` side by side (a suite that hangs never returns): its rows and the pids
    noted."""
    frame = run(tmp_path, ("direct", arm), **options)
    function = arm.rpartition(":")[2] if arm.startswith("agent:") else "cmd"
    noted = {int(p.name.rpartition("-")[2]): int(p.read_text()) for p in pid_folder.glob(f"{function}-*")}
    terminal = capfd.readouterr()
    assert frame.loc["direct"].success and frame.loc["direct"].error_type == ""  # the other arm's row intact
    assert noted, "the agent ran and noted its pid"
    assert not any(alive(pid) or group_alive(pgid) for pid, pgid in noted.items())  # nothing of it left
    assert "Traceback" not in terminal.out + terminal.err and "Error" not in terminal.err
    return frame.loc[arm]


def test_an_agent_that_calls_sys_exit_is_its_runs_agent_error(tmp_path, pid_folder, capfd):
    row = faulty_run(tmp_path, pid_folder, capfd, AGENTS + "exits")
    assert (row.error_type, row.error_message) == ("agent_error", "the agent called sys.exit(3)")
    assert row.agent_isolation == "process"


def test_an_agent_that_exits_its_process_outright_is_its_runs_agent_error(tmp_path, pid_folder, capfd):
    row = faulty_run(tmp_path, pid_folder, capfd, AGENTS + "hard_exit")
    assert row.error_type == "agent_error" and "ended without an answer (exit code 7)" in row.error_message


def test_an_agent_that_changes_directory_moves_only_itself(tmp_path, pid_folder, capfd):
    here = os.getcwd()
    row = faulty_run(tmp_path, pid_folder, capfd, AGENTS + "moves")
    assert row.success and row.answer == "IN" and os.getcwd() == here


def test_a_plain_function_that_blocks_past_the_timeout_ends_with_its_run(tmp_path, pid_folder, capfd):
    row = faulty_run(tmp_path, pid_folder, capfd, AGENTS + "hangs", timeout_s=2.0)
    assert row.error_type == "timeout"


def test_a_process_an_agent_leaves_behind_ends_with_its_run(tmp_path, pid_folder, capfd):
    row = faulty_run(tmp_path, pid_folder, capfd, AGENTS + "leaves_a_process")
    assert row.success and row.answer == "IN"


def test_a_commands_answer_is_read_when_it_exits_though_its_child_keeps_stdout_open(tmp_path, pid_folder, capfd):
    command = "cmd:sh -c 'sleep 3600 & echo $! > $HARNESS_TEST_PIDS/cmd-$!; echo IN'"
    row = faulty_run(tmp_path, pid_folder, capfd, command, timeout_s=60.0)
    assert row.success and row.answer == "IN" and row.agent_isolation == "process"


def test_an_answer_that_cannot_be_stored_is_its_runs_agent_error(tmp_path, pid_folder, capfd):
    row = faulty_run(tmp_path, pid_folder, capfd, AGENTS + "circular")
    assert row.error_type == "agent_error" and "cannot be stored as JSON" in row.error_message


def test_every_malformed_chat_request_is_a_400_and_the_endpoint_keeps_serving(tmp_path, pid_folder, capfd):
    row = faulty_run(tmp_path, pid_folder, capfd, AGENTS + "bad_request")
    statuses = row.answer.split(" ")
    assert statuses[:-1] == ["400:invalid_request_error"] * len(MALFORMED)
    assert statuses[-1] == "200:chat.completion" and row.llm_calls == 1


def test_an_agent_past_its_memory_limit_is_its_runs_resource_limit(tmp_path, pid_folder, capfd):
    row = faulty_run(tmp_path, pid_folder, capfd, AGENTS + "greedy", agent_memory_mb=400)
    assert row.error_type == "resource_limit" and row.agent_memory_mb == 400


def test_a_run_cut_short_with_a_tool_call_in_flight_ends_quietly(tmp_path, pid_folder, capfd):
    row = faulty_run(tmp_path, pid_folder, capfd, "agent:tests.agents.slow_agent:slow_tool", timeout_s=6.0,
                     tool_latency_s=3.0, tool_timeout_s=10.0)
    assert row.error_type == "timeout"
    terminal = capfd.readouterr()
    assert "CancelledError" not in terminal.err and "Task was destroyed" not in terminal.err
