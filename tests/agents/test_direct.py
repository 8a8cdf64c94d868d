"""The direct arm (native tool calling) against the real in-memory crm server, driven by scripted native calls."""

import asyncio
import json
import time
from dataclasses import replace

from harness.agents.direct import (
    ANSWER_ALONE,
    ONE_CALL_NOTE,
    PARALLEL_PROTOCOL,
    PROTOCOL,
    DirectAgent,
    call_tool,
    perform_calls,
    several_calls,
)
from harness.agents.scaffold import GUIDED
from harness.mcp.servers import ServerSession, open_servers
from harness.models.scripted import ScriptedEngine, ScriptedReply
from harness.run.reference import ReferenceTrace, reference_policy
from harness.tasks.suite import load_suite
from tests.agent_runs import run_agent

TASK = next(t for t in load_suite("smoke").tasks if t.id == "shipped-total")
PARALLEL = replace(GUIDED, parallel_tool_calls=True)  # guided runs one call per turn
CALLS = (("search_customers", {"query": "Chen Tanaka"}),
         ("list_orders", {"customer_id": "C-0007", "status": "shipped", "limit": 100}))


async def run_direct(policy, task=TASK, scaffold=GUIDED):
    async with open_servers(task.servers) as session:
        result, log = await run_agent(DirectAgent(scaffold), task, session, ScriptedEngine(policy), scaffold)
    return result, log, session


def replies(*items):
    pending = list(items)
    return lambda request: pending.pop(0)


async def test_direct_agent_calls_tools_natively_then_answers_with_final_answer():
    trace = ReferenceTrace("27.0", "27.0", CALLS, {})
    result, log, session = await run_direct(reference_policy(trace, TASK, "direct"))
    assert result.error is None and result.answer == "27.0"
    assert [s.calls[0].tool for s in result.steps] == ["search_customers", "list_orders", "final_answer"]
    assert [c.tool for c in session.calls] == ["search_customers", "list_orders"]
    assert len(log.lm_calls) == 3  # one LM call per turn, no extract step
    last = log.lm_calls[2].messages
    assert last[-2]["role"] == "assistant" and last[-2]["tool_calls"][0]["function"]["name"] == "list_orders"
    assert last[-1]["role"] == "tool" and '"total"' in last[-1]["content"]  # the result as a tool message
    assert '"C-0007"' in result.observation_texts[0]


async def test_a_reply_without_a_tool_call_is_the_answer_once_a_result_was_seen():
    result, log, session = await run_direct(replies(
        ScriptedReply(tool_calls=(("get_customer", {"customer_id": "C-0007"}),)), ScriptedReply(text="IN")))
    assert result.answer == "IN" and result.error is None and result.turns == 2 and len(session.calls) == 1


async def test_an_answer_before_any_tool_call_is_refused_as_an_observation():
    result, log, _ = await run_direct(replies(
        ScriptedReply(text="JP"), ScriptedReply(tool_calls=(("get_customer", {"customer_id": "C-0007"}),)),
        ScriptedReply(text="IN")))
    assert result.answer == "IN" and result.turns == 3
    assert "use the tools first" in log.lm_calls[1].messages[-1]["content"]
    assert log.lm_calls[1].messages[-1]["role"] == "user"  # no tool call to answer: a user message says why


async def test_without_parallel_calls_only_the_first_of_several_runs_and_the_model_is_told():
    result, log, session = await run_direct(replies(
        ScriptedReply(tool_calls=(("get_customer", {"customer_id": "C-0007"}), ("get_customer", {"customer_id": "C-0001"}))),
        ScriptedReply(tool_calls=(("final_answer", {"answer": "IN"}),))))
    assert [c.arguments for c in session.calls] == [{"customer_id": "C-0007"}]
    assert result.steps[0].observation.endswith(ONE_CALL_NOTE) and len(result.steps[0].calls) == 1
    assert result.steps[0].detail == {"dropped_calls": 1}
    assert result.answer == "IN"
    assert log.lm_calls[0].messages[0]["content"].startswith(PROTOCOL)  # "one call per turn"
    assert [m["role"] for m in log.lm_calls[1].messages[-2:]] == ["assistant", "tool"]
    assert len(log.lm_calls[1].messages[-2]["tool_calls"]) == 1  # the history shows the call that ran


async def test_tool_error_reaches_the_agent_as_an_observation():
    trace = ReferenceTrace("?", "", (("get_customer", {"customer_id": "C-9999"}),), {})
    result, _, session = await run_direct(reference_policy(trace, TASK, "direct"))
    assert result.steps[0].observation.startswith("Error: no customer has the id 'C-9999'")
    assert session.calls[0].is_error


async def test_arguments_that_do_not_fit_the_schema_are_the_servers_to_refuse():
    """As in code mode, the server refuses the call (its own short message) and it counts as a tool call."""
    result, _, session = await run_direct(replies(
        ScriptedReply(tool_calls=(("search_customers", {"query": {"type": "string"}}),)),
        ScriptedReply(text="?")))  # after a result (even an error), a plain reply ends the run
    observation = result.steps[0].observation
    assert observation.startswith("Error: 1 validation error for call[search_customers]")
    assert "Traceback" not in observation and len(observation) < 400
    assert [(c.tool, c.is_error) for c in session.calls] == [("search_customers", True)]


async def test_repeating_the_same_call_is_noted_and_counted():
    call = ScriptedReply(tool_calls=(("get_customer", {"customer_id": "C-0007"}),))
    result, log, _ = await run_direct(replies(call, call, ScriptedReply(text="IN")))
    assert result.repeated_actions == 1
    assert "same action as turn 1" in log.lm_calls[2].messages[-1]["content"]


async def test_the_worked_examples_come_before_the_task_as_the_same_calls_made_natively():
    from harness.agents.example import EXAMPLES, tool_result_text

    _, log, _ = await run_direct(replies(ScriptedReply(tool_calls=(("final_answer", {"answer": "1"}),))))
    messages = log.lm_calls[0].messages[1:]  # after the system message
    for example in EXAMPLES:  # each: its task, its native calls and their JSON results, then its answer
        assert messages[0] == {"role": "user", "content": example.task}
        for n, step in enumerate(example.calls):
            call, result = messages[1 + 2 * n], messages[2 + 2 * n]
            assert call["role"] == "assistant" and call["tool_calls"][0]["function"]["name"] == step.tool
            assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == step.arguments
            assert result["role"] == "tool" and result["content"] == tool_result_text(step.result)
        assert messages[1 + 2 * len(example.calls)] == {"role": "assistant", "content": example.answer}
        messages = messages[2 + 2 * len(example.calls):]
    assert messages == [{"role": "user", "content": TASK.prompt}]


# ---- several calls in one reply (the scaffold's parallel_tool_calls: on in plain, off in guided) ----

THREE = (("get_customer", {"customer_id": "C-0007"}), ("get_customer", {"customer_id": "C-0001"}),
         ("search_customers", {"query": "Chen Tanaka"}))


async def test_every_call_of_a_reply_runs_and_each_result_is_its_own_tool_message_in_order():
    result, log, session = await run_direct(replies(ScriptedReply(tool_calls=THREE), ScriptedReply(text="IN")),
                                            scaffold=PARALLEL)
    assert sorted(json.dumps([c.tool, c.arguments]) for c in session.calls) == sorted(json.dumps(c) for c in THREE)
    assert all(c.step == 0 for c in session.calls)  # each stamped with the turn that made it
    step = result.steps[0]
    assert [(c.tool, c.arguments) for c in step.calls] == list(THREE)
    assert '"C-0007"' in step.calls[0].observation and '"C-0001"' in step.calls[1].observation
    assert result.turns == 2 and result.answer == "IN"
    sent = log.lm_calls[1].messages  # the next prompt: the reply with its three calls, then three tool messages
    assistant, results = sent[-4], sent[-3:]
    ids = [call["id"] for call in assistant["tool_calls"]]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == [name for name, _ in THREE]
    assert [m["tool_call_id"] for m in results] == ids and len(set(ids)) == 3
    assert [m["content"] for m in results] == [c.observation for c in step.calls]
    assert log.lm_calls[0].messages[0]["content"].startswith(PARALLEL_PROTOCOL)


async def test_the_calls_of_a_reply_run_concurrently(monkeypatch):
    spans = []
    call = ServerSession.call

    async def slow(self, name, arguments, **kwargs):
        started = time.perf_counter()
        await asyncio.sleep(0.2)
        try:
            return await call(self, name, arguments, **kwargs)
        finally:
            spans.append((started, time.perf_counter()))

    monkeypatch.setattr(ServerSession, "call", slow)
    await run_direct(replies(ScriptedReply(tool_calls=THREE), ScriptedReply(text="IN")), scaffold=PARALLEL)
    assert len(spans) == 3
    assert max(end for _, end in spans) - min(start for start, _ in spans) < 0.5  # one after another: > 0.6 s


async def test_final_answer_among_several_calls_does_not_run_and_the_other_calls_do():
    result, _, session = await run_direct(replies(
        ScriptedReply(tool_calls=(("get_customer", {"customer_id": "C-0007"}), ("final_answer", {"answer": "JP"}))),
        ScriptedReply(tool_calls=(("final_answer", {"answer": "IN"}),))), scaffold=PARALLEL)
    assert [c.tool for c in session.calls] == ["get_customer"]
    assert result.steps[0].calls[1].observation == ANSWER_ALONE
    assert "refuse_unread_answer" in result.steps[0].rules  # counted in answers_refused
    assert result.answer == "IN" and result.turns == 2


async def test_without_the_unread_answer_rule_final_answer_among_several_calls_ends_the_run_after_the_others():
    scaffold = replace(PARALLEL, refuse_unread_answer=False)
    result, _, session = await run_direct(replies(
        ScriptedReply(tool_calls=(("get_customer", {"customer_id": "C-0007"}), ("final_answer", {"answer": "JP"}))),
        ScriptedReply(tool_calls=(("final_answer", {"answer": "IN"}),))), scaffold=scaffold)
    assert [c.tool for c in session.calls] == ["get_customer"]
    assert result.answer == "JP" and result.turns == 1
    assert "refuse_unread_answer" not in result.steps[0].rules


def test_a_call_whose_arguments_are_not_an_object_gets_its_own_error_and_the_others_run():
    action = several_calls("", [{"id": "a", "name": "get_customer", "arguments": '{"customer_id": "C-0007"}'},
                                {"id": "b", "name": "get_customer", "arguments": "[1]"}])
    assert action.kind == "tool"
    assert action.content["calls"][1]["error"] == "Error: the arguments of get_customer are not a JSON object"
    assert [c["arguments"] for c in action.reply["tool_calls"]] == [{"customer_id": "C-0007"}, "[1]"]


async def test_a_reply_whose_calls_all_failed_is_a_failed_action_and_one_result_is_enough_to_answer_from():
    async with open_servers(TASK.servers) as session:
        def call(name, arguments):
            return call_tool(session, name, arguments)

        failed = await perform_calls(call, [{"tool": "get_customer", "arguments": {}, "error": "Error: x"},
                                               {"tool": "final_answer", "arguments": {"answer": "1"}}], True)
        shown = await perform_calls(call, [{"tool": "get_customer", "arguments": {}, "error": "Error: x"},
                                              {"tool": "get_customer", "arguments": {"customer_id": "C-0007"}}], True)
    assert failed.error_kind == "parse" and failed.observations == ("Error: x", ANSWER_ALONE)
    assert shown.error_kind is None and shown.observation == "\n\n".join(shown.observations)
