"""The executor: one MCP tool, `execute_code(code, timeout)`, runs Python in the harness's sandbox (same pool, limits
and guardrails as the code-mode arm); the code calls the tools of the configured servers (fixtures or
mcp_servers.json) as plain functions, bridged to live MCP clients. Each request is held to the server's bounds
(harness.serve.bounds) before anything of it runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastmcp import FastMCP

from harness.errors import UserError
from harness.mcp.bridge import BridgedToolError, SessionDispatcher
from harness.mcp.servers import ServerSession, ServerStartError, open_servers
from harness.sandbox import SandboxPool
from harness.serve.bounds import Admission, ExecutorBounds
from harness.tasks.task import ServerRef

USAGE = ("Run Python in a sandbox (Pyodide: standard library only, no files, network or environment). "
         "The functions below are predefined and call real tools; each returns what its stub says: the declared "
         "type, or text parsed when the text is JSON. They are also awaitable: `await asyncio.gather(f(...), "
         "g(...))` runs independent calls concurrently. Keep large data "
         "in your code and print only what you need. Each call starts from a clean interpreter.")


class _ExecutionDispatcher(SessionDispatcher):
    """A dispatcher that keeps the calls of its own execution: executions running at once share one session, so
    the session's log interleaves their calls and cannot say which execution made which."""

    def __init__(self, session: ServerSession, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(session, loop)
        self.made: list[dict[str, Any]] = []

    async def _call(self, name: str, arguments: dict[str, Any], batch: int | None) -> Any:
        started, failed = time.perf_counter(), False
        try:
            return await super()._call(name, arguments, batch)
        except BridgedToolError:
            failed = True
            raise
        finally:
            self.made.append({"tool": name, "is_error": failed, "batch": batch,
                              "duration_ms": round((time.perf_counter() - started) * 1000, 2)})


@dataclass
class _Running:
    session: ServerSession
    pool: SandboxPool
    admission: Admission


def _limits_sentence(bounds: ExecutorBounds) -> str:
    return (f"Limits of this server: code up to {bounds.max_code_chars:,} characters; timeout {bounds.default_timeout_s:g} "
            f"s unless you ask for another, at most {bounds.max_timeout_s:g} s; {bounds.running} execution(s) at once "
            f"and {bounds.queued} waiting, beyond which a call is refused (try again later).")


async def build_executor(servers: tuple[ServerRef, ...], *, bounds: ExecutorBounds | None = None) -> FastMCP:
    """An MCP server exposing execute_code over the given servers' tools, under `bounds`. The servers are opened when
    the executor starts and keep their state across calls (as a real deployment would)."""
    bounds = bounds or ExecutorBounds()
    try:
        async with open_servers(servers) as probe:  # the tool API goes into execute_code's description
            stubs = probe.toolbox.python_stubs()
    except ServerStartError as exc:  # nothing to serve: one line, exit 2, before the MCP server starts
        raise UserError(str(exc)) from None
    running: dict[str, _Running] = {}

    @asynccontextmanager
    async def lifespan(_server: FastMCP) -> AsyncIterator[dict[str, Any]]:
        async with AsyncExitStack() as stack:
            session = await stack.enter_async_context(open_servers(servers))
            pool = SandboxPool(size=bounds.running, timeout_s=bounds.default_timeout_s)
            stack.push_async_callback(pool.close)
            await pool.start(1)
            running["now"] = _Running(session, pool, Admission(bounds))
            try:
                yield {}
            finally:
                running.clear()

    mcp = FastMCP("harness-executor", lifespan=lifespan,
                  instructions="Call execute_code with Python; its description lists the functions it can call.")

    @mcp.tool(description=f"{USAGE} {_limits_sentence(bounds)}\n"
                          f"Returns {{success, stdout, stderr, duration_ms, diagnostics}}.\n\n{stubs}")
    async def execute_code(code: str, timeout: float = bounds.default_timeout_s) -> dict:
        state = running["now"]
        bounds.check_request(code, timeout)
        async with state.admission.slot():
            dispatcher = _ExecutionDispatcher(state.session, asyncio.get_running_loop())
            async with state.pool.lease(dispatcher, prelude=state.session.toolbox.sandbox_prelude()) as sandbox:
                result = await sandbox.execute(code, timeout_s=timeout)
        return {
            "success": result.ok,
            "stdout": result.stdout,
            "stderr": result.error or "",
            "duration_ms": round(result.duration_s * 1000, 1),
            "diagnostics": {
                "error_kind": result.error_kind,
                "truncated": result.truncated,
                "tool_calls": list(dispatcher.made),
            },
        }

    return mcp
