"""The two names of the MCP Python SDK 1 that smolagents' MCP support still imports, on the SDK 2 the harness runs.

smolagents reaches MCP servers through `mcpadapt` (0.1.19, its newest release), whose core module imports
`mcp.client.streamable_http.streamablehttp_client` and `mcp.client.websocket`: the SDK 2 renamed the first
(`streamable_http_client`, which takes a configured HTTP client instead of `headers`) and dropped the second. Without
them `smolagents.MCPClient` cannot even be imported next to the harness's `mcp==2.3.0`. `provide()` adds them,
and nothing else: the old name opens the SDK 2's own streamable HTTP transport with the headers it was given, and
the websocket transport (which no bridge uses) says it is gone. Names the SDK already has are left alone. The
SDK 2's warnings that mcpadapt reads fields by their SDK 1 names are silenced for mcpadapt's modules only (they
would print on every run's console and say nothing about the run).
"""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

CONNECT_TIMEOUT_S = 30.0  # the SDK 1's defaults for its streamable HTTP client
READ_TIMEOUT_S = 300.0
WEBSOCKET_MODULE = "mcp.client.websocket"


@asynccontextmanager
async def streamablehttp_client(url: str, headers: dict[str, str] | None = None, timeout: float = CONNECT_TIMEOUT_S,
                                sse_read_timeout: float = READ_TIMEOUT_S, terminate_on_close: bool = True,
                                **_: Any) -> AsyncIterator[tuple[Any, Any, Callable[[], str | None]]]:
    """The SDK 1's `streamablehttp_client(url, headers=...)` on the SDK 2's transport: (read, write, session id)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(timeout, read=sse_read_timeout))
    async with client, streamable_http_client(url, http_client=client,
                                              terminate_on_close=terminate_on_close) as (read, write):
        yield read, write, lambda: None


@asynccontextmanager
async def websocket_client(url: str, **_: Any) -> AsyncIterator[Any]:
    """The SDK 2 has no websocket transport (and no bridge uses one)."""
    raise RuntimeError(f"MCP over websockets ({url}) is not in the MCP Python SDK 2")
    yield  # pragma: no cover (an async generator that never yields)


def provide() -> None:
    """Add the two SDK 1 names mcpadapt imports, where the installed SDK lacks them (idempotent)."""
    import fastmcp  # noqa: F401 - its import gives the SDK 2's types their SDK 1 field names (inputSchema), which
    # mcpadapt reads; the harness's process always has it imported, a bridge's own process must import it itself
    from mcp.client import streamable_http

    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"mcpadapt\.")
    if not hasattr(streamable_http, "streamablehttp_client"):
        streamable_http.streamablehttp_client = streamablehttp_client  # type: ignore[attr-defined]
    try:
        __import__(WEBSOCKET_MODULE)
    except ImportError:
        module = types.ModuleType(WEBSOCKET_MODULE, "the SDK 1's websocket transport, gone in the SDK 2")
        module.websocket_client = websocket_client  # type: ignore[attr-defined]
        sys.modules[WEBSOCKET_MODULE] = module
