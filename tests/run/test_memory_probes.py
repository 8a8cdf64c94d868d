"""Probes on a real external server, the official memory server (npx @modelcontextprotocol/server-memory): its
end state is read through its own read tools after the run, so a write task answered without writing fails."""

import asyncio
import json
import shutil

import pytest

from harness.mcp.servers import open_servers
from harness.models.scripted import policy_provider
from harness.run.records import read_trajectory
from harness.run.reference import ReferenceTrace, reference_policy
from harness.run.runner import RunConfig, Runner
from harness.tasks.scorers import Probe
from harness.tasks.suite import load_suite
from harness.tasks.task import ServerRef

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(shutil.which("npx") is None, reason="needs Node's npx (CI installs it)")]

SUITE = """
suite: memory
servers: [memory]
tasks:
  - id: remember-ada
    category: write
    prompt: "Remember Ada Lovelace as a person in the knowledge graph. Answer with her name."
    expected: Ada Lovelace
    scorer:
      all:
        scorers:
          - exact
          - tool_not_called: {tool: "delete_*"}
          - probe: {server: memory, tool: read_graph, path: entities, where: {name: Ada Lovelace, entityType: person},
                    count: 1}
    reference: |
      create_entities(entities=[{"name": "Ada Lovelace", "entityType": "person", "observations": []}])
      print("Ada Lovelace")
"""
WRITE = ("create_entities", {"entities": [{"name": "Ada Lovelace", "entityType": "person", "observations": []}]})


@pytest.fixture
def memory_config(tmp_path, monkeypatch):
    config = tmp_path / "mcp_servers.json"
    config.write_text(json.dumps({"mcpServers": {"memory": {
        "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
        "env": {"MEMORY_FILE_PATH": "${RUN_DIR}/memory.jsonl"}}}}))
    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(config))


def run_with(calls, tmp_path):
    tmp_path.mkdir()
    suite_path = tmp_path / "memory.yaml"
    suite_path.write_text(SUITE)
    trace = ReferenceTrace("Ada Lovelace", "", calls, {})
    provider = policy_provider("scripted:t", lambda task, arm: reference_policy(trace, task, arm))
    config = RunConfig(suite=load_suite(str(suite_path)), model="scripted:t", arms=("direct",), out_dir=tmp_path / "out")
    record = asyncio.run(Runner(config, provider=provider).run()).records[0]
    return record, read_trajectory(tmp_path / "out" / "memory" / f"{record.run_id}.parquet", record.sample_id)


def test_a_write_passes_and_an_answer_without_the_write_fails(memory_config, tmp_path):
    wrote, trajectory = run_with((WRITE,), tmp_path / "wrote")
    assert wrote.success and wrote.tool_calls == 1  # the probe is not the agent's call
    assert [(p.tool, p.is_error) for p in trajectory.probes] == [("read_graph", False)]
    assert "Ada Lovelace" in trajectory.probes[0].result_preview
    read_only, _ = run_with((("read_graph", {}),), tmp_path / "read")
    assert not read_only.success and read_only.tool_calls == 1
    assert "probe memory.read_graph at entities: 0 item(s), wanted 1" in read_only.score_reason


async def test_a_probe_refuses_a_tool_the_server_says_changes_state(memory_config):
    async with open_servers((ServerRef("memory"),)) as session:
        refused = await session.probe(Probe("memory", *WRITE))
        graph = await session.probe(Probe("memory", "read_graph"))
        assert session.calls == [] and len(session.probes) == 2
    assert refused.is_error and "changes state" in refused.text
    assert not graph.is_error and graph.value == {"entities": [], "relations": []}
