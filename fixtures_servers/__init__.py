"""Fixture MCP servers: seeded, deterministic FastMCP servers with fresh state per build.

Each fixture is a subpackage `fixtures_servers.<name>` exposing:
- `DESCRIPTION: str` (one line) and `DEFAULT_SIZE: int`;
- `build(seed: int = 0, size: int = DEFAULT_SIZE) -> FastMCP`, which registers the server's state with
  `register_state(server, state)` so scorers can read it back with `end_state(server)`;
- a stdio entry point, `python -m fixtures_servers.<name> [--seed S] [--size N]`.
"""

from __future__ import annotations

import importlib
import weakref
from types import ModuleType
from typing import Any, Protocol

from fastmcp import FastMCP

FIXTURES: tuple[str, ...] = ("crm", "docs", "tickets", "calendar", "inventory", "sprawl")


class FixtureState(Protocol):
    def snapshot(self) -> dict[str, Any]:
        """The server's current state as JSON-able data (collections of records)."""


_STATES: "weakref.WeakKeyDictionary[FastMCP, FixtureState]" = weakref.WeakKeyDictionary()


def register_state(server: FastMCP, state: FixtureState) -> FastMCP:
    _STATES[server] = state
    return server


def end_state(server: FastMCP) -> dict[str, Any] | None:
    """The state snapshot of a fixture server built here, or None for servers without one."""
    state = _STATES.get(server)
    return state.snapshot() if state is not None else None


def available() -> list[str]:
    """Fixture names whose module exists (the list grows as fixtures are added)."""
    return [name for name in FIXTURES if importlib.util.find_spec(f"fixtures_servers.{name}") is not None]


def load(name: str) -> ModuleType:
    if name not in available():
        raise KeyError(name)
    return importlib.import_module(f"fixtures_servers.{name}")
