"""An arm registered from outside the package (`harness.register_arm`) is an arm like the built-in ones: --arms
takes it, the runner runs it, its rows and trajectories are written, and it is listed after the built-in arms."""

import asyncio

import pytest

import harness
from harness.agents.arms import ARMS, Arm, arm_names, arm_rank, get_arm
from harness.agents.direct import DirectAgent, DirectProgram
from harness.models.scripted import ScriptedReply, policy_provider
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite


@pytest.fixture
def registered():
    arm = Arm("team-direct", "a team's own tool-calling agent", False, lambda scaffold: DirectProgram(scaffold),
              lambda pool, program, scaffold: DirectAgent(scaffold, program=program), "#123456", None,
              module=__name__)
    harness.register_arm(arm)
    yield arm
    ARMS.pop(arm.name)


def answering(task, arm):
    replies = [ScriptedReply(tool_calls=(("get_customer", {"customer_id": "C-0007"}),)),
               ScriptedReply(tool_calls=(("final_answer", {"answer": "IN"}),))]
    return lambda request: replies.pop(0)


def test_a_registered_arm_runs_beside_the_built_in_ones(registered, tmp_path):
    assert get_arm("team-direct") is registered and arm_names()[-1] == "team-direct"
    assert arm_rank("team-direct") == len(ARMS) - 1
    suite = load_suite("smoke")
    config = RunConfig(suite=suite, model="scripted:team", arms=("direct", "team-direct"), out_dir=tmp_path,
                       run_id="r", task_ids=("customer-country",))
    asyncio.run(Runner(config, provider=policy_provider("scripted:team", answering)).run())
    frame = read_results([tmp_path / "smoke" / "r.parquet"]).set_index("arm")
    assert frame.loc["team-direct"].success and frame.loc["team-direct"].tool_calls == 1
    assert frame.loc["team-direct"].total_tokens == frame.loc["direct"].total_tokens  # the same agent, measured alike
