"""Agents from outside in a conversation (harness.agents.foreign.ForeignAgent.converse): a task whose scripted user
speaks three turns calls an `agent:` function or a `cmd:` agent once per turn, with the conversation so far as its
history; each turn's calls are stamped so that they group into their turn; a one-turn task is one call with no
history; a failure in a later turn ends the run with what the earlier turns did."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from harness.adapters.bfcl_scoring import turn_of
from harness.models.scripted import ScriptedReply, ScriptedRequest, policy_provider
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from harness.tasks.task import UserScenario
from harness.trace.events import InfoEvent
from tests.agents import turn_agents

TASK = "customer-country"  # smoke: In which country is customer C-0007? (IN)
TURNS = ("In which country is customer C-0007?", "And customer C-0001?", "Say the first one's code again.")
CONVERSING = "agent:tests.agents.turn_agents:conversing"
COMMAND = f"cmd:{sys.executable} {Path(__file__).parent / 'history_command.py'}"


def lookup(customer_id: str) -> ScriptedReply:
    return ScriptedReply(tool_calls=(("get_customer", {"customer_id": customer_id}),))


def three_turns(requests: list[ScriptedRequest]):
    """Turn 1: a lookup, then "IN"; turn 2: a lookup, then "US"; turn 3: "IN". Each request is kept."""
    def policy_for(task, arm):
        replies = [lookup("C-0007"), ScriptedReply("IN"), lookup("C-0001"), ScriptedReply("US"), ScriptedReply("IN")]

        def policy(request: ScriptedRequest) -> ScriptedReply:
            requests.append(request)
            return replies[min(request.call_index, len(replies) - 1)]
        return policy

    return policy_for


def run(tmp_path, arm, policy, turns=TURNS, **options):
    """One run of the smoke task, its user speaking `turns` (none: the task as it is); its row and trajectory."""
    suite = load_suite("smoke")
    task = next(t for t in suite.tasks if t.id == TASK)
    if turns:
        # as BFCL's tasks are: the turns are the prompt, and the run's turn limit is the conversation's
        task = replace(task, prompt="", user=UserScenario("", turns=turns), max_turns=10)
    config = RunConfig(suite=replace(suite, tasks=(task,)), model="scripted:team", arms=(arm,), out_dir=tmp_path,
                       run_id="r", **options)
    asyncio.run(Runner(config, provider=policy_provider("scripted:team", policy)).run())
    row = read_results([tmp_path / "smoke" / "r.parquet"]).iloc[0]
    return row, read_trajectory(tmp_path / "smoke" / "r.parquet", row.sample_id)


def user_turn_steps(trajectory) -> list[int]:
    return [e.value["step"] for e in trajectory.events if isinstance(e, InfoEvent) and e.name == "user_turn"]


@pytest.fixture(autouse=True)
def forget_seen():
    turn_agents.seen.clear()
    yield
    turn_agents.seen.clear()


def test_a_function_is_called_once_per_turn_with_the_conversation_so_far_and_answers_with_the_last(tmp_path):
    row, _ = run(tmp_path, CONVERSING, three_turns([]), agent_isolation="in-process")
    assert [task.prompt for task in turn_agents.seen] == list(TURNS)
    assert [task.history for task in turn_agents.seen] == [
        (),
        ({"role": "user", "content": TURNS[0]}, {"role": "assistant", "content": "IN"}),
        ({"role": "user", "content": TURNS[0]}, {"role": "assistant", "content": "IN"},
         {"role": "user", "content": TURNS[1]}, {"role": "assistant", "content": "US"})]
    assert row.success and row.answer == "IN" and row.error_type == ""


def test_each_turn_in_its_own_process_sends_the_history_to_the_model(tmp_path):
    requests: list[ScriptedRequest] = []
    row, _ = run(tmp_path, CONVERSING, three_turns(requests))
    third_turn = requests[4]  # each turn's agent ran in a process of its own: what it sent is what it was handed
    assert [(m["role"], m["content"]) for m in third_turn.messages] == [
        ("user", TURNS[0]), ("assistant", "IN"), ("user", TURNS[1]), ("assistant", "US"), ("user", TURNS[2])]
    assert row.success and row.answer == "IN" and (row.llm_calls, row.tool_calls) == (5, 2)


def test_each_turns_calls_are_grouped_into_that_turn(tmp_path):
    _, trajectory = run(tmp_path, CONVERSING, three_turns([]))
    steps = user_turn_steps(trajectory)
    assert steps == [1, 3, 4]  # the step of each turn's last completion
    calls = [(c.arguments["customer_id"], turn_of(c.step, tuple(steps))) for c in trajectory.tool_calls]
    assert calls == [("C-0007", 0), ("C-0001", 1)]


def test_a_command_reads_the_history_on_stdin_and_in_its_environment(tmp_path):
    row, trajectory = run(tmp_path, COMMAND, lambda task, arm: lambda request: "unused")
    assert row.error_type == "", row.error_message
    answer = json.loads(row.answer)  # the last turn's: what it was handed
    first = json.dumps({"turn": 1, "stdin": [], "environment": []})
    assert answer["turn"] == 3 and answer["stdin"] == answer["environment"]
    assert answer["stdin"][:3] == [{"role": "user", "content": TURNS[0]}, {"role": "assistant", "content": first},
                                   {"role": "user", "content": TURNS[1]}]
    # no completions: each turn's one call still lands in its own turn
    steps = tuple(user_turn_steps(trajectory))
    assert [turn_of(c.step, steps) for c in trajectory.tool_calls] == [0, 1, 2]


def test_a_one_turn_task_calls_once_with_no_history(tmp_path):
    row, trajectory = run(tmp_path, CONVERSING, three_turns([]), turns=(), agent_isolation="in-process")
    assert [task.history for task in turn_agents.seen] == [()]
    assert row.success and row.answer == "IN" and user_turn_steps(trajectory) == []


def test_a_failure_in_the_second_turn_ends_the_run_and_keeps_the_first_turns_calls(tmp_path):
    row, trajectory = run(tmp_path, "agent:tests.agents.turn_agents:fails_in_second_turn", three_turns([]))
    assert row.error_type == "agent_error" and "lost the thread in turn 2" in row.error_message
    assert not row.success and row.answer == ""
    assert [c.arguments["customer_id"] for c in trajectory.tool_calls] == ["C-0007"]
    assert user_turn_steps(trajectory) == [1] and row.llm_calls == 2


def simulated_user(lines_or_failure):
    """A user model saying `lines` in order (None for a call that fails)."""
    def policy(request: ScriptedRequest):
        line = lines_or_failure[min(request.call_index, len(lines_or_failure) - 1)]
        if line is None:
            raise RuntimeError("the user model is down")
        return line
    return policy_provider("scripted:talker", lambda task, arm: policy)


def talk(tmp_path, arm, user_lines, **options):
    suite = load_suite("smoke")
    task = replace(next(t for t in suite.tasks if t.id == TASK), max_turns=10,
                   user=UserScenario("You want to know the countries of customers C-0007 and C-0001."))
    config = RunConfig(suite=replace(suite, tasks=(task,)), model="scripted:team", arms=(arm,), out_dir=tmp_path,
                       run_id="r", user_model="scripted:talker", **options)
    runner = Runner(config, provider=policy_provider("scripted:team", three_turns([])),
                    user_provider=simulated_user(user_lines))
    asyncio.run(runner.run())
    return read_results([tmp_path / "smoke" / "r.parquet"]).iloc[0]


def test_a_simulated_user_talks_with_the_agent_until_it_ends_the_conversation(tmp_path):
    lines = ("Which country is customer C-0007 in?", "And C-0001?", "Thanks! ###STOP###")
    row = talk(tmp_path, CONVERSING, lines, agent_isolation="in-process")
    first, second = turn_agents.seen
    assert lines[0] in first.prompt and first.history == ()
    assert second.prompt == "And C-0001?"
    assert second.history == ({"role": "user", "content": first.prompt}, {"role": "assistant", "content": "IN"})
    assert row.answer == "US" and row.error_type == "" and (row.user_turns, row.llm_calls) == (3, 4)


def test_a_user_model_that_fails_ends_the_run_as_in_the_built_in_loop(tmp_path):
    lines = ("Which country is customer C-0007 in?", None)
    foreign = talk(tmp_path / "foreign", CONVERSING, lines)
    built_in = talk(tmp_path / "direct", "direct", lines)
    assert foreign.error_type == built_in.error_type == "lm_error"
    assert foreign.error_message.startswith("user model: ") and built_in.error_message.startswith("user model: ")
    assert foreign.tool_calls == 1 and foreign.answer == ""
