"""The bfcl adapter on a look-alike package: entries as tasks with their user turns, a fresh instance of each class
behind each run's server, the turns given one after another with each turn's calls kept apart, and BFCL's checker
(a stub here, recording its inputs) given those calls; one test against the real package when it is installed."""

import asyncio
import importlib
import importlib.util
import sys
from pathlib import Path

import pytest
from fastmcp import Client

import harness.adapters  # noqa: F401  registers the adapters
from harness.adapters import bfcl_package
from harness.adapters.bfcl import BfclMultiTurn, ground_truth_call
from harness.agents.arms import get_arm
from harness.agents.replay import ReferenceTrace
from harness.agents.turn_reference import turn_traces, turns_policy
from harness.adapters.bfcl_scoring import UNREADABLE, calls_by_turn
from harness.errors import UserError
from harness.mcp.held_tools import held_tools
from harness.models.scripted import ScriptedReply, ScriptedRequest, policy_provider
from harness.run.rebuild import rebuild
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner
from harness.tasks.registry import load_suite
from harness.trace.calls import ToolCallRecord
from harness.trace.events import CodeExecution, InfoEvent
from tests.adapters.bfcl_lookalike import write_bfcl_lookalike


def _forget_bfcl() -> None:
    for name in [n for n in sys.modules if n == "bfcl_eval" or n.startswith("bfcl_eval.")]:
        del sys.modules[name]
    bfcl_package.load_bfcl.cache_clear()
    bfcl_package._by_id.cache_clear()
    importlib.invalidate_caches()


@pytest.fixture
def checkout(tmp_path: Path):
    """The look-alike, imported as `bfcl_eval` for this test only."""
    _forget_bfcl()
    saved = list(sys.path)
    yield write_bfcl_lookalike(tmp_path / "gorilla")
    sys.path[:] = saved
    _forget_bfcl()


def _checker():
    return sys.modules["bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker"]


def test_entries_load_as_tasks_with_their_user_turns(checkout):
    suite = load_suite(f"bfcl:{checkout}#multi_turn_base")
    assert [t.id for t in suite.tasks] == ["multi_turn_base_0", "multi_turn_base_1"]
    first = suite.tasks[0]
    assert first.user.turns == ("Add 2 to the counter.", "Now add 3.") and first.prompt == ""
    assert first.max_turns == 40 and first.category == "multi_turn_base"  # BFCL's 20 steps per user turn
    assert first.servers[0].source == f"bfcl:{checkout}#multi_turn_base_0"
    assert load_suite(suite.spec).tasks == suite.tasks
    assert [t.id for t in load_suite(f"bfcl:{checkout}").tasks] == [  # base, miss_func, miss_param, long_context
        "multi_turn_base_0", "multi_turn_base_1", "multi_turn_miss_func_0", "multi_turn_long_context_0"]


def test_bad_specs_and_a_missing_package_are_one_line_errors(checkout, tmp_path, monkeypatch):
    with pytest.raises(UserError, match="no category 'multi_turn_nowhere'"):
        load_suite(f"bfcl:{checkout}#nowhere")
    with pytest.raises(UserError, match="not a gorilla checkout"):
        load_suite(f"bfcl:{tmp_path / 'empty'}")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(UserError, match=r"not installed; install it with: pip install --no-deps bfcl-eval=="):
        load_suite("bfcl:installed")


def test_each_run_gets_fresh_instances_with_the_docs_as_tools_and_results_as_bfcl_returns_them(checkout):
    adapter = BfclMultiTurn()

    async def session(entry: str):
        async with Client(adapter.build_server(Path(f"{checkout}#{entry}"), "bfcl")) as client:
            tools = {t.name: t.inputSchema for t in await client.list_tools()}
            results = [(await client.call_tool(name, args)).content[0].text
                       for name, args in (("increment", {"by": 2}), ("increment", {"by": -1}), ("echo", {"text": "a"}))]
            return tools, results

    tools, results = asyncio.run(session("multi_turn_base_0"))
    assert set(tools) == {"increment", "read", "echo"}
    assert tools["echo"]["properties"]["times"]["type"] == "number" and tools["increment"]["type"] == "object"
    assert tools["echo"]["properties"]["prefix"]["default"] is None  # BFCL's "None" is Python's None: JSON's null
    assert results == ['{"value": 12}', "Error during execution: cannot go down", "a"]
    assert asyncio.run(session("multi_turn_base_0"))[1][0] == '{"value": 12}'  # a fresh instance: from 10 again

    async def read_long() -> str:
        async with Client(adapter.build_server(Path(f"{checkout}#multi_turn_long_context_0"), "bfcl")) as client:
            return (await client.call_tool("read", {})).content[0].text

    assert asyncio.run(read_long()) == '{"value": 1, "long_context": true}'  # long_context's flag passed on


def turn_by_turn(task, arm):
    """Turn 1: increment by 2 then answer; turn 2: increment by 3 then answer."""
    def policy(request: ScriptedRequest) -> ScriptedReply:
        n = request.call_index
        return [ScriptedReply(tool_calls=(("increment", {"by": 2}),)), ScriptedReply("Added 2."),
                ScriptedReply(tool_calls=(("increment", {"by": 3}),)), ScriptedReply("Added 3.")][min(n, 3)]
    return policy


def _run(checkout, tmp_path, policy, run_id="r1"):
    suite = load_suite(f"bfcl:{checkout}#multi_turn_base")
    config = RunConfig(suite=suite, model="scripted:agent", arms=("direct",), task_ids=("multi_turn_base_0",),
                       out_dir=tmp_path / run_id, run_id=run_id)
    summary = asyncio.run(Runner(config, provider=policy_provider("scripted:agent", policy)).run())
    return summary, read_results([tmp_path / run_id]).iloc[0]


def test_the_turns_are_given_one_after_another_and_the_checker_gets_each_turns_calls(checkout, tmp_path):
    summary, row = _run(checkout, tmp_path, turn_by_turn)
    assert bool(row.success) and row.score_reason == "bfcl: valid" and row.error_type == ""
    received = _checker().RECEIVED[-1]
    assert received["decoded"] == [[["increment(by=2)"]], [["increment(by=3)"]]]
    assert received["ground_truth"] == [["increment(by=2)"], ["increment(by=3)"]]
    assert (received["entry"], received["category"]) == ("multi_turn_base_0", "multi_turn_base")
    trajectory = read_trajectory(summary.path, row.sample_id)
    assert [s.observation for s in trajectory.steps if s.kind == "answer"] == ["Now add 3.", ""]
    assert trajectory.prompt == "Add 2 to the counter."


def test_calls_made_in_the_wrong_turn_fail_with_the_checkers_reason_and_each_run_has_its_own_name(checkout, tmp_path):
    def all_at_once(task, arm):
        replies = [ScriptedReply(tool_calls=(("increment", {"by": 2}), ("increment", {"by": 3}))),
                   ScriptedReply("Done."), ScriptedReply("Nothing more.")]
        return lambda request: replies[min(request.call_index, 2)]

    _, row = _run(checkout, tmp_path, all_at_once)
    assert not bool(row.success) and row.score_reason == "bfcl: stub:mismatch: turn 0 differs"
    assert _checker().RECEIVED[-1]["decoded"] == [[["increment(by=2)", "increment(by=3)"]], []]
    _run(checkout, tmp_path, turn_by_turn, run_id="r2")
    names = [r["model_name"] for r in _checker().RECEIVED]
    assert len(set(names)) == len(names) == 2
    utils = sys.modules["bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils"]
    assert not [k for k in vars(utils) if k.startswith("harness_")]  # the checker's cached instances dropped


def test_calls_the_checker_cannot_read_fail_the_run_with_its_message(checkout, tmp_path):
    def unreadable(task, arm):
        replies = [ScriptedReply(tool_calls=(("increment", {"by": "unreadable"}),)), ScriptedReply("Done."),
                   ScriptedReply("Done again.")]
        return lambda request: replies[min(request.call_index, 2)]

    _, row = _run(checkout, tmp_path, unreadable)
    assert not bool(row.success) and row.score_reason.startswith(f"{UNREADABLE}: SyntaxError")


def test_calls_are_grouped_by_turn_then_by_step_and_other_servers_calls_are_left_out():
    calls = (ToolCallRecord("a", {"x": 1}, server="bfcl", step=0), ToolCallRecord("b", {}, server="bfcl", step=0),
             ToolCallRecord("c", {"s": "q"}, server="bfcl", step=1), ToolCallRecord("d", {}, server="other", step=3),
             ToolCallRecord("e", {}, server="bfcl", step=3))
    assert calls_by_turn(calls, (2,), 3) == [[["a(x=1)", "b()"], ["c(s='q')"]], [["e()"]], []]


async def _tool_names(server) -> set[str]:
    async with Client(server) as client:
        return {t.name for t in await client.list_tools()}


@pytest.mark.skipif(importlib.util.find_spec("bfcl_eval") is None, reason="bfcl-eval is not installed")
def test_the_real_package_loads_serves_and_scores_its_own_ground_truth():
    _forget_bfcl()
    try:
        suite = load_suite("bfcl:installed#multi_turn_base")
        assert len(suite.tasks) == 200 and len(suite.tasks[0].user.turns) == len(
            bfcl_package.load_bfcl("installed").ground_truth("multi_turn_base_0"))
        bfcl = bfcl_package.load_bfcl("installed")
        truth = bfcl.ground_truth("multi_turn_base_0")
        from harness.adapters.bfcl_scoring import BfclChecker
        from harness.tasks.scorers import ScoreContext

        scorer = BfclChecker(package="installed", entry="multi_turn_base_0")
        first_turn = tuple(ToolCallRecord("cd", {"folder": "document"}, server="bfcl", step=0) for _ in range(1))
        # a run that stopped after one call of its first turn: BFCL's own checker says what is wrong
        verdict = scorer.evaluate(ScoreContext(answer="", tool_calls=first_turn, user_turn_steps=(0,)))
        assert not verdict.passed and verdict.reason.startswith("bfcl: multi_turn:")
        tools = asyncio.run(_tool_names(BfclMultiTurn().build_server(Path("installed#multi_turn_base_0"), "bfcl")))
        assert {"cd", "mkdir", "mv", "post_tweet"} <= tools and len(truth) == 4
    finally:
        _forget_bfcl()


def test_a_miss_func_entry_holds_its_functions_back_until_their_turn_given_with_bfcls_message(checkout):
    task = load_suite(f"bfcl:{checkout}#miss_func").tasks[0]
    assert task.user.turns == ("Read the counter.", "More functions now.")  # the package's own message
    assert task.metadata["held_back"] == {"1": ["read"]}
    server = BfclMultiTurn().build_server(Path(f"{checkout}#multi_turn_miss_func_0"), "bfcl")
    assert asyncio.run(_tool_names(server)) == {"increment"} and held_tools(server) == {1: ("read",)}


def _miss_func_run(checkout, tmp_path, arm, seen_tools):
    def policy_for(task, arm_name):
        def policy(request: ScriptedRequest) -> ScriptedReply:
            seen_tools.append(set(request.tools))
            return [ScriptedReply("There is no function to read it."), ScriptedReply(tool_calls=(("read", {}),)),
                    ScriptedReply("It is 4.")][min(request.call_index, 2)]
        return policy

    suite = load_suite(f"bfcl:{checkout}#miss_func")
    config = RunConfig(suite=suite, model="scripted:agent", arms=(arm,), out_dir=tmp_path / arm, run_id=arm)
    summary = asyncio.run(Runner(config, provider=policy_provider("scripted:agent", policy_for)).run())
    return summary, read_results([tmp_path / arm]).iloc[0]


def test_direct_is_sent_the_offered_function_at_its_turn_and_the_checker_gets_its_call(checkout, tmp_path):
    seen: list[set[str]] = []
    summary, row = _miss_func_run(checkout, tmp_path, "direct", seen)
    assert "read" not in seen[0] and "read" in seen[1]  # the next LM call after the turn sends the new list
    assert bool(row.success) and row.score_reason == "bfcl: valid"
    assert _checker().RECEIVED[-1]["decoded"] == [[], [["read()"]]]
    events = [e for e in read_trajectory(summary.path, row.sample_id).events
              if isinstance(e, InfoEvent) and e.name == "tools_changed"]
    assert [e.value["added"] for e in events] == [["read"]]


def test_an_agent_from_outside_is_offered_the_function_in_its_turn_and_the_checker_gets_its_call(checkout, tmp_path):
    seen: list[set[str]] = []
    summary, row = _miss_func_run(checkout, tmp_path, "agent:tests.agents.turn_agents:conversing", seen)
    assert "read" not in seen[0] and "read" in seen[1]  # its second turn lists the run's tools again
    assert bool(row.success) and row.score_reason == "bfcl: valid"
    assert _checker().RECEIVED[-1]["decoded"] == [[], [["read()"]]]
    assert rebuild(summary.path) == (1, 0)  # its row is the projection of its transcript, as any run's
    assert read_results([summary.path]).iloc[0].equals(row)


def test_an_arm_that_cannot_read_the_tools_again_ends_as_stale_tools(checkout, tmp_path):
    _, row = _miss_func_run(checkout, tmp_path, "direct-search", [])
    assert not bool(row.success) and row.error_type == "stale_tools"
    assert "cannot re-read them" in row.error_message


def test_each_turns_ground_truth_is_its_reference_code(checkout):
    task = load_suite(f"bfcl:{checkout}#multi_turn_base").tasks[0]
    assert task.user.references == ("increment(**{'by': 2})\nprint('done')", "increment(**{'by': 3})\nprint('done')")
    assert task.reference == "\n".join(task.user.references)
    names = {"echo": ["text", "times", "prefix"]}
    assert ground_truth_call("echo('hi', times=2)", names) == ("echo", {"text": "hi", "times": 2})
    with pytest.raises(UserError, match="not a function call"):
        ground_truth_call("x.y", names)


def test_a_turns_reference_is_replayed_in_its_turn(checkout):
    """Each turn's trace through the arm's own replay: the turn in progress picks it, and it reads the
    conversation from that turn's message on."""
    task = load_suite(f"bfcl:{checkout}#multi_turn_base").tasks[0]
    whole = ReferenceTrace(answer="done", stdout="", tool_calls=(("increment", {"by": 2}), ("increment", {"by": 3})),
                           end_state={}, failed_calls=(False, False), call_servers=("bfcl", "bfcl"))
    runs = (CodeExecution("a", stdout="done\n"), CodeExecution("b", stdout="done\n"))
    calls = (ToolCallRecord("increment", {"by": 2}, step=0), ToolCallRecord("increment", {"by": 3}, step=1))
    traces = turn_traces(whole, runs, calls)
    assert [t.tool_calls for t in traces] == [(("increment", {"by": 2}),), (("increment", {"by": 3}),)]
    policy = turns_policy(traces, task, get_arm("direct").replay, False, None)
    system = {"role": "system", "content": "rules"}

    def ask(*messages):
        return policy(ScriptedRequest((system, *messages), (), 0))

    first = {"role": "user", "content": "Add 2 to the counter."}
    assert ask(first).tool_calls == (("increment", {"by": 2}),)
    call = {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": "increment"}]}
    result = {"role": "tool", "content": '{"value": 12}'}
    assert ask(first, call, result).tool_calls == (("final_answer", {"answer": "done"}),)
    second = {"role": "user", "content": "Now add 3."}
    answered = {"role": "assistant", "content": "done"}
    assert ask(first, call, result, answered, second).tool_calls == (("increment", {"by": 3}),)
