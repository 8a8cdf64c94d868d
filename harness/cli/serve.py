"""`harness serve`: the execute_code MCP server (stdio or streamable HTTP)."""

from __future__ import annotations

import asyncio

import typer

from harness.cli.app import AT_LEAST_ONE, MORE_THAN_ZERO, PORT, app
from harness.errors import UserError


@app.command()
def serve(
    servers: str = typer.Option("crm", "--servers", help="comma-separated fixture or mcp_servers.json names"),
    transport: str = typer.Option("stdio", "--transport", help="stdio | http (streamable HTTP)"),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8765, "--port", **PORT, help="port of the http transport"),
    pool_size: int = typer.Option(1, "--pool-size", **AT_LEAST_ONE, help="warm sandboxes kept ready"),
    timeout: float = typer.Option(30.0, "--timeout", **MORE_THAN_ZERO, help="default per-execution limit (s)"),
) -> None:
    """Serve execute_code(code, timeout) over MCP; the code can call the named servers' tools."""
    from harness.mcp.registry import list_servers
    from harness.serve import build_executor
    from harness.tasks.task import ServerRef

    names = [n.strip() for n in servers.split(",") if n.strip()]
    known = {info.name for info in list_servers()}
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise UserError(f"unknown server {', '.join(map(repr, unknown)) or '(none)'} (known: {', '.join(sorted(known))})")
    if transport not in ("stdio", "http"):
        raise UserError(f"unknown transport '{transport}' (use stdio or http)")
    executor = asyncio.run(build_executor(tuple(ServerRef(n) for n in names), pool_size=pool_size,
                                          default_timeout_s=timeout))
    if transport == "stdio":
        executor.run(transport="stdio", show_banner=False)
    else:
        executor.run(transport="http", host=host, port=port, show_banner=False)
