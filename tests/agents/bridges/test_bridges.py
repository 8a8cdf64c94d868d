"""Frameworks' agents as arms (harness.agents.bridges), each on a scripted model through the run's endpoints: its LM
calls and tool calls land in the run's transcript with their steps, it answers in its own way, and its rows say
which framework it was and that no scaffold shaped it."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from harness.agents.arms import get_arm
from harness.models.scripted import ScriptedReply, policy_provider
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from harness.tasks.task import UserScenario
from harness.trace.events import InfoEvent, ModelEvent, ToolEvent

TASK = "customer-country"  # smoke: In which country is customer C-0007? (IN)
LOOKUP = ("get_customer", {"customer_id": "C-0007"})


def native(final: ScriptedReply):
    """A model that asks for the customer with a native tool call, then replies `final`."""
    def policy_for(task, arm):
        replies = [ScriptedReply(tool_calls=(LOOKUP,)), final]
        return lambda request: replies.pop(0)

    return policy_for


def code(task, arm):
    """A model that writes smolagents' CodeAgent's format: code calling the tool, then final_answer in code."""
    replies = ['Thought: look it up.\n<code>\nprint(get_customer(customer_id="C-0007")["country"])\n</code>',
               'Thought: done.\n<code>\nfinal_answer("IN")\n</code>']
    return lambda request: replies.pop(0)


def run(tmp_path, arm, policy):
    config = RunConfig(suite=load_suite("smoke"), model="scripted:bridge", arms=(arm,), task_ids=(TASK,),
                       out_dir=tmp_path, run_id="r")
    asyncio.run(Runner(config, provider=policy_provider("scripted:bridge", policy)).run())
    frame = read_results([tmp_path / "smoke" / "r.parquet"])
    assert len(frame) == 1
    row = frame.iloc[0]
    return row, read_trajectory(tmp_path / "smoke" / "r.parquet", row.sample_id)


@pytest.mark.parametrize(("arm", "policy", "source"), [
    ("smolagents-tools", native(ScriptedReply(tool_calls=(("final_answer", {"answer": "IN"}),))), "smolagents=="),
    ("smolagents-code", code, "smolagents=="),
    ("pydantic-ai", native(ScriptedReply(text="IN")), "pydantic-ai-slim=="),
    ("openai-agents", native(ScriptedReply(text="IN")), "openai-agents=="),
])
def test_a_framework_runs_on_the_runs_model_and_servers_and_its_rows_say_which(tmp_path, arm, policy, source):
    get_arm(arm).check_available()
    row, trajectory = run(tmp_path, arm, policy)
    assert row.success and row.answer == "IN" and row.error_type == "", row.error_message
    assert (row.llm_calls, row.tool_calls, row.turns) == (2, 1, 2)
    assert (row.arm_kind, row.scaffold, row.scaffold_applied) == ("python", "own", False)
    assert row.arm_source.startswith(source) and row.prompt_tokens > 0
    calls = [(type(e).__name__, e.step) for e in trajectory.events if isinstance(e, (ModelEvent, ToolEvent))]
    assert calls == [("ModelEvent", 0), ("ToolEvent", 0), ("ModelEvent", 1)]
    assert [c.tool for c in trajectory.tool_calls] == ["get_customer"]


TURNS = ("In which country is customer C-0007?", "Say that code again, please.")


def text_of(message: dict) -> str:
    content = message.get("content") or ""
    return content if isinstance(content, str) else " ".join(part.get("text", "") for part in content)


def two_turns(first: list, second, requests: list):
    """Turn 1: the framework's replies `first` (a lookup, then its answer "IN"); turn 2: `second`. Keeps requests."""
    def policy_for(task, arm):
        replies = [*first, second]

        def policy(request):
            requests.append(request)
            return replies[min(request.call_index, len(replies) - 1)]
        return policy

    return policy_for


TOOLS_ANSWER = ScriptedReply(tool_calls=(("final_answer", {"answer": "IN"}),))
CODE_LOOKUP = 'Thought: look it up.\n<code>\nprint(get_customer(customer_id="C-0007")["country"])\n</code>'
CODE_ANSWER = 'Thought: done.\n<code>\nfinal_answer("IN")\n</code>'


@pytest.mark.parametrize(("arm", "first", "second"), [
    ("smolagents-tools", [ScriptedReply(tool_calls=(LOOKUP,)), TOOLS_ANSWER], TOOLS_ANSWER),
    ("smolagents-code", [CODE_LOOKUP, CODE_ANSWER], CODE_ANSWER),
    ("pydantic-ai", [ScriptedReply(tool_calls=(LOOKUP,)), ScriptedReply(text="IN")], ScriptedReply(text="IN")),
    ("openai-agents", [ScriptedReply(tool_calls=(LOOKUP,)), ScriptedReply(text="IN")], ScriptedReply(text="IN")),
])
def test_a_framework_continues_the_conversation_in_the_next_user_turn(tmp_path, arm, first, second):
    get_arm(arm).check_available()
    suite = load_suite("smoke")
    task = replace(next(t for t in suite.tasks if t.id == TASK), prompt="", user=UserScenario("", turns=TURNS),
                   max_turns=10)
    config = RunConfig(suite=replace(suite, tasks=(task,)), model="scripted:bridge", arms=(arm,), out_dir=tmp_path,
                       run_id="r")
    requests: list = []
    asyncio.run(Runner(config, provider=policy_provider("scripted:bridge", two_turns(first, second, requests))).run())
    row = read_results([tmp_path / "smoke" / "r.parquet"]).iloc[0]
    assert row.success and row.answer == "IN" and row.error_type == "", row.error_message
    assert (row.llm_calls, row.tool_calls) == (3, 1)
    # the second turn's request: the first turn's message and answer, as the framework shows them, then the new one
    said = [(m["role"], text_of(m)) for m in requests[2].messages if m["role"] in ("user", "assistant")]
    assert TURNS[0] in said[0][1] and said[0][0] == "user"
    assert said[1][0] == "assistant" and "IN" in said[1][1]
    assert said[-1][0] == "user" and TURNS[1] in said[-1][1] and len(said) == 3
    trajectory = read_trajectory(tmp_path / "smoke" / "r.parquet", row.sample_id)
    assert [e.value["step"] for e in trajectory.events if isinstance(e, InfoEvent) and e.name == "user_turn"] == [1, 2]
