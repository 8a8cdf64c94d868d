"""`harness serve`: the execute_code MCP server (stdio, or streamable HTTP behind a token, Host and Origin checks)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

from harness.cli.app import AT_LEAST_ONE, MORE_THAN_ZERO, NOT_NEGATIVE, PORT, app
from harness.errors import UserError


@app.command()
def serve(
    servers: str = typer.Option("crm", "--servers", help="comma-separated fixture or mcp_servers.json names"),
    transport: str = typer.Option("stdio", "--transport", help="stdio | http (streamable HTTP)"),
    host: str = typer.Option("127.0.0.1", "--host", help="http: address to listen on (loopback unless "
                             "--expose-to-network)"),
    port: int = typer.Option(8765, "--port", **PORT, help="http: port to listen on (0: any free one)"),
    token_file: Path = typer.Option(None, "--token-file", help="http: a file holding the bearer token clients must "
                                    "send (else $HARNESS_SERVE_TOKEN, else one generated and printed on stderr)"),
    allow_origin: list[str] = typer.Option([], "--allow-origin", help="http: a web client's origin allowed to call "
                                           "(e.g. http://localhost:6274), repeatable; none by default"),
    allow_host: list[str] = typer.Option([], "--allow-host", help="http: another name clients reach this server by "
                                         "(the Host header), repeatable"),
    expose_to_network: bool = typer.Option(False, "--expose-to-network", help="http: allow a --host that is not "
                                           "loopback: the executor is then reachable from the network"),
    pool_size: int = typer.Option(1, "--pool-size", **AT_LEAST_ONE, help="executions at once (warm sandboxes)"),
    queue: int = typer.Option(8, "--queue", **NOT_NEGATIVE, help="executions that may wait for a sandbox; more "
                              "are refused"),
    timeout: float = typer.Option(30.0, "--timeout", **MORE_THAN_ZERO, help="default per-execution limit (s)"),
    max_timeout: float = typer.Option(300.0, "--max-timeout", **MORE_THAN_ZERO, help="most an execution may ask "
                                      "for (s); more is refused"),
    max_code_chars: int = typer.Option(100_000, "--max-code-chars", **AT_LEAST_ONE, help="longest code accepted"),
) -> None:
    """Serve execute_code(code, timeout) over MCP; the code can call the named servers' tools."""
    from harness.mcp.registry import list_servers
    from harness.serve import ExecutorBounds, build_executor
    from harness.tasks.task import ServerRef

    names = [n.strip() for n in servers.split(",") if n.strip()]
    known = {info.name for info in list_servers()}
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise UserError(f"unknown server {', '.join(map(repr, unknown)) or '(none)'} (known: {', '.join(sorted(known))})")
    if transport not in ("stdio", "http"):
        raise UserError(f"unknown transport '{transport}' (use stdio or http)")
    if timeout > max_timeout:
        raise UserError(f"--timeout {timeout:g} is over --max-timeout {max_timeout:g}: lower it or raise the cap")
    bounds = ExecutorBounds(max_code_chars=max_code_chars, running=pool_size, queued=queue, default_timeout_s=timeout,
                            max_timeout_s=max_timeout)
    refs = tuple(ServerRef(n) for n in names)
    http_only = [name for name, given in (("--token-file", token_file is not None), ("--allow-origin", allow_origin),
                                          ("--allow-host", allow_host), ("--expose-to-network", expose_to_network))
                 if given]
    if transport == "stdio" and http_only:
        raise UserError(f"{http_only[0]} applies to --transport http only (over stdio the client that starts the "
                        f"server is its only peer)")
    if transport == "stdio":
        asyncio.run(build_executor(refs, bounds=bounds)).run(transport="stdio", show_banner=False)
        return
    from harness.serve.guard import Access, normalize_origin
    from harness.serve.http import announce, check_exposure, listen, resolve, serve_http, url_of
    from harness.serve.token import load_token

    token = load_token(token_file)
    for origin in allow_origin:
        if normalize_origin(origin) is None:
            raise UserError(f"--allow-origin {origin}: give an origin as scheme://host[:port] (http or https, no "
                            f"path), e.g. http://localhost:6274")
    address = resolve(host)
    check_exposure(address, expose_to_network, token)
    access = Access.build(token, allow_origin, [*allow_host, host])  # the name it was bound by, too
    sock = listen(address, port)
    executor = asyncio.run(build_executor(refs, bounds=bounds))
    announce(url_of(sock), token)
    asyncio.run(serve_http(executor, access, sock))
