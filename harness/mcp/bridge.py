"""The host side of tool calls made by sandbox code: a sync dispatcher, called in the sandbox's thread,
that runs the MCP call on the event loop owning the run's clients and waits for it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from harness.mcp.servers import ServerSession, ToolCallFailed


class BridgedToolError(Exception):
    """Raised into sandbox code when a tool fails: the message is what the code sees."""


def make_dispatcher(session: ServerSession, loop: asyncio.AbstractEventLoop) -> Callable[[str, dict[str, Any]], Any]:
    """A dispatcher for SandboxPool.lease: never call it on `loop`'s own thread (it would deadlock).
    The session enforces the tool timeout; the wait here only guards against a stuck event loop."""
    timeout_s = session.tool_timeout_s + 5.0

    def dispatch(name: str, arguments: dict[str, Any]) -> Any:
        future = asyncio.run_coroutine_threadsafe(session.call(name, arguments, in_code=True), loop)
        try:
            value, _text = future.result(timeout_s)
        except ToolCallFailed as exc:
            raise BridgedToolError(str(exc)) from None
        except TimeoutError:
            future.cancel()
            raise BridgedToolError(f"tool '{name}' did not answer within {timeout_s:g} s") from None
        return value

    return dispatch
