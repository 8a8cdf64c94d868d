"""Fixture MCP servers: seeded, deterministic FastMCP servers with fresh state per build.

Each fixture is a subpackage `fixtures_servers.<name>` exposing:
- `DESCRIPTION: str` (one line) and `DEFAULT_SIZE: int`;
- `build(seed: int = 0, size: int = DEFAULT_SIZE) -> FastMCP`, which registers the server's state with
  `register_state(server, state)` so scorers can read it back with `end_state(server)`;
- a stdio entry point, `python -m fixtures_servers.<name> [--seed S] [--size N]`.
A family package (FAMILIES) builds several servers the same way, named in its `SERVERS`.

Every run builds fresh servers, so building must be cheap: tools are plain module-level functions taking
a `ctx: Context` (hidden from the tool schema) that find their server's state with `state_of(ctx)`; they
are parsed into fastmcp Tools once per process (`make_tools`) and added to each new server
(`fixture_server`), which costs ~0.1 ms instead of re-parsing every signature (~4 ms a tool).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import weakref
from types import ModuleType
from typing import Any, Protocol

from fastmcp import Context, FastMCP
from fastmcp.tools import Tool

FIXTURES: tuple[str, ...] = ("crm", "docs", "tickets", "calendar", "inventory", "sprawl")
# Packages that build several servers: each lists them in `SERVERS` (name -> description) and its `build` takes
# `server=NAME` too; tasks name the servers, never the package.
FAMILIES: tuple[str, ...] = ("catalogue",)


class FixtureState(Protocol):
    def snapshot(self) -> dict[str, Any]:
        """The server's current state as JSON-able data (collections of records)."""


_STATES: "weakref.WeakKeyDictionary[FastMCP, FixtureState]" = weakref.WeakKeyDictionary()


def register_state(server: FastMCP, state: FixtureState) -> FastMCP:
    _STATES[server] = state
    return server


def state_of(ctx: Context) -> Any:
    """The state of the server a tool call arrived at."""
    return _STATES[ctx.fastmcp]


def make_tools(*functions: Any) -> tuple[Tool, ...]:
    """Parse tool functions once; their docstrings are the descriptions an LM reads."""
    return tuple(Tool.from_function(fn) for fn in functions)


def fixture_server(name: str, instructions: str, tools: tuple[Tool, ...], state: FixtureState) -> FastMCP:
    """A new server with its own state and the shared, pre-parsed tools."""
    server = FastMCP(name, instructions=instructions)
    for tool in tools:
        server.add_tool(tool)
    return register_state(server, state)


def end_state(server: FastMCP) -> dict[str, Any] | None:
    """The state snapshot of a fixture server built here, or None for servers without one."""
    state = _STATES.get(server)
    return state.snapshot() if state is not None else None


def dump_state(server: FastMCP) -> dict[str, Any] | None:
    """The whole state of a fixture server built here (every field of its state dataclass, as JSON-able data; more
    than `end_state`, which shows what a scorer reads), or None for servers without one."""
    state = _STATES.get(server)
    return dataclasses.asdict(state) if state is not None and dataclasses.is_dataclass(state) else None


def load_state(server: FastMCP, data: dict[str, Any]) -> None:
    """Give a freshly built fixture server the state `dump_state` took from another of its kind, so a session
    sharing server state goes on from where its previous task left it."""
    _STATES[server] = type(_STATES[server])(**copy.deepcopy(data))


def _families() -> dict[str, ModuleType]:
    """Server name -> the family package that builds it."""
    return {server: module for module in map(importlib.import_module, (f"fixtures_servers.{f}" for f in FAMILIES))
            for server in module.SERVERS}


def available() -> list[str]:
    """Fixture server names a task can name: each single fixture whose module exists, then every family's servers."""
    singles = [name for name in FIXTURES if importlib.util.find_spec(f"fixtures_servers.{name}") is not None]
    return singles + list(_families())


def load(name: str) -> ModuleType:
    """The package that builds fixture server `name` (a family's, for one of its servers)."""
    if name in _families():
        return _families()[name]
    if name not in available():
        raise KeyError(name)
    return importlib.import_module(f"fixtures_servers.{name}")


def describe(name: str) -> str:
    """One line about fixture server `name`."""
    module = load(name)
    return module.SERVERS[name] if name in getattr(module, "SERVERS", {}) else module.DESCRIPTION


def build(name: str, seed: int = 0, size: int | None = None) -> FastMCP:
    """A fresh fixture server `name` (its package's default size when `size` is None)."""
    module = load(name)
    size = module.DEFAULT_SIZE if size is None else size
    if name in getattr(module, "SERVERS", {}):
        return module.build(seed=seed, size=size, server=name)
    return module.build(seed=seed, size=size)


def check_size(name: str, size: int) -> None:
    """A ValueError saying why fixture server `name` cannot be built at `size`: every fixture's size counts
    something (rows, tools), so it is at least 1; a package that bounds its sizes further says so with a
    `check_size`."""
    if size < 1:
        raise ValueError(f"{size} is not valid: expected a whole number of at least 1")
    check = getattr(load(name), "check_size", None)
    if check is not None:
        check(size)
