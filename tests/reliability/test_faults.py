"""Fault injection: a tool that raises, a tool that hangs, an LM that fails transiently or for good.
Each run is recorded with what went wrong; the other runs are unaffected."""

import asyncio
from pathlib import Path

import pytest
from fastmcp import FastMCP

from harness.mcp.registry import register_server
from harness.models.retry import RetryPolicy, TransientLMError
from harness.models.scripted import ScriptedRequest, policy_provider
from harness.run.records import read_trajectory
from harness.run.reference import ReferenceTrace, reference_policy
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from tests.registered import unregister_server

SUITE = """
suite: faults
servers: [faulty]
tasks:
  - id: raises
    category: fault
    prompt: "Call boom."
    expected: ok
    scorer: exact
    reference: print(boom())
  - id: hangs
    category: fault
    prompt: "Call hang."
    expected: ok
    scorer: exact
    reference: print(hang())
  - id: healthy
    category: fault
    prompt: "Call ping."
    expected: pong
    scorer: exact
    reference: print(ping())
"""
CALLS = {"raises": "boom", "hangs": "hang", "healthy": "ping"}


def faulty_server(ref) -> FastMCP:
    mcp = FastMCP("faulty")

    @mcp.tool
    def boom() -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    @mcp.tool
    async def hang() -> str:
        """Never answers in time."""
        await asyncio.sleep(30)
        return "late"

    @mcp.tool
    def ping() -> str:
        """Answers pong."""
        return "pong"

    return mcp


@pytest.fixture
def suite(tmp_path: Path):
    register_server("faulty", faulty_server, "tools that fail on purpose")
    path = tmp_path / "faults.yaml"
    path.write_text(SUITE)
    yield load_suite(str(path))
    unregister_server("faulty")


def replay(answer_for=lambda task: "pong" if task.id == "healthy" else "ok"):
    def policy_for(task, arm):
        trace = ReferenceTrace(answer_for(task), "", ((CALLS[task.id], {}),), {})
        return reference_policy(trace, task, arm)
    return policy_for


def run(config, provider):
    return {r.task_id: r for r in asyncio.run(Runner(config, provider=provider).run()).records}


def test_failing_and_hanging_tools_are_recorded_and_the_run_goes_on(suite, tmp_path):
    config = RunConfig(suite=suite, model="scripted:t", arms=("direct",), out_dir=tmp_path, tool_timeout_s=0.5)
    rows = run(config, policy_provider("scripted:t", replay()))
    assert rows["raises"].tool_errors == 1 and rows["raises"].error_type == ""
    assert rows["hangs"].tool_errors == 1 and rows["hangs"].error_type == ""
    hang = read_trajectory(tmp_path / "faults" / f"{rows['hangs'].run_id}.parquet", rows["hangs"].sample_id)
    assert hang.tool_calls[0].result_preview == "tool 'hang' did not answer within 0.5 s"  # cut at the limit
    assert rows["healthy"].success and rows["healthy"].tool_errors == 0


def test_transient_lm_errors_are_retried_and_counted(suite, tmp_path):
    failures = {"left": 2}

    def policy_for(task, arm):
        inner = replay()(task, arm)

        def policy(request: ScriptedRequest):
            if task.id == "healthy" and failures["left"]:
                failures["left"] -= 1
                raise TransientLMError("429 rate limited")
            return inner(request)
        return policy

    config = RunConfig(suite=suite, model="scripted:t", arms=("direct",), out_dir=tmp_path, task_ids=("healthy",))
    rows = run(config, policy_provider("scripted:t", policy_for, retry=RetryPolicy(base_delay_s=0.01)))
    assert rows["healthy"].success and rows["healthy"].lm_retries == 2


def test_a_permanent_lm_error_is_a_recorded_row(suite, tmp_path):
    def policy_for(task, arm):
        inner = replay()(task, arm)

        def policy(request: ScriptedRequest):
            if task.id == "raises":
                raise PermissionError("401 invalid api key")
            return inner(request)
        return policy

    config = RunConfig(suite=suite, model="scripted:t", arms=("direct",), out_dir=tmp_path, tool_timeout_s=0.5)
    rows = run(config, policy_provider("scripted:t", policy_for, retry=RetryPolicy(base_delay_s=0.01)))
    assert rows["raises"].error_type == "lm_error" and "invalid api key" in rows["raises"].error_message
    assert rows["raises"].lm_retries == 0
    assert rows["healthy"].success


def test_results_do_not_depend_on_concurrency(tmp_path):
    smoke = load_suite("smoke")
    traces = {
        "customer-country": (("get_customer", {"customer_id": "C-0007"}),),
        "shipped-total": (("search_customers", {"query": "Chen Tanaka"}),
                          ("list_orders", {"customer_id": "C-0007", "status": "shipped", "limit": 100})),
        "enterprise-active-count": (("list_customers", {"status": "active", "tier": "enterprise", "limit": 1}),),
        "vip-note": (("get_order", {"order_id": "O-00112"}),
                     ("add_note", {"customer_id": "C-0041", "body": "VIP follow-up"})),
    }
    answers = {"customer-country": "IN", "shipped-total": "27.0", "enterprise-active-count": "2", "vip-note": "C-0041"}

    def policy_for(task, arm):
        return reference_policy(ReferenceTrace(answers[task.id], "", traces[task.id], {}), task, arm)

    def columns(k):
        config = RunConfig(suite=smoke, model="scripted:t", arms=("direct",), epochs=3, out_dir=tmp_path / str(k),
                           max_concurrency=k)
        records = asyncio.run(Runner(config, provider=policy_provider("scripted:t", policy_for)).run()).records
        return sorted((r.sample_id, r.success, r.answer, r.total_tokens, r.tool_calls, r.turns) for r in records)

    sequential, concurrent = columns(1), columns(4)
    assert len(sequential) == 12 and all(row[1] for row in sequential)
    assert sequential == concurrent
