import asyncio
import os
import threading
import time
from pathlib import Path

import pytest

from harness.mcp.closing import ABANDONED_CALL_GRACE_S, ServerClose
from harness.mcp.servers import ToolCallFailed, open_servers
from harness.tasks.task import ServerRef
from tests.mcp import stub_servers

TOOL_TIMEOUT_S = 0.5
MARGIN_S = 1.0  # the event loop and the process table on a busy 2-core machine


@pytest.fixture
def stuck():
    """A registered in-process server whose tool blocks a thread until the test releases it (a synchronous tool
    that outlives the timeout: Python cannot interrupt the thread)."""
    from fastmcp import FastMCP

    from harness.mcp.registry import register_server
    from tests.registered import unregister_server

    release = threading.Event()

    def build(ref):
        server = FastMCP("stuck")

        @server.tool
        def wait() -> str:
            """Block until released."""
            release.wait(60)
            return "released"

        return server

    register_server("stuck", build)
    yield (ServerRef("stuck"),)
    release.set()
    unregister_server("stuck")


async def test_a_normal_close_is_recorded_and_nothing_is_abandoned():
    async with open_servers((ServerRef("crm"),)) as session:
        await session.call("get_customer", {"customer_id": "C-0007"})
    assert session.abandoned_calls == 0 and not session.calls[0].abandoned
    assert [(c.server, c.how, c.abandoned) for c in session.closes] == [("crm", "closed", False)]


async def test_an_in_process_call_past_its_timeout_does_not_hold_the_close(stuck):
    async with open_servers(stuck, tool_timeout_s=TOOL_TIMEOUT_S) as session:
        started = time.perf_counter()
        with pytest.raises(ToolCallFailed, match="did not answer within 0.5 s"):
            await session.call("wait", {})
    elapsed = time.perf_counter() - started
    assert elapsed < TOOL_TIMEOUT_S + ABANDONED_CALL_GRACE_S + MARGIN_S
    assert session.abandoned_calls == 1 and session.calls[0].abandoned and session.calls[0].is_error
    assert session.closes == [ServerClose("stuck", "left running", session.closes[0].seconds, True)]


@pytest.mark.integration
async def test_a_stdio_server_with_a_call_past_its_timeout_is_killed_after_the_grace(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(stub_servers.write_config(
        tmp_path / "mcp_servers.json", faulty=stub_servers.faulty(tmp_path))))
    async with open_servers((ServerRef("faulty"),), tool_timeout_s=TOOL_TIMEOUT_S, log_dir=tmp_path / "logs") as session:
        assert (await session.call("quiet", {}))[0] == "done"
        started = time.perf_counter()
        with pytest.raises(ToolCallFailed, match="did not answer within 0.5 s"):
            await session.call("slow", {"seconds": 30})
    elapsed = time.perf_counter() - started
    assert elapsed < TOOL_TIMEOUT_S + ABANDONED_CALL_GRACE_S + MARGIN_S
    assert session.abandoned_calls == 1 and [c.abandoned for c in session.calls] == [False, True]
    assert [(c.server, c.how, c.abandoned) for c in session.closes] == [("faulty", "killed", True)]
    log = Path(session.stderr_logs["faulty"]).read_text()
    assert "server 'faulty' killed" in log and "a call abandoned at its tool timeout was still running" in log
    with pytest.raises(ProcessLookupError):
        os.kill(int((tmp_path / "faulty.pid").read_text()), 0)


async def test_a_call_cancelled_in_flight_marks_its_server_for_a_hard_close(stuck):
    async with open_servers(stuck, tool_timeout_s=30) as session:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(session.call("wait", {}), TOOL_TIMEOUT_S)  # the run's own limit ran out
    assert session.abandoned_calls == 0 and session.abandoned_on == {"stuck"}
    assert [(c.how, c.abandoned) for c in session.closes] == [("left running", True)]
