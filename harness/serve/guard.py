"""Who may reach the executor over HTTP, checked on every request before anything else sees it:

1. `Host` names the address the request came in on (or `localhost` when that is a loopback address, the name the
   server was bound by, or a name the owner allowed), with the server's port; else 403. A web page that rebinds its
   own name to 127.0.0.1 (DNS rebinding) sends its own name and is refused here.
2. `Origin`, when a request carries one (browsers do; MCP clients that are programs do not), is one the owner allowed
   (none by default); else 403. A page the user visits cannot make the user's browser call the executor.
3. `Authorization: Bearer TOKEN` carries the server's token, compared in constant time; else 401, and the request
   goes no further (no MCP session, no code).

A browser's CORS preflight (OPTIONS, no credentials) from an allowed origin passes 1 and 2 and is answered by the
CORS layer in front of 3, which runs nothing."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from harness.serve.token import BearerToken

DEFAULT_PORTS = {"http": 80, "https": 443}
LOCALHOST = "localhost"


def is_loopback(address: str) -> bool:
    """Whether a host name or address is the machine itself only (localhost, 127.0.0.0/8, ::1)."""
    address = address.strip("[]").lower()
    if address == LOCALHOST:
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def is_unspecified(address: str) -> bool:
    """Whether an address is the "any" address (0.0.0.0, ::): where a server listens on every interface."""
    try:
        return ipaddress.ip_address(address.strip("[]")).is_unspecified
    except ValueError:
        return False


def split_host(host: str, default_port: int = 80) -> tuple[str, int | None]:
    """A Host header's name (lower case, without brackets) and port (the default when none; None when garbled)."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        port_text = rest.removeprefix(":") if rest.startswith(":") else ("" if not rest else "x")
    elif host.count(":") == 1:
        name, port_text = host.split(":")
    else:
        name, port_text = host, ""
    if not port_text:
        return name, default_port
    return name, int(port_text) if port_text.isdigit() else None


def normalize_origin(origin: str) -> str | None:
    """An origin as scheme://host[:port] in lower case, without a default port; None for anything else (a path,
    "null", no scheme)."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/") or parts.query \
            or parts.fragment or parts.username or parts.password:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}" + (f":{port}" if port not in (None, DEFAULT_PORTS[parts.scheme]) else "")


@dataclass(frozen=True)
class Access:
    """Who may reach the server: the token every request must carry, the origins a browser page may call it from,
    and the host names a request may name besides the address it came in on."""

    token: BearerToken
    allowed_origins: frozenset[str] = frozenset()  # normalized (normalize_origin)
    allowed_hosts: frozenset[str] = frozenset()  # lower case, without a port

    @classmethod
    def build(cls, token: BearerToken, origins: Iterable[str] = (), hosts: Iterable[str] = ()) -> Access:
        """From the owner's options, as given (the CLI checks each origin first: normalize_origin is not None)."""
        normalized = {normalize_origin(o) for o in origins}
        return cls(token, frozenset(o for o in normalized if o), frozenset(h.strip("[]").lower() for h in hosts))

    def host_allowed(self, host: str, local: tuple[str, int] | None) -> bool:
        """Whether a Host header names this server: the address the connection came in on (`local`, from the
        socket), `localhost` when that is a loopback address, or an allowed name; and the port it came in on."""
        if local is None:
            return False
        address, port = local[0].lower(), local[1]
        name, host_port = split_host(host)
        if host_port != port or not name or is_unspecified(name):
            return False
        return name == address or name in self.allowed_hosts or (name == LOCALHOST and is_loopback(address))

    def origin_allowed(self, origin: str | None) -> bool:
        """No Origin (a program, not a web page), or one of the allowed origins."""
        return origin is None or normalize_origin(origin) in self.allowed_origins

    def token_matches(self, authorization: str | None) -> bool:
        scheme, _, presented = (authorization or "").partition(" ")
        return scheme.lower() == "bearer" and self.token.matches(presented.strip().encode("latin-1"))


FORBIDDEN_HOST = b"forbidden: the Host header does not name this server (harness serve --allow-host NAME adds a name)"
FORBIDDEN_ORIGIN = (b"forbidden: requests from this Origin are not allowed (harness serve --allow-origin ORIGIN "
                    b"allows a web client's origin)")
UNAUTHORIZED = b"unauthorized: send this server's token as 'Authorization: Bearer TOKEN'"


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers") or ():
        if key == name:
            return value.decode("latin-1")
    return None


async def _refuse(send: Any, status: int, body: bytes, headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})


class HostOriginGuard:
    """ASGI middleware for checks 1 and 2 (outermost: a refused page learns nothing else)."""

    def __init__(self, app: Any, access: Access):
        self.app, self.access = app, access

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websocket is served
            await send({"type": "websocket.close", "code": 1008})
            return
        if not self.access.host_allowed(_header(scope, b"host") or "", scope.get("server")):
            await _refuse(send, 403, FORBIDDEN_HOST)
        elif not self.access.origin_allowed(_header(scope, b"origin")):
            await _refuse(send, 403, FORBIDDEN_ORIGIN)
        else:
            await self.app(scope, receive, send)


class BearerGuard:
    """ASGI middleware for check 3 (innermost before the MCP app: after CORS, so a browser can read the 401)."""

    def __init__(self, app: Any, access: Access):
        self.app, self.access = app, access

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self.access.token_matches(_header(scope, b"authorization")):
            await _refuse(send, 401, UNAUTHORIZED, ((b"www-authenticate", b'Bearer realm="harness serve"'),))
            return
        await self.app(scope, receive, send)
