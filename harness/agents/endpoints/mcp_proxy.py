"""The run's servers as one MCP server over streamable HTTP: a FastMCP server per run whose tools are the run's
session's tools (name, description, input and output schemas, read-only hint, as the session's toolbox has them),
each call forwarded through the run's ServerSession on the run's event loop, so it is recorded (stamped with the
step in progress), id-guarded, delayed by --tool-latency and bounded by the tool timeout exactly as a built-in arm's.

A call of a tool the model's last reply asked for natively is the model's own call; any other (made by the agent's
code, or by the agent itself) is recorded as made from code (`in_code`), as a code-mode arm's are."""

from __future__ import annotations

import asyncio
from typing import Any

from fastmcp import FastMCP
from fastmcp.tools.base import Tool, ToolResult
from mcp_types import TextContent, ToolAnnotations
from pydantic import PrivateAttr
from starlette.applications import Starlette

from harness.agents.endpoints.runs import Refused, RunEndpoint
from harness.mcp.servers import ToolCallFailed
from harness.mcp.toolbox import ToolSpec

SERVER_NAME = "harness"
MCP_PATH = "/mcp"


class RunTool(Tool):
    """One of the run's tools on its MCP endpoint, forwarded through the run's session."""

    _endpoint: RunEndpoint = PrivateAttr()
    _spec: ToolSpec = PrivateAttr()

    @classmethod
    def of(cls, spec: ToolSpec, endpoint: RunEndpoint) -> RunTool:
        hint = ToolAnnotations(read_only_hint=spec.read_only) if spec.read_only is not None else None
        tool = cls(name=spec.name, description=spec.description, annotations=hint, output_schema=spec.output_schema,
                   parameters=spec.input_schema or {"type": "object", "properties": {}})
        tool._endpoint, tool._spec = endpoint, spec
        return tool

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        endpoint = self._endpoint
        in_code = self.name not in endpoint.requested
        try:
            value, text = await endpoint.on_run_loop(endpoint.ctx.session.call(self.name, arguments, in_code=in_code))
        except ToolCallFailed as exc:  # the server's error (or the session's: timeout, size, id guard) as it is
            return ToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
        except Refused as exc:  # the run ended while the call was out
            return ToolResult(content=[TextContent(type="text", text=exc.message)], is_error=True)
        structured = None
        if self._spec.output_schema:  # the structured value as the server sent it (wrapped again where it was)
            structured = {"result": value} if self._spec.result_wrapped else value
        return ToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def run_server(endpoint: RunEndpoint) -> FastMCP:
    """A FastMCP server holding the run's tools."""
    server = FastMCP(SERVER_NAME)
    for spec in endpoint.ctx.session.toolbox.specs:
        server.add_tool(RunTool.of(spec, endpoint))
    return server


class RunMCPApp:
    """The run's MCP endpoint as an ASGI app, with its session manager running (its lifespan) on the loopback
    server's loop from `start` until `stop`."""

    def __init__(self, endpoint: RunEndpoint):
        self.endpoint = endpoint
        self.server = run_server(endpoint)
        self.offered = {spec.name for spec in endpoint.ctx.session.toolbox.specs}  # the tools it serves now
        self.app: Starlette = self.server.http_app(path=MCP_PATH, json_response=True)
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        started = asyncio.Event()
        self._task = asyncio.create_task(self._serve(started))
        waiting = asyncio.create_task(started.wait())
        await asyncio.wait({self._task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if not started.is_set():  # the lifespan failed: its error
            waiting.cancel()
            await self._task

    async def _serve(self, started: asyncio.Event) -> None:
        async with self.app.router.lifespan_context(self.app):
            started.set()
            await self._stop.wait()

    async def sync_tools(self) -> None:
        """Offer the session's tools as they are now (called on the loopback server's loop): a user turn may have
        offered tools held back until then (harness.mcp.held_tools), and a client that lists the tools again (an
        agent's next turn does) gets them."""
        specs = {spec.name: spec for spec in self.endpoint.ctx.session.toolbox.specs}
        for name in self.offered - specs.keys():
            self.server.local_provider.remove_tool(name)
        for name in specs.keys() - self.offered:
            self.server.add_tool(RunTool.of(specs[name], self.endpoint))
        self.offered = set(specs)

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)
