"""Tools a server holds back until a user turn: left out of its MCP tool list, offered at their turn, and the session's
toolbox re-read then (a `tools_changed` event, the version bumped); a turn that offers nothing changes nothing."""

import asyncio

import pytest
from fastmcp import FastMCP

from harness.mcp.held_tools import held_tools, hold_back, offer_turn_tools
from harness.mcp.servers import open_servers
from harness.tasks.task import ServerRef
from harness.trace.events import InfoEvent


@pytest.fixture
def holding():
    from harness.mcp.registry import register_server
    from tests.registered import unregister_server

    def build(ref):
        server = FastMCP("holding")

        @server.tool
        def ls() -> str:
            """List."""
            return "a b"

        @server.tool
        def sort(name: str) -> str:
            """Sort a file."""
            return f"sorted {name}"

        return hold_back(server, {2: ("sort",)})

    register_server("holding", build)
    yield (ServerRef("holding"),)
    unregister_server("holding")


def test_held_back_tools_are_offered_at_their_turn_and_the_session_reads_the_list_again(holding):
    async def scenario():
        async with open_servers(holding) as session:
            before = (session.toolbox.names, session.tools_version, held_tools(session.fixtures["holding"]))
            nothing = await offer_turn_tools(session, 1)
            offered = await offer_turn_tools(session, 2)
            value, _ = await session.call("sort", {"name": "f"})
            events = [e.value for e in session.transcript.of(InfoEvent) if e.name == "tools_changed"]
            return before, nothing, offered, session.toolbox.names, session.tools_version, value, events

    before, nothing, offered, names, version, value, events = asyncio.run(scenario())
    assert before == (("ls",), 0, {2: ("sort",)})
    assert nothing == () and offered == ("sort",)
    assert names == ("ls", "sort") and version == 1 and value == "sorted f"
    assert events == [{"server": "holding", "added": ["sort"], "removed": [], "reason": "user turn 2 offers sort"}]


def test_a_held_back_tool_cannot_be_called_before_its_turn(holding):
    async def scenario():
        async with open_servers(holding) as session:
            with pytest.raises(Exception, match="unknown tool 'sort'"):
                await session.call("sort", {"name": "f"})

    asyncio.run(scenario())
