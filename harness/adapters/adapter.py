"""What a benchmark adapter declares: its name (the `NAME:PATH` prefix of `--suite`), how it loads the benchmark's
tasks from the user's checkout, how a task's tools become a FastMCP server for one run, and which registered
scorer judges an answer. The next benchmark is one module implementing this, added to harness.adapters.registry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from fastmcp import FastMCP

from harness.tasks.task import Suite


class BenchmarkAdapter(Protocol):
    name: str  # the prefix in `--suite NAME:PATH`, and the suite name in rows
    description: str  # one line for `harness suites`
    scorer: str  # the registered scorer (harness.tasks.scorers) its tasks name

    def load(self, path: Path) -> Suite:
        """The benchmark's tasks read from the checkout at `path` (a UserError naming the path and the fix if it is
        not one). Each task's servers are ServerRef(name, source=f"{self.name}:{folder}") so any process can build
        them again from the ref alone."""
        ...

    def build_server(self, path: Path, server: str) -> FastMCP:
        """A new FastMCP server with the tools of `server` (a name `load` gave), with fresh state: one per run."""
        ...
