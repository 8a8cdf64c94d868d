"""Remote servers in mcp_servers.json (a `url` entry): the config, and runs against a local streamable-HTTP or SSE
server served from a background thread (tests/mcp/remote_server.py)."""

import json
from types import SimpleNamespace

import pytest

from harness.errors import UserError
from harness.mcp.external import RemoteServer, load_mcp_config
from harness.mcp.registry import list_servers, remote_server_names
from harness.mcp.servers import ServerStartError, open_servers
from harness.tasks.task import ServerRef
from tests.mcp.remote_server import serving


def write(tmp_path, data) -> object:
    path = tmp_path / "mcp_servers.json"
    path.write_text(json.dumps(data))
    return path


def use_config(tmp_path, monkeypatch, **entries) -> None:
    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(write(tmp_path, {"mcpServers": entries})))


def test_claude_codes_http_entry_with_headers(tmp_path):
    path = write(tmp_path, {"mcpServers": {"api": {"type": "http", "url": "https://example.com/mcp",
                                                   "headers": {"Authorization": "Bearer ${API_TOKEN}"}}}})
    assert load_mcp_config(path) == {"api": RemoteServer("api", "https://example.com/mcp", "http",
                                                         (("Authorization", "Bearer ${API_TOKEN}"),))}


@pytest.mark.parametrize("entry, transport", [
    ({"type": "sse", "url": "http://localhost:3001/events"}, "sse"),  # VS Code's shape
    ({"type": "streamable-http", "url": "http://localhost:3001/mcp"}, "http"),  # fastmcp's name for it
    ({"url": "http://localhost:3001/sse"}, "sse"),  # no type: inferred from the path, as fastmcp does
    ({"url": "http://localhost:3001/mcp/"}, "http"),
])
def test_the_transport_is_the_entrys_type_else_inferred_from_the_url(tmp_path, entry, transport):
    assert load_mcp_config(write(tmp_path, {"servers": {"r": entry}}))["r"].transport == transport


@pytest.mark.parametrize("entry, fragment", [
    ({"command": "npx", "url": "http://x/mcp"}, "field 'mcpServers.r': an entry has either 'command'"),
    ({"url": "ftp://x/mcp"}, "field 'mcpServers.r.url': 'ftp://x/mcp' is not an http:// or https:// URL"),
    ({"url": "http://x/mcp", "type": "stdio"}, "field 'mcpServers.r.type'"),
    ({"url": "http://x/mcp", "args": ["-v"]}, "field 'mcpServers.r.args': Extra inputs are not permitted"),
    ({"url": "http://x/mcp", "headers": {"X-Retries": 3}}, "field 'mcpServers.r.headers.X-Retries'"),
    ({"url": "http://x/mcp", "headers": {"Authorization": "Bearer ${input:token}"}},
     "field 'headers.Authorization': '${input:token}' cannot be filled here (write ${NAME}, ${NAME:-default} or"),
    ({"url": "http://x/${RUN_DIR}"}, "'${RUN_DIR}' cannot be filled here (a remote server is not started per run"),
])
def test_bad_remote_entries_are_one_line_errors(tmp_path, entry, fragment):
    with pytest.raises(UserError) as info:
        load_mcp_config(write(tmp_path, {"mcpServers": {"r": entry}}))
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_url_and_headers_take_environment_variables_as_claude_code_and_vs_code_write_them():
    server = RemoteServer("r", "${BASE:-http://localhost:1}/mcp", headers=(
        ("Authorization", "Bearer ${TOKEN}"), ("X-Team", "${env:TEAM}"), ("X-Empty", "[${EMPTY}]")))
    url, headers = server.resolved({"TOKEN": "t0k", "TEAM": "search", "EMPTY": ""})
    assert url == "http://localhost:1/mcp"
    assert headers == {"Authorization": "Bearer t0k", "X-Team": "search", "X-Empty": "[]"}
    assert server.resolved({"BASE": "https://h", "TOKEN": "", "TEAM": "", "EMPTY": ""})[0] == "https://h/mcp"
    with pytest.raises(ValueError, match="environment variable TOKEN is not set \\(used in its header Authorization"):
        server.resolved({"TEAM": "search", "EMPTY": ""})


async def test_a_run_calls_a_remote_servers_tools_and_its_state_carries_over(tmp_path, monkeypatch):
    with serving("http") as url:
        use_config(tmp_path, monkeypatch, notes={"type": "http", "url": url})
        async with open_servers((ServerRef("notes"),)) as first:
            assert set(first.toolbox.names) == {"add_note", "list_notes"}
            assert (await first.call("add_note", {"text": "first run"}))[0] == "ok"
            assert first.stderr_logs == {} and first.calls[0].server == "notes"
        async with open_servers((ServerRef("notes"),)) as second:  # a new session, the same server
            assert (await second.call("list_notes", {}))[0] == ["first run"]


async def test_an_sse_server_works_too(tmp_path, monkeypatch):
    with serving("sse") as url:
        use_config(tmp_path, monkeypatch, notes={"type": "sse", "url": url})
        async with open_servers((ServerRef("notes"),)) as session:
            await session.call("add_note", {"text": "over sse"})
            assert (await session.call("list_notes", {}))[0] == ["over sse"]


async def test_headers_reach_the_server_with_their_environment_variables_filled(tmp_path, monkeypatch):
    with serving("http", token="s3cret") as url:
        use_config(tmp_path, monkeypatch, guarded={"url": url, "headers": {"Authorization": "Bearer ${NOTES_TOKEN}"}})
        monkeypatch.setenv("NOTES_TOKEN", "s3cret")
        async with open_servers((ServerRef("guarded"),)) as session:
            assert (await session.call("list_notes", {}))[0] == []
        monkeypatch.setenv("NOTES_TOKEN", "wrong")
        with pytest.raises(ServerStartError) as refused:
            async with open_servers((ServerRef("guarded"),)):
                pass
    message = str(refused.value)
    assert message.startswith("server 'guarded' did not start: ") and " answered HTTP 401 Unauthorized (check the entry" in message and "\n" not in message


async def test_an_unset_variable_in_the_headers_is_a_start_error_naming_it(tmp_path, monkeypatch):
    use_config(tmp_path, monkeypatch, guarded={"url": "http://127.0.0.1:9/mcp",
                                               "headers": {"Authorization": "Bearer ${NOTES_TOKEN}"}})
    monkeypatch.delenv("NOTES_TOKEN", raising=False)
    with pytest.raises(ServerStartError, match="did not start: environment variable NOTES_TOKEN is not set"):
        async with open_servers((ServerRef("guarded"),)):
            pass


async def test_an_unreachable_url_is_a_one_line_start_error(tmp_path, monkeypatch, unused_tcp_port):
    use_config(tmp_path, monkeypatch, gone={"url": f"http://127.0.0.1:{unused_tcp_port}/mcp"})
    with pytest.raises(ServerStartError) as info:
        async with open_servers((ServerRef("gone"),), start_timeout_s=10):
            pass
    message = str(info.value)
    assert message.startswith(f"server 'gone' did not start: http://127.0.0.1:{unused_tcp_port}/mcp: ")
    assert "\n" not in message
    assert "(stderr:" not in message  # no process of ours, no log to point at


def test_remote_servers_are_listed_as_such_and_named_for_a_runs_tasks(tmp_path, monkeypatch):
    use_config(tmp_path, monkeypatch, notes={"url": "http://127.0.0.1:9/mcp"}, local={"command": "true"})
    kinds = {info.name: (info.kind, info.description) for info in list_servers()}
    assert kinds["notes"] == ("remote", "http http://127.0.0.1:9/mcp") and kinds["local"][0] == "external"
    tasks = [SimpleNamespace(servers=(ServerRef("notes"), ServerRef("crm"))), SimpleNamespace(servers=(ServerRef("local"),))]
    assert remote_server_names(tasks) == ["notes"] and remote_server_names(tasks[1:]) == []
