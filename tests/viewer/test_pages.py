"""The viewer's pages in headless Chromium, on a scripted run of the core suite (both default arms): the table
lists every row and its filters work; a run page shows LM calls, code steps and tool calls; a task page puts
the arms side by side. Assertions read the DOM (--dump-dom), not pixels."""

import re

import pytest

from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from harness.viewer import export_site, load_index
from harness.viewer.data import run_payload
from tests.viewer.chromium import dump_dom, needs_chromium

pytestmark = [*needs_chromium, pytest.mark.sandbox]


@pytest.fixture(scope="module")
async def core_run(tmp_path_factory, sandbox_pool):
    """A scripted:reference run of `core` (direct and codemode), its rows and the viewer's static copy."""
    out = tmp_path_factory.mktemp("core")
    config = RunConfig(suite=load_suite("core"), model="scripted:reference", out_dir=out / "results", run_id="r")
    await Runner(config, pool=sandbox_pool).run()
    index = load_index([out / "results"])
    return read_results([out / "results"]), index, export_site(index, out / "site"), out


def dom(core_run, fragment: str) -> str:
    """The page's DOM after its scripts (and the lazily loaded trajectories) have run."""
    _, _, page, out = core_run
    return dump_dom(page.as_uri() + fragment, out / "profile")


def table_rows(html: str) -> list[str]:
    return re.findall(r'<tr data-run="(\d+)"', html)


def test_the_table_lists_every_run(core_run):
    frame = core_run[0]
    html = dom(core_run, "")
    assert len(table_rows(html)) == len(frame) == 2 * len(load_suite("core").tasks)  # both default arms
    for task in frame.task_id.unique():
        assert f">{task}</a>" in html
    assert f"{len(frame)} of {len(frame)} runs" in html


def test_filters_keep_only_the_matching_runs(core_run):
    frame, index, _, _ = core_run
    html = dom(core_run, "#/?arm=codemode&category=write")
    shown = [index.rows[int(i)] for i in table_rows(html)]
    expected = frame[(frame.arm == "codemode") & (frame.category == "write")]
    assert len(shown) == len(expected) > 0
    assert all(r["arm"] == "codemode" and r["category"] == "write" for r in shown)
    assert '<option value="codemode" selected="">' in html


def test_sorting_by_tokens_orders_the_rows(core_run):
    _, index, _, _ = core_run
    html = dom(core_run, "#/?sort=-total_tokens")
    tokens = [index.rows[int(i)]["total_tokens"] for i in table_rows(html)]
    assert tokens == sorted(tokens, reverse=True)


def test_a_code_mode_run_page_shows_its_lm_calls_code_steps_and_tool_calls(core_run):
    _, index, _, _ = core_run
    run = next(i for i, r in enumerate(index.rows) if r["arm"] == "codemode" and r["tool_calls"] >= 2)
    trajectory = run_payload(index, run)
    html = dom(core_run, f"#/run/{run}")
    assert html.count('data-kind="lm-call"') == len(trajectory["lm_calls"]) > 0
    assert html.count('data-kind="code"') == sum(s["kind"] == "code" for s in trajectory["steps"]) > 0
    assert html.count('data-kind="tool-call"') == len(trajectory["tool_calls"]) >= 2  # the tools the code called
    for call in trajectory["tool_calls"]:
        assert f"tool call: {call['tool']}" in html
    assert "prompt " in html and "cache miss" in html
    assert "new since the previous call" in html and "<details data-call=" in html  # messages collapsed


def test_a_direct_run_page_shows_each_tool_call_after_its_action(core_run):
    _, index, _, _ = core_run
    run = next(i for i, r in enumerate(index.rows) if r["arm"] == "direct" and r["task_id"] == "chain-order-owner-company")
    html = dom(core_run, f"#/run/{run}")
    kinds = re.findall(r'data-kind="([a-z-]+)"', html)
    assert kinds == ["lm-call", "action", "tool-call", "lm-call", "action", "tool-call", "lm-call", "action"]


def test_a_task_page_puts_the_arms_side_by_side(core_run):
    html = dom(core_run, "#/task/chain-order-owner-company?suite=core")
    columns = re.findall(r'<div class="col" data-run="\d+">\s*<h3><a href="#/run/\d+">(\w+) ', html)
    assert columns == ["direct", "codemode"]
    assert "Which company does the customer who placed order O-00100 work for?" in html  # the prompt, loaded lazily
    assert html.count('class="step"') >= 4
