import asyncio
import json
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.mcp import external as mcp_config
from harness.mcp.external import ExternalServer, connect_external, load_mcp_config
from harness.mcp.servers import open_servers
from harness.run.records import COLUMNS
from harness.tasks.task import ServerRef


def write(tmp_path, data) -> object:
    path = tmp_path / "mcp_servers.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_claude_desktop_shape(tmp_path):
    path = write(tmp_path, {"mcpServers": {"memory": {"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1"}}}})
    assert load_mcp_config(path) == {"memory": ExternalServer("memory", "npx", ("-y", "pkg"), (("A", "1"),))}


def test_run_dir_placeholders_are_filled_in_args_and_env():
    server = ExternalServer("m", "x", ("--db", "${RUN_DIR}/db.sqlite"), (("HOME_DIR", "${RUN_DIR}"), ("A", "1")))
    assert server.resolved({"RUN_DIR": "/tmp/r1"}) == (["--db", "/tmp/r1/db.sqlite"], {"HOME_DIR": "/tmp/r1", "A": "1"})
    assert server.per_run and not ExternalServer("m", "x", ("--db", "db.sqlite")).per_run


def test_an_entry_may_declare_who_calls_its_tools_and_a_suite_entry_overrides_it(tmp_path, monkeypatch):
    from harness.mcp.registry import callers_text, tool_callers

    path = write(tmp_path, {"mcpServers": {"m": {"command": "x", "callers": ["code"]}, "n": {"command": "y"}}})
    assert [server.callers for server in load_mcp_config(path).values()] == [("code",), ("direct", "code")]
    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(path))
    callers = tool_callers((ServerRef("m"), ServerRef("n"), ServerRef("crm", callers=("direct",))))
    assert callers_text(callers) == "m=code,n=direct+code,crm=direct"
    assert tool_callers((ServerRef("m", callers=("direct", "code")),)) == {"m": ("direct", "code")}  # the suite's


def test_vs_code_shape(tmp_path):
    path = write(tmp_path, {"servers": {"fs": {"type": "stdio", "command": "node", "args": ["server.js"]}}})
    assert load_mcp_config(path)["fs"].command == "node"


@pytest.mark.parametrize("data, fragment", [
    ('{"mcpServers": {', "invalid JSON at line 1"),
    ({"mcpServers": {"m": {"cmd": "x"}}}, "field 'mcpServers.m.command'"),
    ({"mcpServers": {"m": {"command": "x", "argz": []}}}, "argz"),
    ({"mcpServers": {}}, "no servers"),
    ({"mcpServers": {"crm": {"command": "x"}}}, "a fixture server's name"),
    ({"other": {}}, "field 'other'"),
    ({"mcpServers": {"m": {"command": "x", "args": ["${RUNDIR}/f"]}}}, "field 'args': unknown placeholder '${RUNDIR}'"),
    ({"mcpServers": {"m": {"command": "x", "env": {"F": "${HOME}"}}}}, "field 'env.F': unknown placeholder '${HOME}'"),
    ({"mcpServers": {"m": {"command": "x", "callers": ["shell"]}}}, "unknown caller 'shell' in 'callers'"),
    ({"mcpServers": {"m": {"command": "x", "callers": []}}}, "field 'mcpServers.m.callers'"),
])
def test_bad_configs_are_one_line_errors(tmp_path, data, fragment):
    with pytest.raises(UserError) as info:
        load_mcp_config(write(tmp_path, data))
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_a_value_of_the_wrong_type_is_named_by_its_path_in_the_file_with_the_value(tmp_path):
    path = write(tmp_path, {"mcpServers": {"memory": {"command": "npx", "env": {"MEMORY_SIZE": 5}}}})
    with pytest.raises(UserError) as info:
        load_mcp_config(path)
    assert str(info.value) == (f"{path}: field 'mcpServers.memory.env.MEMORY_SIZE': 5 is not valid: expected a "
                               "valid string")


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("npx") is None, reason="needs Node's npx (CI installs it)")
def test_the_official_memory_server_runs_from_a_config(tmp_path):
    path = write(tmp_path, {"mcpServers": {"memory": {"command": "npx",
                                                      "args": ["-y", "@modelcontextprotocol/server-memory"],
                                                      "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.json")}}}})
    server = load_mcp_config(path)["memory"]

    async def main():
        async with connect_external(server) as client:
            names = {t.name for t in await client.list_tools()}
            await client.call_tool("create_entities", {"entities": [
                {"name": "harness", "entityType": "project", "observations": ["measures code mode"]}]})
            graph = await client.call_tool("read_graph", {})
            return names, graph.content[0].text

    names, graph = asyncio.run(main())
    assert {"create_entities", "read_graph"} <= names
    assert "measures code mode" in graph


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("npx") is None, reason="needs Node's npx (CI installs it)")
def test_a_task_names_an_external_server_like_a_fixture(tmp_path, monkeypatch):
    from harness.models.scripted import policy_provider
    from harness.run.reference import ReferenceTrace, reference_policy
    from harness.run.runner import RunConfig, Runner
    from harness.tasks.suite import load_suite

    config = write(tmp_path, {"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
                                                        "env": {"MEMORY_FILE_PATH": str(tmp_path / "m.json")}}}})
    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(config))
    suite_path = tmp_path / "ext.yaml"
    suite_path.write_text("""
suite: ext
servers: [memory]
tasks:
  - id: remember
    category: write
    prompt: "Create an entity named harness of type project."
    expected: harness
    scorer: exact
    reference: |
      print(create_entities(entities=[{"name": "harness", "entityType": "project", "observations": []}]))
""")
    calls = (("create_entities", {"entities": [{"name": "harness", "entityType": "project", "observations": []}]}),
             ("read_graph", {}))
    provider = policy_provider("scripted:t", lambda task, arm: reference_policy(ReferenceTrace("harness", "", calls, {}), task, arm))
    run = RunConfig(suite=load_suite(str(suite_path)), model="scripted:t", arms=("direct",), out_dir=tmp_path / "out")
    record = asyncio.run(Runner(run, provider=provider).run()).records[0]
    assert record.success and record.tool_calls == 2 and record.tool_errors == 0
    from harness.run.records import read_trajectory

    trajectory = read_trajectory(tmp_path / "out" / "ext" / f"{record.run_id}.parquet", record.sample_id)
    log = Path(trajectory.server_logs["memory"])
    assert log.is_file() and log.parent.parent == tmp_path / "out" / "ext"  # next to the run's results


NOTES_SERVER = str(Path(__file__).with_name("notes_server.py"))


def notes_config(tmp_path, monkeypatch, state: str) -> None:
    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(write(tmp_path, {"mcpServers": {"notes": {
        "command": sys.executable, "args": [NOTES_SERVER, state]}}})))
    monkeypatch.setattr(mcp_config, "_STARTS", Counter())  # the shared-state warning is once per process


@pytest.mark.integration
async def test_each_run_gets_a_new_run_dir_removed_after_it(tmp_path, monkeypatch):
    notes_config(tmp_path, monkeypatch, "${RUN_DIR}/notes.txt")
    async with open_servers((ServerRef("notes"),), log_dir=tmp_path / "logs") as first:
        await first.call("add_note", {"text": "first run"})
        state = Path((await first.call("state_file", {}))[0])
        assert (await first.call("list_notes", {}))[0] == ["first run"] and state.parent.is_dir()
    assert not state.parent.exists()
    async with open_servers((ServerRef("notes"),), log_dir=tmp_path / "logs") as second:
        assert (await second.call("list_notes", {}))[0] == []


@pytest.mark.integration
async def test_an_external_servers_stderr_goes_to_a_log_file_named_on_the_session(tmp_path, monkeypatch, capfd):
    notes_config(tmp_path, monkeypatch, "${RUN_DIR}/notes.txt")
    async with open_servers((ServerRef("notes"),), log_dir=tmp_path / "logs") as session:
        await session.call("list_notes", {})
    log = Path(session.stderr_logs["notes"])
    assert log.parent == tmp_path / "logs" and "notes server: hello on stderr" in log.read_text()
    assert "hello on stderr" not in capfd.readouterr().err


@pytest.mark.integration
async def test_a_server_shared_by_runs_without_a_placeholder_is_named_in_one_warning(tmp_path, monkeypatch, capfd):
    notes_config(tmp_path, monkeypatch, str(tmp_path / "shared-notes.txt"))
    for _ in range(3):
        async with open_servers((ServerRef("notes"),), log_dir=tmp_path / "logs") as session:
            await session.call("list_notes", {})
    warnings = [line for line in capfd.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "external server 'notes'" in warnings[0] and "${RUN_DIR}" in warnings[0]


MEMORY_SUITE = """
suite: memory
servers: [memory]
tasks:
  - id: graph-before-write
    category: write
    prompt: "How many entities did the knowledge graph hold before you added one named harness (type project)?"
    expected: 0
    scorer: numeric
    reference: |
      before = len(read_graph()["entities"])
      create_entities(entities=[{"name": "harness", "entityType": "project", "observations": ["measures code mode"]}])
      print(before)
"""


@pytest.mark.integration
@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("npx") is None, reason="needs Node's npx (CI installs it)")
async def test_the_memory_server_with_run_dir_gives_identical_rows_run_after_run(tmp_path, monkeypatch, sandbox_pool):
    """The README's memory-server config: every run (and arm) starts from an empty graph, so a second run of
    the suite through both arms records exactly what the first did."""
    from harness.run.runner import RunConfig, Runner
    from harness.tasks.suite import load_suite

    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(write(tmp_path, {"mcpServers": {"memory": {
        "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
        "env": {"MEMORY_FILE_PATH": "${RUN_DIR}/memory.jsonl"}}}})))
    (tmp_path / "memory.yaml").write_text(MEMORY_SUITE)
    suite = load_suite(str(tmp_path / "memory.yaml"))
    runs = []
    for run_id in ("first", "second"):
        config = RunConfig(suite=suite, model="scripted:reference", arms=("direct", "codemode"),
                           out_dir=tmp_path / "out", run_id=run_id)
        runs.append((await Runner(config, pool=sandbox_pool).run()).records)
    varying = {"run_id", "started_at", "trajectory_ref"} | {name for name in COLUMNS if name.endswith("_s")}

    def rows(records):
        return sorted(({k: v for k, v in r.to_row().items() if k not in varying} for r in records),
                      key=lambda row: row["arm"])

    first, second = rows(runs[0]), rows(runs[1])
    assert [(row["arm"], row["success"], row["answer"], row["tool_calls"]) for row in first] == [
        ("codemode", True, "0", 2), ("direct", True, "0", 2)]
    assert first == second
