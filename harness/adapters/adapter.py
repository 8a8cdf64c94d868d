"""What a benchmark adapter declares: its name (the `NAME:PATH` prefix of `--suite`), how it loads the benchmark's
tasks from the user's checkout, how a task's tools become a FastMCP server for one run, and which registered
scorer judges an answer. The next benchmark is one module implementing this, added to `ADAPTERS` in
harness/adapters/__init__.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from fastmcp import FastMCP

from harness.tasks.registry import SuiteAdapter


class BenchmarkAdapter(SuiteAdapter, Protocol):
    """A SuiteAdapter (its `name` is the prefix in `--suite NAME:PATH` and the suite name in rows; `scorer` the
    registered scorer its tasks name) whose `load` gives each task's servers as
    ServerRef(name, source=f"{self.name}:{folder}"), so any process can build them again from the ref alone."""

    def build_server(self, path: Path, server: str) -> FastMCP:
        """A new FastMCP server with the tools of `server` (a name `load` gave), with fresh state: one per run."""
        ...
