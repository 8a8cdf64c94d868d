"""`harness serve`: code mode for any MCP client. One tool, `execute_code(code, timeout)`, runs Python in the
harness's sandbox (same pool, limits and guardrails as the code-mode arm); the code calls the tools of the
configured servers (fixtures or mcp_servers.json) as plain functions, bridged to live MCP clients."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastmcp import FastMCP

from harness.errors import UserError
from harness.mcp.bridge import make_dispatcher
from harness.mcp.servers import ServerSession, ServerStartError, open_servers
from harness.sandbox import SandboxPool
from harness.tasks.task import ServerRef

DEFAULT_EXECUTION_TIMEOUT_S = 30.0
MAX_EXECUTION_TIMEOUT_S = 300.0

USAGE = ("Run Python in a sandbox (Pyodide: standard library only, no files, network or environment). "
         "The functions below are predefined and call real tools; each returns what its stub says: the declared "
         "type, or text parsed when the text is JSON. They are also awaitable: `await asyncio.gather(f(...), "
         "g(...))` runs independent calls concurrently. Keep large data "
         "in your code and print only what you need. Each call starts from a clean interpreter.")


@dataclass
class _Running:
    session: ServerSession
    pool: SandboxPool


async def build_executor(servers: tuple[ServerRef, ...], *, pool_size: int = 1,
                         default_timeout_s: float = DEFAULT_EXECUTION_TIMEOUT_S) -> FastMCP:
    """An MCP server exposing execute_code over the given servers' tools. The servers are opened when the
    executor starts and keep their state across calls (as a real deployment would)."""
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
            pool = SandboxPool(size=pool_size, timeout_s=default_timeout_s)
            stack.push_async_callback(pool.close)
            await pool.start(1)
            running["now"] = _Running(session, pool)
            try:
                yield {}
            finally:
                running.clear()

    mcp = FastMCP("harness-executor", lifespan=lifespan,
                  instructions="Call execute_code with Python; its description lists the functions it can call.")

    @mcp.tool(description=f"{USAGE}\nReturns {{success, stdout, stderr, duration_ms, diagnostics}}.\n\n{stubs}")
    async def execute_code(code: str, timeout: float = default_timeout_s) -> dict:
        state = running["now"]
        timeout = min(max(timeout, 0.1), MAX_EXECUTION_TIMEOUT_S)
        calls_before = len(state.session.calls)
        dispatcher = make_dispatcher(state.session, asyncio.get_running_loop())
        async with state.pool.lease(dispatcher, prelude=state.session.toolbox.sandbox_prelude()) as sandbox:
            result = await sandbox.execute(code, timeout_s=timeout)
        calls = state.session.calls[calls_before:]
        return {
            "success": result.ok,
            "stdout": result.stdout,
            "stderr": result.error or "",
            "duration_ms": round(result.duration_s * 1000, 1),
            "diagnostics": {
                "error_kind": result.error_kind,
                "truncated": result.truncated,
                "tool_calls": [{"tool": c.tool, "is_error": c.is_error, "duration_ms": round(c.duration_s * 1000, 2),
                                "batch": c.batch} for c in calls],
            },
        }

    return mcp
