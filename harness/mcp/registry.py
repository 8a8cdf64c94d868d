"""Every server a task can name, in one registry: fixture servers (the fixtures_servers package), servers
registered from Python (`register_server`), servers of a published benchmark (an adapter registers a source for
the `ADAPTER:PATH` of its refs, `register_source`) and external servers (mcp_servers.json, harness.mcp.external).
The first three are built in this process, fresh for every run; external ones are started over stdio. This room
never imports the adapters: they register here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fastmcp import FastMCP

import fixtures_servers
from harness.errors import UserError
from harness.mcp.external import ExternalServer, default_external_servers
from harness.tasks.task import TOOL_CALLERS, ServerRef, Suite, ToolCaller

ServerKind = Literal["fixture", "registered", "adapter", "external"]
ServerFactory = Callable[[ServerRef], FastMCP]
SourceFactory = Callable[[Path, str], FastMCP]  # (the benchmark's checkout, the server's name) -> a new server

_REGISTERED: dict[str, tuple[ServerFactory, str]] = {}
_SOURCES: dict[str, SourceFactory] = {}


@dataclass(frozen=True)
class ServerInfo:
    name: str
    kind: ServerKind
    description: str


def register_server(name: str, factory: ServerFactory, description: str = "") -> None:
    """Make an in-process FastMCP server available to suites by name (built fresh for every run by
    `factory(ref)`): a Python-API alternative to a fixture package or mcp_servers.json."""
    if name in fixtures_servers.available():
        raise ValueError(f"'{name}' is a fixture server name")
    _REGISTERED[name] = (factory, description)


def register_source(adapter: str, factory: SourceFactory) -> None:
    """Build the servers of refs whose source is `ADAPTER:PATH` with `factory(path, server name)`: how a
    benchmark adapter's tasks get their tools in any process that imported the adapter."""
    _SOURCES[adapter] = factory


def list_servers() -> list[ServerInfo]:
    """The servers a task can name (an adapter's servers are named by its tasks, so they are not listed)."""
    infos = [ServerInfo(name, "fixture", fixtures_servers.describe(name)) for name in fixtures_servers.available()]
    infos += [ServerInfo(name, "registered", description) for name, (_, description) in _REGISTERED.items()]
    for name, server in external_servers().items():
        infos.append(ServerInfo(name, "external", " ".join([server.command, *server.args])))
    return infos


def external_servers() -> dict[str, ExternalServer]:
    """The external servers of the MCP config in effect (harness.mcp.external)."""
    return default_external_servers()


def check_servers(suite: Suite) -> None:
    """Every server the suite names exists (a fixture, a registered or an external server; a benchmark's own
    servers were checked when its adapter loaded the suite)."""
    known = {info.name for info in list_servers()}
    for task in suite.tasks:
        for ref in task.servers:
            if ref.name not in known and not ref.source:
                raise UserError(f"{suite.path}: task '{task.id}': field 'servers': unknown server '{ref.name}' "
                                f"(known: {', '.join(sorted(known))}; add external ones in mcp_servers.json)")
            if ref.size is not None and ref.name in fixtures_servers.available():
                try:
                    fixtures_servers.check_size(ref.name, ref.size)
                except ValueError as exc:
                    raise UserError(f"{suite.path}: task '{task.id}': server '{ref.name}': {exc}") from None


def is_in_memory(ref: ServerRef) -> bool:
    """Whether the server is built in this process for each run (a fixture, a registered or an adapter's
    server); otherwise it is an external one."""
    return bool(ref.source) or ref.name in fixtures_servers.available() or ref.name in _REGISTERED


def build_in_memory(ref: ServerRef) -> FastMCP:
    """A fresh in-process server for `ref`: from its adapter's source, its registered factory, or its fixture."""
    if ref.source:
        adapter, colon, path = ref.source.partition(":")
        if not colon or adapter not in _SOURCES:
            raise ValueError(f"server '{ref.name}': source {ref.source!r} is not ADAPTER:PATH of a registered "
                             f"adapter (known: {', '.join(sorted(_SOURCES))})")
        return _SOURCES[adapter](Path(path.strip()).expanduser(), ref.name)
    if ref.name in _REGISTERED:
        return _REGISTERED[ref.name][0](ref)
    return fixtures_servers.build(ref.name, seed=ref.seed, size=ref.size)


def tool_callers(refs: tuple[ServerRef, ...]) -> dict[str, tuple[ToolCaller, ...]]:
    """Who may call each server's tools in the hybrid arm: the suite's `callers`, else an external server's own
    entry in mcp_servers.json, else both. Other arms ignore it: `direct` and `codemode` stay what they are."""
    external: dict[str, ExternalServer] | None = None
    callers: dict[str, tuple[ToolCaller, ...]] = {}
    for ref in refs:
        if ref.callers is not None:
            callers[ref.name] = ref.callers
        elif is_in_memory(ref):
            callers[ref.name] = TOOL_CALLERS
        else:
            external = external_servers() if external is None else external
            callers[ref.name] = external[ref.name].callers if ref.name in external else TOOL_CALLERS
    return callers


def callers_text(callers: dict[str, tuple[ToolCaller, ...]]) -> str:
    """The compact form a row records: `crm=direct+code,tickets=code`, in the task's server order."""
    return ",".join(f"{name}={'+'.join(allowed)}" for name, allowed in callers.items())
