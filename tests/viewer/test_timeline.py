"""A run page orders a trajectory turn by turn: each LM call, the action it chose, then the MCP calls that
action made, whichever way the arm records them; messages new since the previous call are highlighted."""

import json
import re
from pathlib import Path

import pytest

from harness.run.records import ResultStore
from harness.viewer import export_site, load_index
from tests.run.test_records import make_record, make_trajectory
from tests.viewer.chromium import dump_dom, needs_chromium

pytestmark = needs_chromium

SYSTEM, USER = {"role": "system", "content": "Solve the task."}, {"role": "user", "content": "How many?"}


def lm_call(messages: list[dict]) -> dict:
    return {"messages": messages, "output": "", "prompt_tokens": 10, "completion_tokens": 2,
            "reused_prompt_tokens": 0, "latency_s": 0.01, "cached": False, "grammar": False, "tool_calls": []}


def mcp(tool: str) -> dict:
    return {"tool": tool, "arguments": {}, "is_error": False, "result_preview": f"{tool} result", "result_chars": 9,
            "duration_s": 0.001, "started_s": 0.0}


def run_page(tmp_path: Path, trajectory: dict, query: str = "") -> str:
    """The run page of a trajectory line as older harness versions wrote it (untyped, no version): the viewer
    reads it through the current format."""
    store = ResultStore(tmp_path / "results", "s", "r1")
    store.add(make_record(), make_trajectory())
    store.flush()
    line = {"sample_id": make_record().sample_id, "prompt": "How many?", **trajectory}
    store.trajectory_path.write_text(json.dumps(line) + "\n")
    page = export_site(load_index([tmp_path / "results"]), tmp_path / "site")
    return dump_dom(page.as_uri() + "#/run/0" + query, tmp_path / "profile")


def kinds(html: str) -> list[str]:
    return re.findall(r'data-kind="([a-z-]+)"', html)


def test_calls_listed_by_a_step_follow_that_step(tmp_path):
    steps = [{"kind": "tool", "tool": "search", "arguments": {}, "observation": "2 tools"},
             {"kind": "tool", "tool": "execute", "arguments": {}, "observation": "3",
              "tool_calls": [{"tool": "a"}, {"tool": "b"}]},
             {"kind": "tool", "tool": "final_answer", "arguments": {"answer": "3"}, "observation": ""}]
    html = run_page(tmp_path, {"steps": steps, "lm_calls": [lm_call([SYSTEM, USER])] * 3,
                               "tool_calls": [mcp("a"), mcp("b")]})
    assert kinds(html) == ["lm-call", "action", "lm-call", "action", "tool-call", "tool-call", "lm-call", "action"]


def test_a_code_step_is_followed_by_as_many_calls_as_it_made(tmp_path):
    steps = [{"kind": "code", "code": "print(a())", "observation": "1", "tool_calls": 1},
             {"kind": "code", "code": "final_answer(1)", "observation": "", "tool_calls": 0, "final_answer": 1}]
    first = lm_call([SYSTEM, USER])
    second = lm_call([SYSTEM, USER, {"role": "assistant", "content": "print(a())"}, {"role": "user", "content": "1"}])
    trajectory = {"steps": steps, "lm_calls": [first, second], "tool_calls": [mcp("a")]}
    html = run_page(tmp_path, trajectory)
    assert kinds(html) == ["lm-call", "code", "tool-call", "lm-call", "code"]
    assert re.search(r"2 messages,\s+2 new since the previous call", html)
    assert re.search(r"4 messages,\s+2 new since the previous call", html)
    assert 'class="msg' not in html  # collapsed, and built only when opened
    opened = run_page(tmp_path, trajectory, "?messages=open")
    assert opened.count('class="msg new"') == 4 and opened.count('class="msg old"') == 2


def test_a_run_with_no_trajectory_line_says_so(tmp_path):
    store = ResultStore(tmp_path / "results", "s", "r1")
    store.add(make_record(), make_trajectory())
    store.flush()
    store.trajectory_path.unlink()
    page = export_site(load_index([tmp_path / "results"]), tmp_path / "site")
    html = dump_dom(page.as_uri() + "#/run/0", tmp_path / "profile")
    assert "trajectory line is missing" in html and "t1" in html


def test_probes_are_shown_apart_from_the_agents_calls(tmp_path):
    probe = {"server": "memory", "tool": "read_graph", "arguments": {}, "is_error": False,
             "result_preview": '{"entities": []}', "result_chars": 16, "duration_s": 0.01}
    steps = [{"kind": "tool", "tool": "a", "arguments": {}, "observation": "1"}]
    html = run_page(tmp_path, {"trajectory_version": 2, "steps": steps, "lm_calls": [lm_call([SYSTEM, USER])],
                               "tool_calls": [{**mcp("a"), "server": "s", "step": 0, "in_code": False}],
                               "probes": [probe]})
    assert kinds(html) == ["lm-call", "action", "tool-call", "probe"]
    assert "probe: memory.read_graph" in html and "not the agent's call" in html


@pytest.mark.sandbox
async def test_a_hybrid_run_shows_its_native_call_and_its_code_each_followed_by_its_calls(tmp_path, sandbox_pool):
    from harness.trace.trajectory import Trajectory
    from tests.agents.test_hybrid import TASK, code, run_hybrid, scripted

    result, log, session = await run_hybrid(scripted(
        ("search_customers", {"query": "Chen Tanaka"}),
        code('print(sum(o["total"] for o in list_orders(customer_id="C-0007", status="shipped")["orders"]))'),
        ("final_answer", {"answer": "27.0"})), sandbox_pool)
    store = ResultStore(tmp_path / "results", "s", "r1")
    store.add(make_record(arm="hybrid", sample_id="t1/hybrid/m/0", tool_callers="crm=direct+code"),
              Trajectory(task_id="t1", arm="hybrid", model="m", epoch=0, prompt=TASK.prompt, answer=result.answer,
                         events=tuple(log.events), tool_callers={"crm": ["direct", "code"]}))
    store.flush()
    page = export_site(load_index([tmp_path / "results"]), tmp_path / "site")
    html = dump_dom(page.as_uri() + "#/run/0", tmp_path / "profile")
    assert kinds(html) == ["lm-call", "action", "tool-call", "lm-call", "code", "tool-call", "lm-call", "action"]
    assert "tool call: search_customers" in html and "tool call: list_orders" in html
    assert "list_orders(customer_id=" in html  # the code, as a code step shows it


def test_a_turn_of_several_calls_shows_every_call_with_its_own_observation(tmp_path):
    calls = [{"tool": "get_customer", "arguments": {"customer_id": "C-1"}, "observation": "first result"},
             {"tool": "list_orders", "arguments": {"status": "open"}, "observation": "second result"}]
    steps = [{"kind": "tool", "calls": calls, "observation": "first result\n\nsecond result"}]
    html = run_page(tmp_path, {"trajectory_version": 4, "steps": steps, "lm_calls": [lm_call([SYSTEM, USER])],
                               "tool_calls": [{**mcp(c["tool"]), "server": "s", "step": 0} for c in calls]})
    assert kinds(html) == ["lm-call", "action", "action-call", "action-call", "tool-call", "tool-call"]
    assert "action: get_customer, list_orders" in html and "2 calls together" in html
    assert 'get_customer({"customer_id":"C-1"})' in html and 'list_orders({"status":"open"})' in html
    assert html.index("first result") < html.index("second result")
