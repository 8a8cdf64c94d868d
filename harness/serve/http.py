"""The executor over streamable HTTP: a socket bound before anything starts (so a taken port or a host that is not
meant is one line, and the URL printed has the real port), the access checks of harness.serve.guard in front of
every route, and the one line a client needs printed once on stderr.

Loopback is the default and the only address that needs no word from the owner: any other starts only with
`expose_to_network` and a token the owner set (HARNESS_SERVE_TOKEN or a token file), since a client on another
machine must be given it anyway and a generated one would change at every start."""

from __future__ import annotations

import socket
import sys
from dataclasses import dataclass
from typing import TextIO
from urllib.parse import urlsplit

import uvicorn
from fastmcp import FastMCP
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

from harness.errors import UserError
from harness.serve.guard import Access, BearerGuard, HostOriginGuard, is_loopback, is_unspecified
from harness.serve.token import TOKEN_VARIABLE, BearerToken

MCP_PATH = "/mcp"
EXPOSE_FLAG = "--expose-to-network"
# what a browser client sends and must read (the streamable HTTP transport's own headers)
CORS_HEADERS = ("authorization", "content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id")


@dataclass(frozen=True)
class Address:
    """Where to listen: the host as the owner wrote it, the address it resolved to, and whether that is loopback
    (every address the name resolves to is)."""

    host: str
    family: socket.AddressFamily
    address: str
    loopback: bool


def resolve(host: str) -> Address:
    """The address `--host` names (IPv4 first for a name such as localhost); a name that resolves to nothing is a
    UserError."""
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise UserError(f"--host {host}: not an address of this machine ({exc.strerror})") from None
    found.sort(key=lambda info: info[0] != socket.AF_INET)
    addresses = [str(info[4][0]) for info in found]
    return Address(host, found[0][0], addresses[0], all(is_loopback(a) for a in addresses))


def check_exposure(address: Address, expose_to_network: bool, token: BearerToken) -> None:
    """Refuse a non-loopback address without the owner's explicit flag, or with only a generated token."""
    if address.loopback:
        return
    if not expose_to_network:
        raise UserError(f"--host {address.host} is not a loopback address: the executor, and through it your tools, "
                        f"would be reachable from the network; add {EXPOSE_FLAG} if that is what you mean, or leave "
                        f"--host out (127.0.0.1)")
    if token.generated:
        raise UserError(f"--host {address.host} {EXPOSE_FLAG} needs a token you set and hand to your clients: "
                        f"{TOKEN_VARIABLE} or --token-file FILE (at least 32 characters)")


def listen(address: Address, port: int) -> socket.socket:
    """A listening socket on the address (port 0: a free one); a port that is taken is a UserError."""
    sock = socket.socket(address.family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((address.address, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UserError(f"--host {address.host} --port {port}: cannot listen there ({exc.strerror}); "
                        f"choose another --port (0: any free one)") from None
    return sock


def url_of(sock: socket.socket) -> str:
    address, port = sock.getsockname()[:2]
    shown = f"[{address}]" if ":" in address else address
    return f"http://{shown}:{port}{MCP_PATH}"


def announce(url: str, token: BearerToken, out: TextIO = sys.stderr) -> None:
    """The lines a client needs, once: the URL and the header (the token itself only when this process made it; a
    token the owner set is named by where it is)."""
    parts = urlsplit(url)
    if is_unspecified(parts.hostname or ""):  # 0.0.0.0 or :: is no address a client can use
        url = (f"http://ADDRESS:{parts.port}{MCP_PATH} (every interface: ADDRESS is any address of this machine; a "
               f"host name needs --allow-host NAME)")
    print(f"harness serve: MCP (streamable HTTP) at {url}; every request needs this header:", file=out)
    if token.generated:
        print(f"Authorization: Bearer {token.value}", file=out)
        print(f"harness serve: (the token is new at each start; set {TOKEN_VARIABLE} or --token-file to keep one)",
              file=out)
    else:
        print(f"Authorization: Bearer <the token in {token.source}>", file=out)
    out.flush()


def guard_middleware(access: Access) -> list[Middleware]:
    """Host and Origin first, then CORS for the allowed origins (a browser's preflight carries no token), then the
    token, then the MCP app."""
    layers = [Middleware(HostOriginGuard, access=access)]
    if access.allowed_origins:
        layers.append(Middleware(CORSMiddleware, allow_origins=sorted(access.allowed_origins),
                                 allow_methods=["GET", "POST", "DELETE"], allow_headers=list(CORS_HEADERS),
                                 expose_headers=["mcp-session-id"]))
    layers.append(Middleware(BearerGuard, access=access))
    return layers


def http_server(executor: FastMCP, access: Access) -> uvicorn.Server:
    """The executor's streamable HTTP app behind the access checks, as a uvicorn server (its lifespan starts the
    executor's servers and sandbox pool): `await server.serve(sockets=[sock])`; `server.should_exit = True` stops it."""
    app = executor.http_app(path=MCP_PATH, transport="http", middleware=guard_middleware(access))
    return uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning", access_log=False,
                                         timeout_graceful_shutdown=2))


async def serve_http(executor: FastMCP, access: Access, sock: socket.socket) -> None:
    """Serve the executor on `sock` behind the access checks until interrupted (Ctrl-C, SIGTERM)."""
    await http_server(executor, access).serve(sockets=[sock])
