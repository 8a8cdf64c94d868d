"""Remote servers (a `url` in mcp_servers.json) through the commands: `harness servers --check` tries them, and
`harness run` warns once that their state carries over, records them in its manifest, and runs tasks on them."""

import json

import pytest

from harness.run.records import read_results
from tests.cli.helpers import harness
from tests.mcp.remote_server import serving

SUITE = """
suite: remote
servers: [notes]
tasks:
  - id: keep-a-note
    category: write
    prompt: "Keep a note saying 'call Ada', then answer with what the tool returned."
    expected: ok
    scorer: exact
    reference: |
      print(add_note(text="call Ada"))
"""


def config(tmp_path, **entries) -> str:
    path = tmp_path / "mcp_servers.json"
    path.write_text(json.dumps({"mcpServers": entries}))
    return str(path)


def test_servers_check_tries_url_entries(tmp_path, unused_tcp_port):
    from typer.testing import CliRunner

    from harness.cli import app

    with serving("http", token="s3cret") as url:
        env = {"HARNESS_MCP_CONFIG": config(tmp_path, notes={"url": url, "headers": {"Authorization": "Bearer s3cret"}},
                                            gone={"url": f"http://127.0.0.1:{unused_tcp_port}/mcp"}),
               "COLUMNS": "300"}
        result = CliRunner().invoke(app, ["servers", "--check", "--server-start-timeout", "10"], env=env)
    assert result.exit_code == 2
    rows = {cells[0]: cells for line in result.stdout.splitlines()
            if (cells := [c.strip() for c in line.split("│")[1:-1]]) and cells[0] in ("notes", "gone")}
    assert rows["notes"][1:3] == ["remote", "2"] and rows["gone"][1:3] == ["remote", "did not start"]
    assert result.stderr.count("error: server 'gone' did not start: ") == 1


@pytest.mark.cli
@pytest.mark.sandbox
def test_a_scripted_run_on_a_remote_server_warns_once_records_it_and_passes(tmp_path):
    suite = tmp_path / "remote.yaml"
    suite.write_text(SUITE)
    with serving("http") as url:
        run = harness("run", "--suite", str(suite), "--model", "scripted:reference", "--arms", "direct,codemode",
                      "--out", str(tmp_path / "results"), "--run-id", "r1",
                      env={"HARNESS_MCP_CONFIG": config(tmp_path, notes={"type": "http", "url": url})})
    assert run.returncode == 0, run.stderr
    warnings = [line for line in run.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].startswith("warning: remote server(s) notes are not started per run")
    frame = read_results([tmp_path / "results" / "remote" / "r1.parquet"])
    assert sorted(frame["arm"]) == ["codemode", "direct"] and frame["success"].all()
    assert (frame["tool_calls"] == 1).all()
    manifest = json.loads((tmp_path / "results" / "remote" / "r1.run.json").read_text())
    assert manifest["remote_servers"] == ["notes"]
