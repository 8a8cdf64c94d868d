"""A remote MCP server for the tests: FastMCP over streamable HTTP (or SSE), served by uvicorn from a background
thread on a free 127.0.0.1 port. It keeps notes in memory, state that outlives a client's session as a remote
server's does, and given a token it refuses every request without `Authorization: Bearer <token>`."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import uvicorn
from fastmcp import FastMCP
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse


def build() -> FastMCP:
    server = FastMCP("remote-notes")
    notes: list[str] = []

    @server.tool
    def add_note(text: str) -> str:
        """Keep a note."""
        notes.append(text)
        return "ok"

    @server.tool
    def list_notes() -> list[str]:
        """Every note kept so far."""
        return list(notes)

    return server


class RequireToken:
    """ASGI middleware: a request without the expected bearer token gets 401, before MCP sees it."""

    def __init__(self, app: Any, token: str):
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != self.expected:
            await PlainTextResponse("missing or wrong token", status_code=401)(scope, receive, send)
            return
        await self.app(scope, receive, send)


@contextmanager
def serving(transport: Literal["http", "sse"] = "http", token: str | None = None) -> Iterator[str]:
    """Serve a new server until the block ends; yields its endpoint URL (`/mcp`, or `/sse` for SSE)."""
    middleware = [Middleware(RequireToken, token=token)] if token else None
    app = build().http_app(transport=transport, middleware=middleware)
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))  # bound here and handed over: no other process can take the port meanwhile
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "the test server did not start"
    try:
        yield f"http://127.0.0.1:{listening.getsockname()[1]}{app.state.path}"
    finally:
        server.should_exit = True
        thread.join(10)
        listening.close()
