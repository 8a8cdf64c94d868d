"""One call registers a benchmark adapter everywhere: `harness.register_adapter` of an adapter defined outside the
package (tests/plugin_example.py's look-alike stockroom) gives suite loading, its servers, its published protocol as
a preset and its line in `harness suites`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

import harness
from harness.agents.scaffold import load_scaffold
from harness.errors import UserError
from harness.mcp.registry import build_in_memory
from harness.run.records import read_results
from tests.plugin_example import PROTOCOL, Stockroom, write_checkout
from tests.registered import unregister_plugin_example


@pytest.fixture
def checkout(tmp_path: Path):
    harness.register_adapter(Stockroom())
    yield write_checkout(tmp_path / "stockroom")
    unregister_plugin_example()


def test_suite_loading_reads_the_registered_adapter(checkout):
    suite = harness.load_suite(f"stockroom:{checkout}")
    assert [task.id for task in suite.tasks] == ["apples", "pears"]
    assert suite.load_spec == f"stockroom:{checkout}"


async def test_the_tasks_servers_are_built_by_the_registered_adapter(checkout):
    from fastmcp import Client

    ref = harness.load_suite(f"stockroom:{checkout}").tasks[0].servers[0]
    async with Client(build_in_memory(ref)) as client:
        result = await client.call_tool("count", {"item": "apples"})
    assert result.data == 12


def test_its_published_protocol_is_a_scaffold_preset(checkout):
    scaffold = load_scaffold(PROTOCOL.name)
    assert scaffold.name == "stockroom-rules" and scaffold.turn_limit == 3
    assert scaffold.refuse_answer_before_action is False  # built on plain, as it declares


def test_harness_suites_lists_it(checkout):
    from harness.cli import app

    result = CliRunner().invoke(app, ["suites"], env={"COLUMNS": "300"})
    assert result.exit_code == 0
    assert any("stockroom" in line and "--suite stockroom:PATH" in line for line in result.stdout.splitlines())


def test_a_preset_named_like_a_built_in_one_is_a_user_error_naming_the_adapter(checkout):
    harness.register_adapter(replace(Stockroom(), protocol=replace(PROTOCOL, name="plain")))
    with pytest.raises(UserError, match="benchmark adapter 'stockroom'.*'plain' is taken"):
        load_scaffold("stockroom-rules")


@pytest.mark.parametrize("name", ["", "stock room", "stock:room"])
def test_a_name_that_cannot_prefix_a_suite_path_is_refused(name):
    with pytest.raises(ValueError, match="benchmark adapter name"):
        harness.register_adapter(replace(Stockroom(), name=name))


@pytest.mark.sandbox  # scripted:reference traces each task's reference solution in the sandbox first
def test_harness_run_takes_its_suite_servers_and_preset(checkout, tmp_path):
    from harness.cli import app

    out = tmp_path / "results"
    result = CliRunner().invoke(app, ["run", "--suite", f"stockroom:{checkout}", "--model", "scripted:reference",
                                      "--arms", "direct", "--scaffold", "stockroom-rules", "--out", str(out)])
    assert result.exit_code == 0, result.output
    frame = read_results([out])
    assert sorted(frame.task_id) == ["apples", "pears"] and frame.success.all()
    assert set(frame.scaffold) == {"stockroom-rules"} and set(frame.suite) == {"stockroom"}
    assert (frame.tool_calls == 1).all()
