"""The code-mode arm in the real sandbox against the real in-memory crm server, driven by scripted replies."""

import dspy
import pytest

from harness.agents.codemode import CodeModeAgent, DiscoveryCodeModeAgent, strip_fences
from harness.models import make_lm, recording_lm_calls
from harness.servers import open_servers
from harness.suite import load_suite
from harness.testing import ScriptedEngine, ScriptedRequest

pytestmark = pytest.mark.sandbox
TASK = next(t for t in load_suite("smoke").tasks if t.id == "shipped-total")


def scripted(codes: list[tuple[str, bool]], answer: str):
    """Emit each (code, finished) in turn, then the answer."""
    pending = list(codes)

    def policy(request: ScriptedRequest):
        if "generated_code" in request.output_fields:
            code, finished = pending.pop(0)
            return {"generated_code": code, "finished": finished}
        return {"answer": answer}

    return policy


async def run_codemode(policy, pool, agent_class=CodeModeAgent, task=TASK):
    async with open_servers(task.servers) as session:
        with recording_lm_calls() as log, dspy.context(lm=make_lm("scripted", ScriptedEngine(policy)),
                                                      adapter=dspy.ChatAdapter()):
            result = await agent_class(pool).run(task, session)
    return result, log, session


def test_strip_fences_keeps_only_the_code():
    assert strip_fences("Here:\n```python\nprint(1)\n```\nDone") == "print(1)"
    assert strip_fences("print(2)") == "print(2)"


async def test_code_calls_bridged_tools_and_the_answer_is_extracted(sandbox_pool):
    result, log, session = await run_codemode(scripted([(TASK.reference, True)], "27.0"), sandbox_pool)
    assert result.error is None and result.answer == "27.0"
    assert [c.tool for c in session.calls] == ["search_customers", "list_orders"]
    assert result.steps[0].content["stdout"].strip() == "27.0"
    assert len(log.calls) == 2 and result.turns == 1
    assert "def list_orders(" in log.calls[0].messages[-1]["content"]  # the tool API is an input field


async def test_state_persists_between_steps_and_errors_are_observed(sandbox_pool):
    codes = [("rows = list_orders(customer_id='C-0007')['orders']\nprint(len(rows))", False),
             ("print(undefined_name)", False),
             ("print(sum(r['total'] for r in rows if r['status'] == 'shipped'))", True)]
    result, log, _ = await run_codemode(scripted(codes, "27.0"), sandbox_pool)
    assert [s.content["stdout"].strip() for s in result.steps] == ["6", "", "27.0"]
    assert "NameError" in result.steps[1].content["error"]
    assert "NameError" in log.calls[2].messages[-1]["content"]  # the error was shown to the LM
    assert result.turns == 3 and result.error is None


async def test_a_policy_violation_is_observed_and_counted(sandbox_pool):
    codes = [("import subprocess\nprint(subprocess.run(['ls']))", False), ("print(27.0)", True)]
    result, _, _ = await run_codemode(scripted(codes, "27.0"), sandbox_pool)
    assert result.policy_violations == 1
    assert "POLICY_VIOLATION" in result.steps[0].content["error"]
    assert result.answer == "27.0"


async def test_tool_errors_are_exceptions_the_code_can_catch(sandbox_pool):
    code = ("try:\n    get_customer(customer_id='C-9999')\nexcept Exception as exc:\n    print('caught:', exc)")
    result, _, session = await run_codemode(scripted([(code, True)], "x"), sandbox_pool)
    assert "caught:" in result.steps[0].content["stdout"] and "not found" in result.steps[0].content["stdout"]
    assert session.calls[0].is_error


async def test_running_out_of_turns_is_recorded(sandbox_pool):
    task = type(TASK)(**{**TASK.__dict__, "max_turns": 2})
    result, _, _ = await run_codemode(scripted([("print(1)", False), ("print(2)", False)], "?"), sandbox_pool,
                                      task=task)
    assert result.error is not None and result.error.type == "max_turns"


async def test_discover_arm_sees_an_index_and_looks_tools_up(sandbox_pool):
    code = ("print(search_tools('orders of a customer')[0])\n"
            "print(get_tool_schema('list_orders').splitlines()[0])")
    result, log, session = await run_codemode(scripted([(code, True)], "x"), sandbox_pool, DiscoveryCodeModeAgent)
    stdout = result.steps[0].content["stdout"]
    assert stdout.splitlines()[0].startswith("list_orders:")
    assert stdout.splitlines()[1].startswith("def list_orders(customer_id: str | None = None")
    prompt = log.calls[0].messages[-1]["content"]
    assert "list_orders: List orders" in prompt and "def list_orders(" not in prompt
    assert session.calls == []  # discovery is not an MCP call
