import time

import pytest

from harness.mcp.servers import NonMCPOutputError, ToolCallFailed, open_servers
from harness.mcp.stdio import QUOTED_CHARS, non_mcp_message
from harness.tasks.task import ServerRef
from tests.mcp import stub_servers


def external(tmp_path, monkeypatch, **servers) -> None:
    monkeypatch.setenv("HARNESS_MCP_CONFIG", str(stub_servers.write_config(tmp_path / "mcp_servers.json", **servers)))


def test_the_non_mcp_message_quotes_the_line_cut_and_says_the_fix():
    message = non_mcp_message("x", "  Starting up...\r")
    assert message == ("server 'x' wrote non-MCP output on stdout: 'Starting up...' (MCP over stdio needs stdout "
                       "for protocol messages only; send logs to stderr)")
    assert f"'{'a' * QUOTED_CHARS}...'" in non_mcp_message("x", "a" * 1000)


@pytest.mark.integration
async def test_a_banner_on_stdout_is_a_start_error_naming_the_server_and_the_line(tmp_path, monkeypatch):
    external(tmp_path, monkeypatch, greeter=stub_servers.greeting())
    started = time.perf_counter()
    with pytest.raises(NonMCPOutputError) as info:
        async with open_servers((ServerRef("greeter"),), log_dir=tmp_path / "logs", start_timeout_s=30):
            pass
    assert time.perf_counter() - started < 10  # at once, not at the start limit
    assert info.value.server == "greeter" and str(info.value) == non_mcp_message("greeter", "Starting up...")


@pytest.mark.integration
async def test_a_log_line_on_stdout_mid_run_fails_the_call_with_that_line_at_once(tmp_path, monkeypatch):
    external(tmp_path, monkeypatch, faulty=stub_servers.faulty(tmp_path))
    async with open_servers((ServerRef("faulty"),), tool_timeout_s=30, log_dir=tmp_path / "logs") as session:
        assert (await session.call("quiet", {}))[0] == "done"
        started = time.perf_counter()
        with pytest.raises(ToolCallFailed) as info:
            await session.call("noisy", {})
        assert time.perf_counter() - started < 5  # not the tool timeout
        with pytest.raises(ToolCallFailed) as later:  # the connection is closed: every later call says why
            await session.call("quiet", {})
    assert str(info.value) == str(later.value) == non_mcp_message("faulty", "noisy: working on it")
    assert [c.is_error for c in session.calls] == [False, True, True]
