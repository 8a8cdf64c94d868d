"""The react arm (DSPy ReAct's text protocol in the shared loop) against the real in-memory crm server."""

import json

from harness.agents.direct import tool_definitions
from harness.agents.react import STOP, ReactAgent
from harness.agents.scaffold import GUIDED
from harness.mcp.servers import open_servers
from harness.models.messages import ReplyShape, request_reply_shape
from harness.models.scripted import ScriptedEngine, garbage_policy
from harness.run.reference import ReferenceTrace, reference_policy
from harness.tasks.suite import load_suite
from tests.agent_runs import run_agent

TASK = next(t for t in load_suite("smoke").tasks if t.id == "shipped-total")
CALLS = (("search_customers", {"query": "Chen Tanaka"}),
         ("list_orders", {"customer_id": "C-0007", "status": "shipped", "limit": 100}))


async def run_react(policy, engine_class=ScriptedEngine):
    engine = engine_class(policy)
    async with open_servers(TASK.servers) as session:
        result, log = await run_agent(ReactAgent(GUIDED), TASK, session, engine)
    return result, log, session


async def test_react_calls_tools_and_its_final_answer_tool_carries_the_answer():
    result, log, session = await run_react(reference_policy(ReferenceTrace("27.0", "27.0", CALLS, {}), TASK, "react"))
    assert result.error is None and result.answer == "27.0"
    assert [s.calls[0].tool for s in result.steps] == ["search_customers", "list_orders", "final_answer"]
    assert len(log.lm_calls) == 3  # no extract step
    system = log.lm_calls[0].messages[0]["content"]
    assert "final_answer, whose description is" in system and "(1) search_customers" in system
    assert "[[ ## observation_0 ## ]]" in log.lm_calls[1].messages[-1]["content"]


async def reference_requests() -> tuple[list, tuple[dict, ...]]:
    """The requests a reference react run sends its engine, and the run's tool definitions."""
    requests = []

    class Spy(ScriptedEngine):
        def complete(self, request):
            requests.append(request)
            return super().complete(request)

    _, _, session = await run_react(reference_policy(ReferenceTrace("27.0", "27.0", CALLS, {}), TASK, "react"), Spy)
    return requests, tuple(tool_definitions(session.toolbox.specs))


async def test_react_asks_to_stop_where_an_invented_observation_would_start():
    requests, _ = await reference_requests()
    assert all(set(STOP) <= set(r.config.stop) for r in requests)
    assert "[[ ## observation" in STOP


async def test_react_declares_a_step_over_the_runs_tools_and_sends_no_grammar_text():
    requests, tools = await reference_requests()
    assert requests and all(request_reply_shape(r) == ReplyShape("react_step", tools=tools) for r in requests)
    assert all("::=" not in json.dumps(r.config.extensions) for r in requests)


async def test_an_unreadable_reply_is_a_parse_error_after_the_last_turn():
    result, log, _ = await run_react(garbage_policy)
    assert result.error is not None and result.error.type == "parse_error" and result.answer == ""
    # one call per turn (no JSONAdapter retry in another format), stopped once the same reply keeps coming
    assert len(log.lm_calls) == GUIDED.max_repeats + 1
    assert "could not be read as an action" in log.lm_calls[1].messages[-1]["content"]
