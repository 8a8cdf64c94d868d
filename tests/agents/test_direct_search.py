"""The direct-search arm against the real in-memory crm server: its tools start as tool_search and final_answer, each
search adds the definitions it finds (recorded as tool definitions shown), and a tool not yet offered is refused."""

import json
from dataclasses import replace

import pytest

from harness.agents.direct_search import SEARCH_SENTENCE, SEARCH_TOOL, DirectSearchAgent, DirectSearchProgram
from harness.agents.scaffold import GUIDED, PLAIN
from harness.mcp.servers import open_servers
from harness.models.scripted import ScriptedEngine, ScriptedReply
from harness.run.reference import ReferenceTrace, reference_policy
from harness.trace.steps import step_acts
from tests.agent_runs import run_agent
from tests.agents.test_direct import CALLS, TASK, replies


async def run_search(policy, scaffold=PLAIN, task=TASK):
    async with open_servers(task.servers) as session:
        result, log = await run_agent(DirectSearchAgent(scaffold), task, session, ScriptedEngine(policy), scaffold)
    return result, log, session


def offered(call):
    return [tool["function"]["name"] for tool in call.tools]


async def test_the_first_call_offers_only_the_search_and_each_search_adds_what_it_found():
    result, log, session = await run_search(replies(
        ScriptedReply(tool_calls=((SEARCH_TOOL, {"query": "get_customer"}),)),
        ScriptedReply(tool_calls=(("get_customer", {"customer_id": "C-0007"}),)),
        ScriptedReply(text="IN")))
    assert result.error is None and result.answer == "IN"
    assert offered(log.lm_calls[0]) == [SEARCH_TOOL, "final_answer"]
    second = offered(log.lm_calls[1])
    assert second[0] == SEARCH_TOOL and second[1] == "get_customer" and second[-1] == "final_answer"
    assert len(second) == 2 + PLAIN.tool_search_limit
    assert [c.tool for c in session.calls] == ["get_customer"]  # the search never reaches the servers
    assert "get_customer" in result.observation_texts[0] and "now among your tools" in result.observation_texts[0]
    definitions = result.tool_definition_texts
    assert len(definitions) == 1 + PLAIN.tool_search_limit  # the first tools, then each added definition
    assert json.loads(definitions[1])["function"]["name"] == "get_customer"
    assert [step_acts(s) for s in result.steps] == [(), ("tool",), ()]  # a search acts on no tool of the run


async def test_the_scaffold_sets_how_many_definitions_one_search_adds():
    scaffold = replace(PLAIN, tool_search_limit=2, tool_search_method="keyword")
    _, log, _ = await run_search(replies(
        ScriptedReply(tool_calls=((SEARCH_TOOL, {"query": "customer orders"}),)), ScriptedReply(text="done")),
        scaffold)
    assert len(offered(log.lm_calls[1])) == 4


async def test_a_tool_not_offered_with_the_reply_is_refused_even_beside_its_search():
    result, _, session = await run_search(replies(
        ScriptedReply(tool_calls=((SEARCH_TOOL, {"query": "get_customer"}),
                                  ("get_customer", {"customer_id": "C-0007"}))),
        ScriptedReply(text="nothing")))
    assert session.calls == []
    assert result.steps[0].calls[1].observation.startswith("Error: tool 'get_customer' is not among your tools")


async def test_under_guided_a_search_alone_is_no_action_so_the_next_reply_must_act_and_an_answer_is_refused_once():
    result, _, session = await run_search(replies(
        ScriptedReply(tool_calls=((SEARCH_TOOL, {"query": "get_customer"}),)),
        ScriptedReply(text="JP"),  # answered from a list of tools: refused once
        ScriptedReply(tool_calls=(("get_customer", {"customer_id": "C-0007"}),)),
        ScriptedReply(text="IN")), scaffold=GUIDED)
    assert result.answer == "IN" and result.error is None
    assert "refuse_answer_before_action" in result.steps[1].rules
    assert "answer_or_act_grammar" in result.steps[0].rules  # before any action: the first reply must act
    assert "answer_or_act_grammar" in result.steps[2].rules  # after a search alone: still must act
    assert "answer_or_act_grammar" not in result.steps[3].rules  # after a call showed a result: may answer
    assert [c.tool for c in session.calls] == ["get_customer"]


async def test_a_search_that_finds_nothing_says_so_and_adds_no_tool():
    result, log, _ = await run_search(replies(
        ScriptedReply(tool_calls=((SEARCH_TOOL, {"query": "zebra"}),)), ScriptedReply(text="none")))
    assert result.observation_texts[0].startswith("No tool matches 'zebra'")
    assert offered(log.lm_calls[1]) == [SEARCH_TOOL, "final_answer"]


async def test_the_reference_replays_through_searches_for_its_tools_by_name():
    trace = ReferenceTrace("27.0", "27.0", CALLS, {})
    result, _, session = await run_search(reference_policy(trace, TASK, "direct-search"), scaffold=GUIDED)
    assert result.error is None and result.answer == "27.0"
    assert [s.calls[0].tool for s in result.steps] == [SEARCH_TOOL, SEARCH_TOOL, "search_customers", "list_orders",
                                                        "final_answer"]
    assert [c.tool for c in session.calls] == ["search_customers", "list_orders"]


async def test_with_parallel_calls_the_replay_searches_for_every_tool_in_one_reply():
    trace = ReferenceTrace("27.0", "27.0", CALLS, {})
    result, log, _ = await run_search(reference_policy(trace, TASK, "direct-search", parallel=True))
    assert result.answer == "27.0" and len(result.steps[0].calls) == 2 and len(log.lm_calls) == 4


def test_the_instructions_and_worked_examples_search_first():
    program = DirectSearchProgram(GUIDED)
    assert SEARCH_SENTENCE in program.step.signature.instructions
    first = program.step.demos[0]["history"][0]["action"]["tool_calls"][0]
    assert first["name"] == SEARCH_TOOL
    assert DirectSearchProgram(PLAIN).step.demos == []


@pytest.mark.sandbox
async def test_the_reference_replays_at_every_catalogue_size(sandbox_pool, tmp_path):
    from harness.run.records import read_results
    from harness.run.runner import RunConfig, Runner
    from harness.tasks.registry import load_suite as load_any_suite

    suite = load_any_suite("catalogue")
    config = RunConfig(suite=suite, model="scripted:reference", arms=("direct-search",), out_dir=tmp_path, run_id="s")
    frame = read_results([(await Runner(config, pool=sandbox_pool).run()).path])
    assert sorted(frame["catalogue_size"].unique()) == [16, 64, 256, 1024]
    assert frame["success"].all() and len(frame) == 20, frame[~frame["success"]][["task_id", "score_reason"]]
    # it is sent the definitions it searched for only: at 1,024 tools a whole run holds fewer definition tokens than
    # the one prompt of all of them that direct sends on every call
    from harness.agents.direct import tool_definitions
    from harness.models.tokens import count_tokens

    task = next(t for t in suite.tasks if t.catalogue_size == 1024)
    async with open_servers(task.servers) as session:
        every = count_tokens(json.dumps(tool_definitions(session.toolbox.specs)))
    largest = frame[frame["catalogue_size"] == 1024]
    assert (largest["context_tool_definition_tokens"] < every).all()
