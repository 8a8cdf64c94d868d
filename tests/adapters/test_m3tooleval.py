"""The M3ToolEval adapter on a look-alike checkout the tests write: tasks, servers, fresh state, content hash."""

import shutil
import sys

import pytest
from fastmcp import Client

from harness.adapters.m3tooleval import M3ToolEval, _StandIn, benchmark_folder
from harness.errors import UserError
from harness.mcp.registry import build_in_memory as build_server
from tests.adapters.lookalike import FOLDER, write_lookalike


@pytest.fixture
def checkout(tmp_path):
    return write_lookalike(tmp_path / "code-act")


def test_tasks_carry_the_benchmark_name_family_expected_answer_and_scorer(checkout):
    suite = M3ToolEval().load(checkout)
    tasks = {t.id: t for t in suite.tasks}
    assert suite.name == "m3tooleval" and suite.spec == f"m3tooleval:{(checkout / FOLDER).resolve()}"
    assert list(tasks) == ["unit_converter/boiling_point", "unit_converter/largest_of_three",
                           "library_shelf/second_title", "library_shelf/first_two"]
    task = tasks["library_shelf/first_two"]
    assert task.category == "library_shelf" and task.expected == ["Emma", "Dune"]
    assert task.reference is None and task.scorer.name == "m3tooleval" and task.max_turns == 10
    assert task.prompt.startswith("List the titles of the first two books on the shelf.")
    assert [(s.name, s.source) for s in task.servers] == [("library_shelf", suite.spec)]


def test_loading_needs_no_ipython_and_leaves_no_stand_in_module_behind(checkout):
    assert "IPython" not in sys.modules
    assert len(M3ToolEval().load(checkout).tasks) == 4
    assert not [name for name, module in sys.modules.items() if isinstance(module, _StandIn)]


def test_the_checkout_root_and_its_benchmark_folder_are_both_accepted(checkout):
    assert benchmark_folder(checkout) == benchmark_folder(checkout / FOLDER) == (checkout / FOLDER).resolve()


def test_a_folder_that_is_not_a_checkout_is_one_line_saying_how_to_get_one(tmp_path):
    with pytest.raises(UserError, match="not a code-act checkout .* git clone https://github.com/xingyaoww/code-act"):
        M3ToolEval().load(tmp_path)


def test_a_checkout_that_fails_to_import_is_a_user_error_naming_it(checkout):
    (checkout / FOLDER / "tasks" / "impl" / "unit_converter.py").write_text("raise RuntimeError('broken on purpose')")
    with pytest.raises(UserError, match="importing the benchmark's tasks failed .*broken on purpose"):
        M3ToolEval().load(checkout)


async def test_each_family_is_a_server_with_its_tools_and_a_star_args_tool_takes_a_list(checkout):
    task = M3ToolEval().load(checkout).tasks[1]
    async with Client(build_server(task.servers[0])) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        result = await client.call_tool("largest", {"values": [3, 11, 7]})
    assert sorted(tools) == ["largest", "to_celsius"]
    assert "Signature: to_celsius(fahrenheit: float) -> float" in tools["to_celsius"].description
    assert result.structured_content == {"result": 11}


async def test_a_stateful_tool_starts_from_fresh_state_in_every_run(checkout):
    ref = M3ToolEval().load(checkout).tasks[2].servers[0]
    titles = []
    for _ in range(2):
        async with Client(build_server(ref)) as client:
            first = await client.call_tool("next_book", {})
            second = await client.call_tool("next_book", {})
            titles.append((first.structured_content["result"], second.structured_content["result"]))
    assert titles == [("Emma", "Dune"), ("Emma", "Dune")]


def test_the_task_hash_follows_the_benchmark_content_not_where_the_checkout_lies(tmp_path):
    first = write_lookalike(tmp_path / "a")
    same = shutil.copytree(first, tmp_path / "b")
    changed = shutil.copytree(first, tmp_path / "c")
    data = changed / FOLDER / "tasks" / "impl" / "library_shelf" / "shelf.json"
    data.write_text('["Emma", "Dune", "Persuasion"]\n')  # the stateful family's data file
    hashes = {name: {t.id: t.content_hash for t in M3ToolEval().load(path).tasks}
              for name, path in (("first", first), ("same", same), ("changed", changed))}
    assert hashes["first"] == hashes["same"]
    assert hashes["changed"]["library_shelf/second_title"] != hashes["first"]["library_shelf/second_title"]
    assert hashes["changed"]["unit_converter/boiling_point"] == hashes["first"]["unit_converter/boiling_point"]
