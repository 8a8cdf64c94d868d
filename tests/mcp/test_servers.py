import asyncio
import os
import time
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.mcp.registry import check_servers, list_servers
from harness.mcp.servers import ServerStartError, ToolCallFailed, open_servers, stderr_tail
from harness.tasks.scoring import Probe
from harness.tasks.suite import load_suite
from harness.tasks.task import ServerRef, Suite
from tests.mcp import stub_servers
from tests.mcp.latency import count_waits


async def test_session_calls_tools_and_logs_each_call():
    async with open_servers((ServerRef("crm"),)) as session:
        value, text = await session.call("get_customer", {"customer_id": "C-0007"})
        assert value["name"] == "Chen Tanaka"
        assert '"Chen Tanaka"' in text
        with pytest.raises(ToolCallFailed, match="no customer has the id 'C-9999'"):
            await session.call("get_customer", {"customer_id": "C-9999"})
    assert [(c.tool, c.is_error) for c in session.calls] == [("get_customer", False), ("get_customer", True)]


async def test_list_results_are_unwrapped_for_code():
    async with open_servers((ServerRef("crm"),)) as session:
        value, _ = await session.call("search_customers", {"query": "Chen Tanaka"})
    assert isinstance(value, list) and value[0]["id"] == "C-0007"


async def test_every_run_gets_fresh_state():
    async with open_servers((ServerRef("crm"),)) as first:
        await first.call("add_note", {"customer_id": "C-0001", "body": "hello"})
        assert len(first.end_state()["crm"]["notes"]) == 1
    async with open_servers((ServerRef("crm"),)) as second:
        assert second.end_state()["crm"]["notes"] == []


async def test_unknown_tool_is_reported_with_the_available_ones():
    async with open_servers((ServerRef("crm"),)) as session:
        with pytest.raises(ToolCallFailed, match="unknown tool 'nope'.*get_customer"):
            await session.call("nope", {})


def test_crm_is_listed_as_a_fixture():
    assert any(info.name == "crm" and info.kind == "fixture" for info in list_servers())


def test_unknown_server_in_a_suite_is_a_user_error():
    smoke = load_suite("smoke")
    task = smoke.tasks[0]
    broken = Suite(smoke.name, "", (type(task)(**{**task.__dict__, "servers": (ServerRef("nowhere"),)}),), smoke.path)
    with pytest.raises(UserError, match="unknown server 'nowhere'"):
        check_servers(broken)


async def test_a_guarded_session_refuses_an_id_the_run_has_not_seen():
    async with open_servers((ServerRef("crm"),)) as session:
        session.guard_ids("Which company does Chen Tanaka work for?")
        with pytest.raises(ToolCallFailed, match="customer_id 'C-0012' appears nowhere in the task"):
            await session.call("get_customer", {"customer_id": "C-0012"})
        found, _ = await session.call("search_customers", {"query": "Chen Tanaka"})
        customer, _ = await session.call("get_customer", {"customer_id": found[0]["id"]})  # seen in a result
    assert customer["company"]
    assert [(c.tool, c.is_error) for c in session.calls] == [("get_customer", True), ("search_customers", False),
                                                             ("get_customer", False)]


async def test_an_unguarded_session_lets_the_server_answer_any_id():
    async with open_servers((ServerRef("crm"),)) as session:
        value, _ = await session.call("get_customer", {"customer_id": "C-0012"})
    assert value["id"] == "C-0012"


def external(tmp_path, monkeypatch, **servers) -> None:
    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(stub_servers.write_config(tmp_path / "mcp_servers.json", **servers)))


@pytest.mark.integration
async def test_a_server_that_never_answers_is_a_start_error_naming_it_and_its_stderr(tmp_path, monkeypatch):
    external(tmp_path, monkeypatch, sleeper=stub_servers.sleeping(tmp_path))
    with pytest.raises(ServerStartError) as info:
        async with open_servers((ServerRef("sleeper"),), log_dir=tmp_path / "logs", start_timeout_s=1):
            pass
    error = info.value
    assert error.server == "sleeper" and "within 1 s" in error.cause
    assert f"stderr: {error.stderr_log}" in str(error) and "waiting for a licence key" in str(error)
    assert Path(error.stderr_log).parent == tmp_path / "logs" and "\n" not in str(error)
    with pytest.raises(ProcessLookupError):  # the process was ended with the attempt
        os.kill(int((tmp_path / "sleeper.pid").read_text()), 0)


@pytest.mark.integration
@pytest.mark.parametrize("entry, cause", [
    (stub_servers.missing(), "No such file or directory: 'no-such-mcp-server-command'"),
    (stub_servers.quitting(), "the process exited before answering the MCP handshake"),
])
async def test_a_server_that_cannot_run_is_a_start_error_with_its_cause(tmp_path, monkeypatch, entry, cause):
    external(tmp_path, monkeypatch, broken=entry)
    with pytest.raises(ServerStartError, match="server 'broken' did not start") as info:
        async with open_servers((ServerRef("crm"), ServerRef("broken")), log_dir=tmp_path / "logs"):
            pass
    assert info.value.server == "broken" and cause in info.value.cause


def test_the_tail_of_a_stderr_log_is_its_last_nonblank_lines_on_one_line(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("".join(f"line {n}\n\n" for n in range(10)))
    assert stderr_tail(log, lines=3) == "line 7 | line 8 | line 9"
    assert stderr_tail(tmp_path / "absent.log") == ""


def text_server(ref=None):
    """Tools that return text and declare no output schema (as mcp-server-sqlite's and mcp-server-git's do), and
    one that declares its result."""
    from fastmcp import FastMCP

    server = FastMCP("texts")

    @server.tool(output_schema=None)
    def rows(count: int) -> str:
        """Rows as text, not JSON."""
        return "\n".join(f"row {n}" for n in range(count))

    @server.tool(output_schema=None)
    def row_json() -> str:
        """A row as JSON text."""
        return '{"id": 1}'

    @server.tool(output_schema=None)
    def structured_row() -> dict:
        """A row with structured content no schema describes."""
        return {"id": 2}

    @server.tool
    def typed_row() -> dict[str, int]:
        """A row whose type the server declares."""
        return {"id": 3}

    return server


@pytest.fixture
def texts():
    from harness.mcp.registry import register_server
    from tests.registered import unregister_server

    register_server("texts", text_server)
    yield (ServerRef("texts"),)
    unregister_server("texts")


async def test_undeclared_results_are_text_parsed_when_the_text_is_json(texts):
    async with open_servers(texts) as session:
        assert (await session.call("rows", {"count": 2}))[0] == "row 0\nrow 1"
        assert (await session.call("row_json", {}))[0] == {"id": 1}
        assert (await session.call("structured_row", {}))[0] == {"id": 2}  # its text is JSON
        assert (await session.call("typed_row", {}))[0] == {"id": 3}


async def test_a_result_over_the_sessions_limit_is_a_tool_error_naming_it(texts):
    async with open_servers(texts, max_tool_result_mb=0.001) as session:  # 1,000 bytes
        assert (await session.call("rows", {"count": 10}))[0].startswith("row 0")
        with pytest.raises(ToolCallFailed, match=r"tool 'rows' returned 0.0 MB, over this run's limit of 0.001 MB "
                                                 r"per tool result \(--max-tool-result-mb\)"):
            await session.call("rows", {"count": 1000})
    assert [c.is_error for c in session.calls] == [False, True]


async def test_without_a_limit_any_result_is_returned(texts):
    async with open_servers(texts, max_tool_result_mb=None) as session:
        value, _ = await session.call("rows", {"count": 1000})  # what a limit of 0.001 MB refuses
    assert len(value) > 1000 and not session.calls[0].is_error


def test_the_size_limit_counts_bytes_of_utf8_not_characters():
    from harness.mcp.servers import oversized_result

    assert oversized_result("t", "é" * 400, 0.001) is None  # 800 bytes
    assert "returned 0.0 MB" in oversized_result("t", "é" * 600, 0.001)  # 1,200 bytes


async def test_each_tool_call_waits_the_tool_latency_once_and_a_probe_does_not(monkeypatch):
    waits = count_waits(monkeypatch, 0.05)
    async with open_servers((ServerRef("crm"),), tool_latency_s=0.05) as session:
        await session.call("get_customer", {"customer_id": "C-0007"})
        await session.call("search_customers", {"query": "Chen"})
        assert len(waits) == 2
        outcome = await session.probe(Probe("crm", "get_customer", {"customer_id": "C-0001"}))
    assert not outcome.is_error and len(waits) == 2
    assert all(call.duration_s >= 0.05 for call in session.calls)  # the wait is part of the call's time


async def test_concurrent_tool_calls_overlap_their_latency_as_network_calls_do():
    async with open_servers((ServerRef("crm"),), tool_latency_s=0.2) as session:
        started = time.perf_counter()
        await asyncio.gather(*(session.call("get_customer", {"customer_id": f"C-000{n}"}) for n in (1, 2, 3)))
        elapsed = time.perf_counter() - started
    assert len(session.calls) == 3 and elapsed < 0.5  # well under the 0.6 s of three calls in turn


async def test_the_tool_latency_counts_inside_the_tool_timeout():
    async with open_servers((ServerRef("crm"),), tool_timeout_s=0.05, tool_latency_s=0.2) as session:
        with pytest.raises(ToolCallFailed, match="did not answer within 0.05 s"):
            await session.call("get_customer", {"customer_id": "C-0007"})
