"""Every server a task can name, in one registry: fixture servers (the fixtures_servers package), servers
registered from Python (`register_server`), servers of a published benchmark (a ref whose source is
`ADAPTER:PATH` is built by that adapter, as harness.tasks.registry holds it: registering the adapter registers its
servers) and external servers (mcp_servers.json, harness.mcp.external). The first three are built in this process,
fresh for every run; external ones are started over stdio, or reached at their URL (remote ones). This room never
imports the adapters."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fastmcp import FastMCP

import fixtures_servers
from harness.errors import UserError
from harness.mcp.external import ConfiguredServer, RemoteServer, default_external_servers
from harness.tasks.registry import ADAPTERS
from harness.tasks.task import TOOL_CALLERS, ServerRef, Suite, Task, ToolCaller

ServerKind = Literal["fixture", "registered", "adapter", "external", "remote"]
ServerFactory = Callable[[ServerRef], FastMCP]

_REGISTERED: dict[str, tuple[ServerFactory, str]] = {}


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


def list_servers() -> list[ServerInfo]:
    """The servers a task can name (an adapter's servers are named by its tasks, so they are not listed)."""
    infos = [ServerInfo(name, "fixture", fixtures_servers.describe(name)) for name in fixtures_servers.available()]
    infos += [ServerInfo(name, "registered", description) for name, (_, description) in _REGISTERED.items()]
    for name, server in external_servers().items():
        if isinstance(server, RemoteServer):
            infos.append(ServerInfo(name, "remote", f"{server.transport} {server.url}"))
        else:
            infos.append(ServerInfo(name, "external", " ".join([server.command, *server.args])))
    return infos


def external_servers() -> dict[str, ConfiguredServer]:
    """The external servers of the MCP config in effect (harness.mcp.external)."""
    return default_external_servers()


def remote_server_names(tasks: Iterable[Task]) -> list[str]:
    """The remote servers (a `url` in mcp_servers.json) these tasks name, sorted: their state is their own and
    carries over from run to run, which a run says and records."""
    names = {ref.name for task in tasks for ref in task.servers if not is_in_memory(ref)}
    external = external_servers() if names else {}
    return sorted(name for name in names if isinstance(external.get(name), RemoteServer))


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
                    raise UserError(f"{suite.path}: task '{task.id}': server '{ref.name}': size: {exc}") from None


def is_in_memory(ref: ServerRef) -> bool:
    """Whether the server is built in this process for each run (a fixture, a registered or an adapter's
    server); otherwise it is an external one."""
    return bool(ref.source) or ref.name in fixtures_servers.available() or ref.name in _REGISTERED


def build_in_memory(ref: ServerRef) -> FastMCP:
    """A fresh in-process server for `ref`: from the registered adapter its source names, its registered
    factory, or its fixture."""
    if ref.source:
        adapter, colon, path = ref.source.partition(":")
        if not colon or adapter not in ADAPTERS:
            raise ValueError(f"server '{ref.name}': source {ref.source!r} is not ADAPTER:PATH of a registered "
                             f"adapter (known: {', '.join(sorted(ADAPTERS))})")
        return ADAPTERS[adapter].build_server(Path(path.strip()).expanduser(), ref.name)
    if ref.name in _REGISTERED:
        return _REGISTERED[ref.name][0](ref)
    return fixtures_servers.build(ref.name, seed=ref.seed, size=ref.size)


def tool_callers(refs: tuple[ServerRef, ...]) -> dict[str, tuple[ToolCaller, ...]]:
    """Who may call each server's tools in the hybrid arm: the suite's `callers`, else an external server's own
    entry in mcp_servers.json, else both. Other arms ignore it: `direct` and `codemode` stay what they are."""
    external: dict[str, ConfiguredServer] | None = None
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
