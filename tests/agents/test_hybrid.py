"""The hybrid arm (native tool calls plus a run_python tool) in the real sandbox against the real in-memory crm
server, driven by scripted native calls; each server's callers decide which way its tools are offered."""

from dataclasses import replace

import pytest

from harness.agents.hybrid import CODE_TOOL, HybridAgent
from harness.agents.scaffold import GUIDED
from harness.mcp.servers import open_servers
from harness.models.scripted import ScriptedEngine, ScriptedReply, ScriptedRequest
from harness.run.row import action_counts
from harness.tasks.suite import load_suite
from harness.trace.steps import CodeStep, ToolStep
from tests.agent_runs import run_agent

pytestmark = pytest.mark.sandbox
TASK = next(t for t in load_suite("smoke").tasks if t.id == "shipped-total")


def with_callers(*callers: str):
    return replace(TASK, servers=tuple(replace(ref, callers=callers) for ref in TASK.servers))


def scripted(*calls: tuple[str, dict], seen: list[ScriptedRequest] | None = None):
    """Reply with each native call in turn (the code tool's among them), keeping every request in `seen`."""
    pending = list(calls)

    def policy(request: ScriptedRequest):
        if seen is not None:
            seen.append(request)
        return ScriptedReply(tool_calls=(pending.pop(0),))

    return policy


def code(text: str) -> tuple[str, dict]:
    return CODE_TOOL, {"code": text}


async def run_hybrid(policy, pool, task=TASK):
    async with open_servers(task.servers) as session:
        result, log = await run_agent(HybridAgent(pool, GUIDED), task, session, ScriptedEngine(policy))
    return result, log, session


async def test_a_native_call_then_code_then_the_answer_are_the_two_action_kinds_each_counted(sandbox_pool):
    result, log, session = await run_hybrid(scripted(
        ("search_customers", {"query": "Chen Tanaka"}),
        code('orders = list_orders(customer_id="C-0007", status="shipped", limit=100)["orders"]\n'
             'print(sum(o["total"] for o in orders))'),
        ("final_answer", {"answer": "27.0"})), sandbox_pool)
    assert result.error is None and result.answer == "27.0"
    assert [type(s) for s in result.steps] == [ToolStep, CodeStep, ToolStep]
    assert result.steps[1].stdout.strip() == "27.0" and result.steps[1].tool_calls == 1
    assert [(c.tool, c.in_code) for c in session.calls] == [("search_customers", False), ("list_orders", True)]
    assert action_counts(result.steps) == (1, 1)
    assert log.lm_calls[2].messages[-1] == {"role": "tool", "tool_call_id": "call_0", "name": CODE_TOOL,
                                         "content": "27.0"}  # what the code printed, as the code tool's result


async def test_the_stubs_reach_the_model_in_the_system_message_and_count_as_tool_definitions(sandbox_pool):
    seen: list[ScriptedRequest] = []
    result, _, _ = await run_hybrid(scripted(code('print(get_customer(customer_id="C-0007")["country"])'),
                                             ("final_answer", {"answer": "IN"}), seen=seen), sandbox_pool)
    assert "def list_orders(" in seen[0].system and "def final_answer(" in seen[0].system
    assert {"search_customers", "list_orders", CODE_TOOL, "final_answer"} <= set(seen[0].tools)
    assert any("def list_orders(" in text for text in result.tool_definition_texts)


async def test_variables_persist_between_code_calls_and_final_answer_in_code_ends_the_run(sandbox_pool):
    result, _, _ = await run_hybrid(scripted(code('country = get_customer(customer_id="C-0007")["country"]\n'
                                                  'print(country)'),
                                             code("final_answer(country)")), sandbox_pool)
    assert result.error is None and result.answer == "IN" and result.turns == 2
    assert action_counts(result.steps) == (0, 2)


async def test_a_tool_whose_server_is_declared_code_only_is_not_offered_natively(sandbox_pool):
    seen: list[ScriptedRequest] = []
    result, _, session = await run_hybrid(scripted(
        ("get_customer", {"customer_id": "C-0007"}), code('print(get_customer(customer_id="C-0007")["country"])'),
        ("final_answer", {"answer": "IN"}), seen=seen), sandbox_pool, task=with_callers("code"))
    assert set(seen[0].tools) == {CODE_TOOL, "final_answer"}  # the tool definitions the model gets
    assert result.steps[0].observation.startswith("Error: tool 'get_customer' can only be called from code")
    assert [(c.tool, c.in_code) for c in session.calls] == [("get_customer", True)]  # the native call never ran
    assert result.answer == "IN"


async def test_a_tool_whose_server_is_declared_direct_only_is_not_defined_in_the_sandbox(sandbox_pool):
    seen: list[ScriptedRequest] = []
    result, _, session = await run_hybrid(scripted(
        code('print(get_customer(customer_id="C-0007"))'),
        code('print(_harness_call_tool_json("get_customer", {"customer_id": "C-0007"}))'),
        ("get_customer", {"customer_id": "C-0007"}), ("final_answer", {"answer": "IN"}), seen=seen),
        sandbox_pool, task=with_callers("direct"))
    assert "def get_customer(" not in seen[0].system and "def final_answer(" in seen[0].system
    assert "get_customer" in seen[0].tools
    assert "NameError" in result.steps[0].observation and "get_customer" in result.steps[0].observation
    assert "cannot be called from code" in result.steps[1].observation
    assert [(c.tool, c.in_code) for c in session.calls] == [("get_customer", False)]
    assert result.answer == "IN"


async def test_a_code_call_without_code_is_an_error_observation(sandbox_pool):
    result, _, _ = await run_hybrid(scripted((CODE_TOOL, {}), ("get_customer", {"customer_id": "C-0007"}),
                                             ("final_answer", {"answer": "IN"})), sandbox_pool)
    assert result.steps[0].observation.startswith(f"Error: {CODE_TOOL} takes the Python to run")
    # the empty code call is a tool step of its own, counted as the code action it chose to be
    assert isinstance(result.steps[0], ToolStep) and action_counts(result.steps) == (1, 1)
