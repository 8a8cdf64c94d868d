"""An arm whose agent knows nothing of the harness but the two endpoints (a loop on the `openai` client and an MCP
client), registered with `register_arm`, run by the runner like any arm: its LM calls, tool calls and steps are in
its transcript, and its rows are scored on the servers' end state. `scripted:reference` replays the task's reference
through it as native tool calls, because the arm declares the chat endpoint's `chat_tools` replay."""

import dspy
import pandas as pd
import pytest

import harness
from harness.agents.arms import ARMS, Arm, replays
from harness.agents.endpoints import CHAT_REPLAY
from harness.models.scripted import policy_provider
from harness.run.rebuild import rebuild
from harness.run.records import read_results
from harness.run.reference import ReferenceTrace, reference_policy
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from harness.trace.transcript_file import read_transcript_files
from tests.agents.endpoint_agent import OpenAILoopAgent

TRACES = {"vip-note": ReferenceTrace("C-0041", "C-0041", (("get_order", {"order_id": "O-00112"}),
                                                          ("add_note", {"customer_id": "C-0041",
                                                                        "body": "VIP follow-up"})), {}),
          "customer-country": ReferenceTrace("IN", "IN", (("get_customer", {"customer_id": "C-0007"}),), {})}


@pytest.fixture
def endpoint_arm():
    arm = harness.register_arm(Arm(
        "openai-loop", "a loop on the openai client and an MCP client, through the run's endpoints", False,
        lambda scaffold: dspy.Predict("task -> answer"), lambda pool, program, scaffold: OpenAILoopAgent(), "#333333",
        replays("chat_tools", CHAT_REPLAY), module="tests.agents.endpoint_agent", native_tools=True))
    yield arm
    ARMS.pop(arm.name)


async def test_an_endpoint_agent_runs_as_an_arm_recorded_and_scored_like_a_built_in_one(endpoint_arm, tmp_path):
    config = RunConfig(suite=load_suite("smoke"), model="scripted:replay", arms=("direct", "openai-loop"),
                       out_dir=tmp_path, run_id="r", task_ids=tuple(TRACES))
    provider = policy_provider("scripted:replay", lambda task, arm: reference_policy(TRACES[task.id], task, arm))
    summary = await Runner(config, provider=provider).run()
    frame = read_results([summary.path]).set_index(["task_id", "arm"])
    ours, direct = frame.loc[("vip-note", "openai-loop")], frame.loc[("vip-note", "direct")]
    assert ours.success and ours.error_type in ("", None)  # the answer and the note on the run's own crm server
    assert (ours.tool_calls, ours.turns, ours.tool_actions) == (2, 3, 2) == (direct.tool_calls, direct.turns, 2)
    assert ours.prompt_tokens > 0 and ours.completion_tokens > 0
    assert frame.loc[("customer-country", "openai-loop")].success


@pytest.mark.sandbox
async def test_scripted_reference_replays_each_smoke_task_through_the_endpoints(endpoint_arm, sandbox_pool, tmp_path):
    config = RunConfig(suite=load_suite("smoke"), model="scripted:reference", arms=("openai-loop",), out_dir=tmp_path,
                       run_id="r")
    summary = await Runner(config, pool=sandbox_pool).run()
    frame = read_results([summary.path])
    assert len(frame) == 4 and frame.success.all(), frame[["task_id", "answer", "error_message"]].to_string()
    assert (frame.tool_calls > 0).all() and (frame.turns == frame.tool_calls + 1).all()


async def test_an_agent_from_outside_ends_with_its_end_event_and_its_row_is_rebuilt_the_same(endpoint_arm, tmp_path):
    config = RunConfig(suite=load_suite("smoke"), model="scripted:replay", arms=("openai-loop",), out_dir=tmp_path,
                       run_id="r", task_ids=("customer-country",))
    provider = policy_provider("scripted:replay", lambda task, arm: reference_policy(TRACES[task.id], task, arm))
    summary = await Runner(config, provider=provider).run()
    [found] = read_transcript_files(summary.path.with_name("r.transcripts"))
    ends = [line for line in found.events if line["event"] == "end"]
    assert [(end["answer"], end["error"]) for end in ends] == [("IN", None)]  # one, as every arm's run
    before = read_results([summary.path])
    assert rebuild(summary.path) == (1, 0)
    pd.testing.assert_frame_equal(read_results([summary.path]), before)
