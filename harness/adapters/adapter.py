"""What a benchmark adapter declares: its name (the `NAME:PATH` prefix of `--suite`), how it loads the benchmark's
tasks from the user's checkout, how a task's tools become a FastMCP server for one run, and which registered
scorer judges an answer, and (optionally) the protocol the benchmark was published with as a named scaffold preset.
The next benchmark is one module implementing this, added to `ADAPTERS` in
harness/adapters/__init__.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from fastmcp import FastMCP

from harness.tasks.registry import SuiteAdapter


@dataclass(frozen=True)
class PublishedProtocol:
    """The rules a benchmark's own harness runs its agents under, as a scaffold preset `--scaffold NAME` names:
    a built-in preset (`base`) with the scaffold fields in `rules` set (harness.agents.scaffold builds it; this
    layer only declares it). `description` says what it reproduces, for `harness scaffolds` and the docs."""

    name: str
    base: Literal["plain", "guided"]
    rules: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""


class BenchmarkAdapter(SuiteAdapter, Protocol):
    """A SuiteAdapter (its `name` is the prefix in `--suite NAME:PATH` and the suite name in rows; `scorer` the
    registered scorer its tasks name) whose `load` gives each task's servers as
    ServerRef(name, source=f"{self.name}:{folder}"), so any process can build them again from the ref alone;
    `protocol` is the benchmark's published protocol as a preset, or None."""

    protocol: PublishedProtocol | None

    def build_server(self, path: Path, server: str) -> FastMCP:
        """A new FastMCP server with the tools of `server` (a name `load` gave), with fresh state: one per run."""
        ...
