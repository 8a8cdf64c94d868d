"""The codemode-fastmcp arm: fastmcp's CodeMode meta-tools over the real in-memory crm server, driven by scripted
native tool calls; Monty's timeouts and errors come back as observations; calls inside execute are counted."""

import json

import pytest
from fastmcp import FastMCP

from harness.agents import example as worked_example
from harness.agents import fastmcp_codemode
from harness.agents.arms import check_arms
from harness.agents.fastmcp_codemode import (
    EXAMPLE_TOOLS,
    FastMCPCodeModeAgent,
    FastMCPCodeModeProgram,
    meta_session,
    meta_tool_demo,
)
from harness.agents.scaffold import GUIDED
from harness.errors import UserError
from harness.mcp.registry import register_server
from harness.mcp.servers import open_servers
from harness.models.scripted import ScriptedEngine, ScriptedReply, policy_provider
from harness.run.reference import ReferenceTrace, reference_policy
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from harness.tasks.task import ServerRef
from harness.trace.steps import step_acts
from tests.agent_runs import run_agent
from tests.registered import unregister_server

SMOKE = load_suite("smoke")
TASK = next(t for t in SMOKE.tasks if t.id == "shipped-total")
CALLS = (("search_customers", {"query": "Chen Tanaka"}),
         ("list_orders", {"customer_id": "C-0007", "status": "shipped", "limit": 100}))
TOTAL_CODE = ('c = await call_tool("search_customers", {"query": "Chen Tanaka"})\n'
              'orders = await call_tool("list_orders", {"customer_id": c["result"][0]["id"], "status": "shipped"})\n'
              'sum(o["total"] for o in orders["orders"])')


def replies(*items):
    pending = list(items)
    return lambda request: pending.pop(0)


def call(name, **arguments):
    return ScriptedReply(tool_calls=((name, arguments),))


async def run_arm(policy, task=TASK, execute_timeout_s=30.0):
    async with open_servers(task.servers) as session:
        result, log = await run_agent(FastMCPCodeModeAgent(GUIDED, execute_timeout_s=execute_timeout_s), task,
                                      session, ScriptedEngine(policy))
    return result, log, session


async def test_the_model_sees_only_the_meta_tools_and_final_answer():
    result, _, _ = await run_arm(replies(call("execute", code="1"), ScriptedReply(text="1")))
    assert result.answer == "1"
    names = {t["function"]["name"] for t in json.loads(result.tool_definition_texts[0])}
    assert names == {"search", "get_schema", "execute", "final_answer"}


async def test_search_then_get_schema_then_execute_solves_the_crm_task_and_counts_the_calls_inside_execute():
    result, log, session = await run_arm(replies(
        call("search", query="customer orders"), call("get_schema", tools=["search_customers", "list_orders"]),
        call("execute", code=TOTAL_CODE), call("final_answer", answer="27.0")))
    assert result.error is None and result.answer == "27.0"
    assert [s.calls[0].tool for s in result.steps] == ["search", "get_schema", "execute", "final_answer"]
    assert "search_customers" in result.steps[0].observation
    assert "list_orders" in result.steps[1].observation and "customer_id" in result.steps[1].observation
    assert result.steps[2].observation == "27.0"
    assert [c.tool for c in session.calls] == ["search_customers", "list_orders"]  # the run's tool calls
    assert [c["tool"] for c in result.steps[2].detail["tool_calls"]] == ["search_customers", "list_orders"]
    assert len(log.lm_calls) == 4 and result.turns == 4
    assert result.sandbox_time_s > 0
    assert [step_acts(s) for s in result.steps] == [(), (), ("code",), ()]  # only execute acts


async def test_under_guided_a_search_alone_is_no_action_so_an_answer_after_it_is_refused():
    result, _, session = await run_arm(replies(
        call("search", query="customer orders"),
        ScriptedReply(text="None"),  # answered from a list of tools: refused
        call("execute", code=TOTAL_CODE), ScriptedReply(text="27.0")))
    assert result.answer == "27.0" and result.error is None
    assert "refuse_answer_before_action" in result.steps[1].rules
    assert [c.tool for c in session.calls] == ["search_customers", "list_orders"]


async def test_what_the_code_prints_comes_back_with_its_value():
    result, _, _ = await run_arm(replies(call("execute", code='print("hello")\n2 + 3'), ScriptedReply(text="5")))
    assert result.steps[0].observation == '{"printed":"hello","result":5}'


async def test_a_monty_timeout_is_an_observation_and_the_run_goes_on():
    result, _, session = await run_arm(replies(call("execute", code="while True:\n    pass"),
                                               call("execute", code='(await call_tool("get_customer", '
                                                                    '{"customer_id": "C-0007"}))["country"]'),
                                               ScriptedReply(text="IN")), execute_timeout_s=0.3)
    first = result.steps[0].observation
    assert first.startswith("Error: TimeoutError: feed time limit exceeded")
    assert result.answer == "IN" and result.error is None
    assert result.steps[1].observation == "IN"  # a new sandbox for the next execute
    assert len(session.calls) == 1


async def test_a_monty_error_is_an_observation_with_what_was_printed_before_it():
    result, _, _ = await run_arm(replies(call("execute", code='print("before")\n1 / 0'),
                                         call("execute", code="def f(:\n  pass"), call("execute", code="2"),
                                         ScriptedReply(text="2")))
    assert result.steps[0].observation == "Error: before\nZeroDivisionError: division by zero"
    assert result.steps[1].observation.startswith("Error: SyntaxError: ")
    assert result.answer == "2" and result.error is None


async def test_a_failing_tool_inside_execute_is_an_observation_and_a_counted_tool_error():
    result, _, session = await run_arm(replies(
        call("execute", code='await call_tool("get_customer", {"customer_id": "C-9999"})'),
        call("final_answer", answer="?")))
    observation = result.steps[0].observation
    assert observation.startswith("Error: ") and "no customer has the id 'C-9999'" in observation
    assert len(session.calls) == 1 and session.calls[0].is_error


async def test_the_meta_tools_forward_through_the_run_session():
    async with open_servers(TASK.servers) as session:
        async with meta_session(session) as meta:
            assert set(meta.toolbox.names) == {"search", "get_schema", "execute"}
            _, text = await meta.call("execute", {"code": 'len((await call_tool("list_customers", {}))["customers"])'})
        assert text == "20" and [c.tool for c in session.calls] == ["list_customers"]
        assert meta.calls[0].tool == "execute"  # the meta call is logged apart from the run's tool calls


async def test_reference_replay_through_the_meta_tools_passes_smoke_on_the_runner(tmp_path):
    traces = {"customer-country": (("get_customer", {"customer_id": "C-0007"}),), "shipped-total": CALLS,
              "enterprise-active-count": (("list_customers", {"tier": "enterprise", "status": "active",
                                                              "limit": 100}),),
              "vip-note": (("get_order", {"order_id": "O-00112"}),
                           ("add_note", {"customer_id": "C-0041", "body": "VIP follow-up"}))}
    provider = policy_provider("scripted:t", lambda task, arm: reference_policy(
        ReferenceTrace(str(task.expected), "", traces[task.id], {}), task, arm))
    summary = await Runner(RunConfig(suite=SMOKE, model="scripted:t", arms=("codemode-fastmcp",), out_dir=tmp_path,
                                     run_id="fm"), provider=provider).run()
    from harness.run.records import read_results

    frame = read_results([summary.path])
    assert frame.success.all(), frame[["task_id", "answer", "score_reason", "error_message"]].to_string()
    assert (frame.turns == 4).all()  # search, get_schema, execute, final_answer
    assert frame.set_index("task_id").tool_calls.to_dict() == {k: len(v) for k, v in traces.items()}


def test_without_pydantic_monty_choosing_the_arm_is_a_one_line_error_naming_the_extra(monkeypatch):
    monkeypatch.setattr(fastmcp_codemode.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UserError, match=r"pip install 'harness\[fastmcp-codemode\]'"):
        check_arms(("direct", "codemode-fastmcp"))
    check_arms(("direct",))  # the other arms do not need it


async def test_the_meta_tools_give_the_embedded_model_a_grammar_llama_cpp_parses():
    pytest.importorskip("llama_cpp")
    from harness.agents.direct import tool_definitions
    from harness.models.grammars import check_grammar, tool_call_grammar, tool_reply_grammar

    async with open_servers(TASK.servers) as session, meta_session(session) as meta:
        tools = tool_definitions(meta.toolbox.specs)
    check_grammar(tool_call_grammar(tools))
    check_grammar(tool_reply_grammar(tools))


def library_server(ref) -> FastMCP:
    """The worked example's made-up tools, as a real server would serve them."""
    server = FastMCP("library")
    members, page = worked_example.STEPS[0].result, worked_example.STEPS[1].result

    @server.tool(description=EXAMPLE_TOOLS["search_members"])
    def search_members(query: str) -> list[dict]:
        return members

    @server.tool(description=EXAMPLE_TOOLS["list_loans"])
    def list_loans(member_id: str, status: str | None = None, limit: int = 20, offset: int = 0) -> dict:
        return page

    return server


async def test_the_worked_example_shows_what_the_meta_tools_really_return():
    register_server("example-library", library_server)
    try:
        async with open_servers((ServerRef("example-library"),)) as session, meta_session(session) as meta:
            seen = [(await meta.call(call["tool_calls"][0]["name"], call["tool_calls"][0]["arguments"]))[1]
                    for call in (turn["action"] for turn in meta_tool_demo()["history"])]
    finally:
        unregister_server("example-library")
    assert seen == [turn["observation"] for turn in meta_tool_demo()["history"]]
    assert FastMCPCodeModeProgram(GUIDED).step.demos[0].history[2]["action"]["tool_calls"][0]["name"] == "execute"
