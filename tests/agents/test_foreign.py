"""Any agent as an arm: a function of a team's (registered with `harness.agent`, or named `agent:MODULE:FUNCTION`)
runs on the same tasks, servers and model as the built-in arms, through the run's two endpoints, and its LM calls
and tool calls land in the run's transcript; its rows say where it came from and that no scaffold shaped it."""

import asyncio

import pandas as pd
import pytest

import harness
from harness.agents.arms import ARMS, get_arm
from harness.errors import UserError
from harness.models.scripted import ScriptedReply, policy_provider
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from harness.trace.events import ModelEvent, StepEvent, ToolEvent

TASK = "customer-country"  # smoke: In which country is customer C-0007? (IN)
LOOP = "agent:tests.agents.team_agent:tool_loop"


def looking_up(task, arm):
    """The model asks for the customer, then answers."""
    replies = [ScriptedReply(tool_calls=(("get_customer", {"customer_id": "C-0007"}),)), ScriptedReply(text="IN")]
    return lambda request: replies.pop(0)


def run(tmp_path, arms, policy=looking_up, **options):
    config = RunConfig(suite=load_suite("smoke"), model="scripted:team", arms=arms, task_ids=(TASK,),
                       out_dir=tmp_path, run_id="r", **options)
    asyncio.run(Runner(config, provider=policy_provider("scripted:team", policy)).run())
    return read_results([tmp_path / "smoke" / "r.parquet"]).set_index("arm")


@pytest.fixture(autouse=True)
def forget_registered_arms():
    built_in = dict(ARMS)
    yield
    ARMS.clear()
    ARMS.update(built_in)


def test_a_function_named_on_the_command_line_runs_through_the_runs_model_and_servers(tmp_path):
    frame = run(tmp_path, ("direct", LOOP))
    row = frame.loc[LOOP]
    assert row.success and row.answer == "IN" and row.error_type == ""
    assert (row.llm_calls, row.tool_calls, row.turns) == (2, 1, 2)
    assert (row.arm_kind, row.scaffold, row.scaffold_applied) == ("python", "own", False)
    assert row.arm_source == "module tests.agents.team_agent" and pd.isna(row.answers_refused)
    assert row.prompt_tokens > 0 and row.context_tool_definition_tokens > 0  # the tools it sent natively count
    trajectory = read_trajectory(tmp_path / "smoke" / "r.parquet", row.sample_id)
    steps = [(type(e).__name__, e.step) for e in trajectory.events if isinstance(e, (ModelEvent, ToolEvent))]
    assert steps == [("ModelEvent", 0), ("ToolEvent", 0), ("ModelEvent", 1)]  # each call stamped with its step
    assert sum(isinstance(e, StepEvent) for e in trajectory.events) == 2
    assert frame.loc["direct"].scaffold_applied and frame.loc["direct"].arm_kind == "builtin"


def test_a_registered_function_is_an_arm_by_its_name(tmp_path):
    from tests.agents.team_agent import tool_loop

    harness.agent("team-loop", "our production loop")(tool_loop)
    assert get_arm("team-loop").description == "our production loop"
    assert run(tmp_path, ("team-loop",)).loc["team-loop"].success


def test_a_blocking_function_runs_in_a_thread_while_the_endpoints_serve_it(tmp_path):
    frame = run(tmp_path, ("agent:tests.agents.team_agent:country_of_first_customer",),
                policy=lambda task, arm: lambda request: "IN")
    assert frame.iloc[0].success and frame.iloc[0].llm_calls == 1


def test_an_agent_that_raises_is_an_agent_error_row_not_a_crash(tmp_path):
    row = run(tmp_path, ("agent:tests.agents.team_agent:broken",)).iloc[0]
    assert row.error_type == "agent_error" and "the team's agent has a bug" in row.error_message


def test_an_arm_name_that_cannot_be_loaded_is_one_line():
    with pytest.raises(UserError, match="cannot import no_such_module"):
        get_arm("agent:no_such_module:agent")
    with pytest.raises(UserError, match="has no missing"):
        get_arm("agent:tests.agents.team_agent:missing")
    with pytest.raises(UserError, match="write agent:MODULE:FUNCTION"):
        get_arm("agent:just_a_module")


async def test_evaluate_async_runs_inside_a_running_loop_and_evaluate_says_to_await_it(tmp_path):
    task = harness.Task(id="country", prompt="In which country is customer C-0007? Two-letter code.", expected="IN",
                        servers=["crm"], scorer="exact")
    with pytest.raises(UserError, match="await harness.evaluate_async"):
        harness.evaluate([task], model="scripted:garbage", arms=["direct"], out_dir=tmp_path)
    result = await harness.evaluate_async([task], model="scripted:garbage", arms=["direct"], out_dir=tmp_path,
                                          limits=harness.Limits(timeout_s=60))
    (row,) = result.frame.itertuples()
    assert row.task_id == "country" and not row.success and row.timeout_s == 60
    assert set(result.transcripts) == {row.sample_id} and result.transcripts[row.sample_id].lm_calls
