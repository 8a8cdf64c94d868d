"""One episode: fresh servers (started within a limit), the agent's run under a time limit, failures as errors,
the task's score."""

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import dspy
import pytest

from harness.agents.base import AgentResult
from harness.agents.context import SampleContext
from harness.agents.scaffold import GUIDED
from harness.errors import UserError
from harness.limits import Limits
from harness.mcp.servers import ToolCallFailed
from harness.models.engine import make_lm
from harness.models.scripted import ScriptedEngine
from harness.run.episode import episode
from harness.tasks.suite import load_suite
from harness.tasks.task import ServerRef, Task
from harness.trace.errors import RunError
from tests.mcp import stub_servers
from tests.run.test_runner import SUITE_YAML  # task 0: customer C-0007's country, IN


@pytest.fixture
def task(tmp_path: Path) -> Task:
    path = tmp_path / "mini.yaml"
    path.write_text(SUITE_YAML)
    return load_suite(str(path)).tasks[0]


@dataclass
class LookupAgent:
    """Calls one tool and answers with a field of its result (or sleeps, or fails, as told)."""

    sleep_s: float = 0.0
    fail_with: BaseException | None = None
    error: RunError | None = None
    name: str = "lookup"
    crash_after_call: bool = False  # fail only once the tool call is made

    async def run(self, ctx: SampleContext) -> AgentResult:
        if self.fail_with is not None and not self.crash_after_call:
            raise self.fail_with
        value, _ = await ctx.session.call("get_customer", {"customer_id": "C-0007"})
        if self.fail_with is not None:
            raise self.fail_with
        await asyncio.sleep(self.sleep_s)
        return AgentResult(value["country"], error=self.error)


def run(task: Task, agent: Any, **options: Any):
    limits = Limits(timeout_s=options.pop("timeout_s", 30.0), tool_timeout_s=10.0,
                    server_start_timeout_s=options.pop("server_start_timeout_s", 60.0))
    return asyncio.run(episode(task, lambda: agent, scaffold=options.pop("scaffold", GUIDED), limits=limits,
                               **options))


def test_an_episode_scores_the_agents_answer_and_keeps_its_tool_calls(task):
    done = run(task, LookupAgent())
    assert (done.answer, done.score.passed, done.error) == ("IN", True, None)
    assert [call.tool for call in done.transcript.tool_calls] == ["get_customer"]


@dataclass
class GuessingAgent:
    """Calls a tool with an id that is neither in the task nor in any result, and answers with what it was told."""

    name: str = "guessing"

    async def run(self, ctx: SampleContext) -> AgentResult:
        try:
            value, _ = await ctx.session.call("get_customer", {"customer_id": "C-0012"})
        except ToolCallFailed as exc:
            return AgentResult(str(exc))
        return AgentResult(value["country"])


def test_an_episode_refuses_ids_the_run_has_not_seen(task):
    done = run(task, GuessingAgent())
    assert "customer_id 'C-0012' appears nowhere in the task" in done.answer
    assert [(call.tool, call.is_error) for call in done.transcript.tool_calls] == [("get_customer", True)]


def test_a_run_past_its_time_limit_is_a_timeout_and_keeps_the_servers_end_state(task):
    done = run(task, LookupAgent(sleep_s=5.0), timeout_s=0.5)
    assert done.error == RunError("timeout", "run exceeded 0.5 s")
    assert not done.score.passed and done.answer == ""
    assert "crm" in done.judged.end_state and len(done.transcript.tool_calls) == 1


def test_an_agent_that_crashes_is_an_internal_error_not_an_exception(task):
    done = run(task, LookupAgent(fail_with=KeyError("boom")))
    assert done.error == RunError("internal", "KeyError: 'boom'")
    assert not done.score.passed


def test_an_agent_that_crashes_midway_keeps_what_it_did_in_its_transcript(task):
    done = run(task, LookupAgent(fail_with=KeyError("boom"), crash_after_call=True))
    assert done.error == RunError("internal", "KeyError: 'boom'")
    assert [call.tool for call in done.transcript.tool_calls] == ["get_customer"]
    assert [type(e).__name__ for e in done.transcript.events] == ["ToolEvent", "EndEvent", "ScoreEvent"]


def test_the_agents_own_error_is_the_episodes_error(task):
    done = run(task, LookupAgent(error=RunError("max_turns", "no answer in 10 turns")))
    assert done.error.type == "max_turns" and done.answer == "IN"


def test_a_user_error_propagates(task):
    with pytest.raises(UserError, match="fix me"):
        run(task, LookupAgent(fail_with=UserError("fix me")))


def test_with_an_lm_factory_the_run_gets_that_lm_and_a_trace_of_its_own(task):
    seen = {}

    class LMReadingAgent(LookupAgent):
        async def run(self, ctx: SampleContext) -> AgentResult:
            seen["lm"], seen["trace"] = dspy.settings.lm, dspy.settings.trace
            return await super().run(ctx)

    lm = make_lm("scripted:t", ScriptedEngine(lambda request: "IN"))

    async def lm_factory(ctx):
        return lm

    outer_trace = ["an optimizer's trace"]
    with dspy.context(trace=outer_trace):
        run(task, LMReadingAgent(), lm_factory=lm_factory)
        assert seen == {"lm": lm, "trace": []}  # the run's own trace, not the caller's
        run(task, LMReadingAgent())
        assert seen["trace"] is outer_trace  # without a factory, the caller's settings apply


@pytest.fixture
def sleeper_task(task: Task, tmp_path: Path, monkeypatch) -> Task:
    """The task on an external server that starts and never answers."""
    config = stub_servers.write_config(tmp_path / "mcp_servers.json", sleeper=stub_servers.sleeping(tmp_path))
    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(config))
    return replace(task, servers=(ServerRef("sleeper"),))


@pytest.mark.integration
def test_a_server_that_never_answers_ends_the_run_as_server_error_at_the_start_limit(sleeper_task, tmp_path):
    agent = LookupAgent(fail_with=AssertionError("the agent ran without its servers"))
    done = run(sleeper_task, agent, server_start_timeout_s=1.0, log_dir=tmp_path / "logs")
    assert done.error.type == "server_error" and done.error.server == "sleeper"
    assert done.error.message.startswith("server 'sleeper' did not start: no answer") and "within 1 s" in done.error.message
    assert "waiting for a licence key" in done.error.message  # the last lines of its stderr log
    assert len(done.transcript.steps) == 0 and done.transcript.tool_calls == () and not done.score.passed


@pytest.mark.integration
def test_the_runs_own_time_limit_also_bounds_the_server_start(sleeper_task):
    done = run(sleeper_task, LookupAgent(), timeout_s=1.0, server_start_timeout_s=600.0)
    assert done.error.type == "server_error" and "within 1 s" in done.error.message
