import asyncio
import json
import shutil

import pytest

from harness.errors import UserError
from harness.mcp_config import ExternalServer, connect_external, load_mcp_config


def write(tmp_path, data) -> object:
    path = tmp_path / "mcp_servers.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_claude_desktop_shape(tmp_path):
    path = write(tmp_path, {"mcpServers": {"memory": {"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1"}}}})
    assert load_mcp_config(path) == {"memory": ExternalServer("memory", "npx", ("-y", "pkg"), (("A", "1"),))}


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
])
def test_bad_configs_are_one_line_errors(tmp_path, data, fragment):
    with pytest.raises(UserError) as info:
        load_mcp_config(write(tmp_path, data))
    assert fragment in str(info.value) and "\n" not in str(info.value)


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
    from harness.runner import RunConfig, Runner
    from harness.suite import load_suite
    from harness.testing import ReferenceTrace, policy_provider, reference_policy

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
    provider = policy_provider("scripted:t", lambda task, arm: reference_policy(ReferenceTrace("harness", "", calls, {}), task))
    run = RunConfig(suite=load_suite(str(suite_path)), model="scripted:t", arms=("direct",), out_dir=tmp_path / "out")
    record = asyncio.run(Runner(run, provider=provider).run()).records[0]
    assert record.success and record.tool_calls == 2 and record.tool_errors == 0
