"""Tools a server holds back until a later user turn (BFCL's miss_func: a function the model is offered only when
the user says "I have updated some more functions"), and the session re-reading the server's tool list then.

A server built for one run marks its held-back tools (`hold_back`): they are disabled on the server itself, so its
own MCP tool list leaves them out. When a scripted user's turn begins (harness.agents.conversation.ScriptedUser),
`offer_turn_tools` enables the tools held for that turn on each of the run's in-memory servers and the session
lists that server's tools again, as an MCP client does on the server's `notifications/tools/list_changed`: the
toolbox is rebuilt, `ServerSession.tools_version` goes up and a `tools_changed` event is recorded. Each arm then
re-reads the tools before its next LM call, or, if it cannot, its run ends as `stale_tools`
(harness.agents.loop.run_loop) rather than go on with a list that is no longer the server's.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping

from fastmcp import FastMCP

from harness.mcp.servers import ServerSession

_HELD: weakref.WeakKeyDictionary[FastMCP, dict[int, tuple[str, ...]]] = weakref.WeakKeyDictionary()


def hold_back(server: FastMCP, by_turn: Mapping[int, tuple[str, ...]]) -> FastMCP:
    """Disable the tools of `by_turn` (user turn -> tool names) on `server` until that turn begins."""
    held = {turn: tuple(names) for turn, names in by_turn.items() if names}
    if held:
        server.disable(names={name for names in held.values() for name in names})
        _HELD[server] = held
    return server


def held_tools(server: FastMCP) -> dict[int, tuple[str, ...]]:
    """The tools `server` still holds back, by the turn that offers them."""
    return dict(_HELD.get(server, {}))


def release(server: FastMCP, turn: int) -> tuple[str, ...]:
    """Enable the tools `server` held back for `turn` (none: nothing changes); their names."""
    names = _HELD.get(server, {}).pop(turn, ())
    if names:
        server.enable(names=set(names))
    return names


async def offer_turn_tools(session: ServerSession, turn: int) -> tuple[str, ...]:
    """User turn `turn` (0-based) begins: each in-memory server of the run offers the tools it held for it, and the
    session lists that server's tools again. The names offered (none: the tools did not change)."""
    offered: list[str] = []
    for name, server in session.fixtures.items():
        released = release(server, turn)
        if released:
            await session.relist_tools(name, reason=f"user turn {turn} offers {', '.join(released)}")
            offered += released
    return tuple(offered)
