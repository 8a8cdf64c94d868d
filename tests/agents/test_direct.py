"""The direct arm with real dspy.ReAct against the real in-memory crm server, driven by scripted replies."""

import dspy

from harness.agents.direct import DirectAgent
from harness.models import make_lm, recording_lm_calls
from harness.servers import open_servers
from harness.suite import load_suite
from harness.testing import ReferenceTrace, ScriptedEngine, garbage_policy, reference_policy

TASK = next(t for t in load_suite("smoke").tasks if t.id == "shipped-total")
CALLS = (("search_customers", {"query": "Chen Tanaka"}),
         ("list_orders", {"customer_id": "C-0007", "status": "shipped", "limit": 100}))


async def run_direct(policy):
    async with open_servers(TASK.servers) as session:
        with recording_lm_calls() as log, dspy.context(lm=make_lm("scripted", ScriptedEngine(policy)),
                                                      adapter=dspy.ChatAdapter()):
            result = await DirectAgent().run(TASK, session)
    return result, log, session


async def test_direct_agent_calls_tools_then_answers():
    trace = ReferenceTrace("27.0", "27.0", CALLS, {})
    result, log, session = await run_direct(reference_policy(trace, TASK))
    assert result.error is None
    assert result.answer == "27.0"
    assert [s.content["tool"] for s in result.steps] == ["search_customers", "list_orders", "finish"]
    assert [c.tool for c in session.calls] == ["search_customers", "list_orders"]
    assert len(log.calls) == 4  # three ReAct steps and the extract step
    assert '"C-0007"' in result.observation_texts[0]
    assert any("list_orders" in text for text in result.tool_definition_texts)


async def test_tool_error_reaches_the_agent_as_an_observation():
    trace = ReferenceTrace("?", "", (("get_customer", {"customer_id": "C-9999"}),), {})
    result, _, session = await run_direct(reference_policy(trace, TASK))
    assert result.steps[0].content["observation"].startswith("Error: customer 'C-9999' not found")
    assert session.calls[0].is_error


async def test_unparseable_model_output_is_a_parse_error_not_a_crash():
    result, _, _ = await run_direct(garbage_policy)
    assert result.error is not None and result.error.type == "parse_error"
    assert result.answer == ""


def policy_calling(name: str, arguments: dict):
    """One step calling `name` with `arguments`, then finish; the answer is whatever."""
    steps = [(name, arguments)]

    def policy(request):
        if "next_tool_name" in request.output_fields:
            tool, args = steps.pop(0) if steps else ("finish", {})
            return {"next_thought": "next", "next_tool_name": tool, "next_tool_args": args}
        return {"reasoning": "done", "answer": "?"}
    return policy


async def test_arguments_that_do_not_fit_the_schema_are_the_servers_to_refuse():
    """A small model copied the schema as arguments; stock ReAct answered with a traceback of host code and
    counted no tool call. As in code mode, the server refuses the call (its own short message) and it counts."""
    result, _, session = await run_direct(policy_calling("search_customers", {"query": {"type": "string"}}))
    observation = result.steps[0].content["observation"]
    assert observation.startswith("Error: 1 validation error for call[search_customers]")
    assert "Input should be a valid string" in observation and len(observation) < 400
    assert "Traceback" not in observation and "site-packages" not in observation
    assert [(c.tool, c.is_error) for c in session.calls] == [("search_customers", True)]
    assert result.observation_texts == (observation,)
