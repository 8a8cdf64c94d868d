"""Fixture MCP servers: seeded, deterministic FastMCP servers with fresh state per build.

Each fixture is a subpackage `fixtures_servers.<name>` exposing:
- `DESCRIPTION: str` (one line) and `DEFAULT_SIZE: int`;
- `build(seed: int = 0, size: int = DEFAULT_SIZE) -> FastMCP`, which registers the server's state with
  `register_state(server, state)` so scorers can read it back with `end_state(server)`;
- a stdio entry point, `python -m fixtures_servers.<name> [--seed S] [--size N]`.

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


def available() -> list[str]:
    """Fixture names whose module exists (the list grows as fixtures are added)."""
    return [name for name in FIXTURES if importlib.util.find_spec(f"fixtures_servers.{name}") is not None]


def load(name: str) -> ModuleType:
    if name not in available():
        raise KeyError(name)
    return importlib.import_module(f"fixtures_servers.{name}")
