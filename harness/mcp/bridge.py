"""The host side of tool calls made by sandbox code: a sync dispatcher, called in the sandbox's thread,
that runs the MCP calls on the event loop owning the run's clients and waits for them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from harness.mcp.servers import ServerSession, ToolCallFailed

HostFunction = Callable[[dict[str, Any]], Any]  # a sandbox function answered on the host, not by an MCP server


class BridgedToolError(Exception):
    """Raised into sandbox code when a tool fails: the message is what the code sees."""


class SessionDispatcher:
    """The dispatcher for SandboxPool.lease: one call (`__call__`), or a batch of calls async code awaited together
    (`batch`), run concurrently on `loop` and stamped in the session's log with one batch id. `local` names
    functions answered on the host without a server (code-mode discovery's search_tools). Never call it on
    `loop`'s own thread (it would deadlock). `refuse(name)`, if given, names why a tool may not be called from this
sandbox (None: it may), checked for single and batched calls alike. The session enforces the tool timeout per call; the wait here only
    guards against a stuck event loop."""

    def __init__(self, session: ServerSession, loop: asyncio.AbstractEventLoop,
                 local: Mapping[str, HostFunction] | None = None,
                 refuse: Callable[[str], str | None] | None = None) -> None:
        self.session, self.loop, self.local, self.refuse = session, loop, dict(local or {}), refuse
        self.timeout_s = session.tool_timeout_s + 5.0

    def __call__(self, name: str, arguments: dict[str, Any]) -> Any:
        self._check(name)
        if name in self.local:
            return self.local[name](arguments)
        return self._wait(self._call(name, arguments, None), name)

    def batch(self, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        """Each call's value or the BridgedToolError it failed with, the calls run concurrently."""
        batch_id = self.session.new_batch()

        async def run_all() -> list[Any]:
            return await asyncio.gather(*(self._call(name, arguments, batch_id) for name, arguments in calls),
                                        return_exceptions=True)

        try:
            return self._wait(run_all(), f"{len(calls)} calls")
        except BridgedToolError as exc:
            return [exc] * len(calls)

    def _check(self, name: str) -> None:
        if self.refuse is not None and (reason := self.refuse(name)):
            raise BridgedToolError(reason)

    async def _call(self, name: str, arguments: dict[str, Any], batch: int | None) -> Any:
        self._check(name)
        if name in self.local:
            return self.local[name](arguments)
        try:
            value, _text = await self.session.call(name, arguments, in_code=True, batch=batch)
        except ToolCallFailed as exc:
            raise BridgedToolError(str(exc)) from None
        return value

    def _wait(self, work: Coroutine[Any, Any, Any], what: str) -> Any:
        future = asyncio.run_coroutine_threadsafe(work, self.loop)
        try:
            return future.result(self.timeout_s)
        except TimeoutError:
            future.cancel()
            raise BridgedToolError(f"tool '{what}' did not answer within {self.timeout_s:g} s") from None


def make_dispatcher(session: ServerSession, loop: asyncio.AbstractEventLoop,
                    local: Mapping[str, HostFunction] | None = None,
                    refuse: Callable[[str], str | None] | None = None) -> SessionDispatcher:
    """The dispatcher of a lease whose tool calls go to `session` (see SessionDispatcher)."""
    return SessionDispatcher(session, loop, local, refuse)
