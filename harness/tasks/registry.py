"""The one registry of benchmark adapters, and the one place a `--suite` value becomes a Suite.

An adapter is registered once, by `register_adapter` (public as `harness.register_adapter`), and that one entry is
everything the harness knows of it: suite loading (`--suite ADAPTER:PATH`, here), its servers
(harness.mcp.registry builds a ref whose source is `ADAPTER:PATH` through it), its published protocol as a
scaffold preset (harness.agents.scaffold) and its line in `harness suites`. The built-in adapters register the same
way when harness.adapters is imported, so this room never imports them; anything else is a suite name or YAML file
(harness.tasks.suite)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from harness.errors import UserError
from harness.tasks import suite as suite_files
from harness.tasks.task import Suite

if TYPE_CHECKING:
    from fastmcp import FastMCP


@dataclass(frozen=True)
class PublishedProtocol:
    """The rules a benchmark's own harness runs its agents under, as a scaffold preset `--scaffold NAME` names:
    a built-in preset (`base`) with the scaffold fields in `rules` set (harness.agents.scaffold builds it; this
    layer only declares it). `description` says what it reproduces, for `harness scaffolds` and the docs."""

    name: str
    base: Literal["plain", "guided"]
    rules: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""


class BenchmarkAdapter(Protocol):
    """A published benchmark read from the user's checkout. `name` is the prefix in `--suite NAME:PATH` and the
    suite name in rows; `description` its line in `harness suites`; `scorer` the registered scorer its tasks name;
    `protocol` the benchmark's published protocol as a preset, or None. `load` gives each task's servers as
    ServerRef(name, source=f"{self.name}:{folder}"), so any process can build them again from the ref alone."""

    name: str
    description: str
    scorer: str
    protocol: PublishedProtocol | None

    def load(self, path: Path) -> Suite:
        """The benchmark's tasks, read from the checkout at `path` (a UserError when it is not one)."""
        ...

    def build_server(self, path: Path, server: str) -> FastMCP:
        """A new FastMCP server with the tools of `server` (a name `load` gave), with fresh state: one per run."""
        ...


ADAPTERS: dict[str, BenchmarkAdapter] = {}


def register_adapter(adapter: BenchmarkAdapter) -> None:
    """Make `adapter` known everywhere at once: `--suite NAME:PATH`, the servers its tasks name, and its published
    protocol as `--scaffold NAME`. Registering a name again replaces it; a name must be a plain word (it is the
    part of `--suite NAME:PATH` before the colon)."""
    if not re.fullmatch(r"[\w.-]+", adapter.name):
        raise ValueError(f"benchmark adapter name {adapter.name!r}: use letters, digits, '_', '.' or '-'")
    ADAPTERS[adapter.name] = adapter


def split_spec(spec: str) -> tuple[BenchmarkAdapter, Path] | None:
    """(adapter, path) for `ADAPTER:PATH`, None for a suite name or file; an unknown adapter or a missing path
    is a UserError."""
    name, colon, path = spec.partition(":")
    if not colon or Path(spec).exists() or Path(spec).suffix in (".yaml", ".yml"):
        return None
    if name not in ADAPTERS:
        raise UserError(f"--suite {spec}: unknown benchmark '{name}' (known: {', '.join(sorted(ADAPTERS))}; "
                        "or give a suite name or a YAML file)")
    if not path.strip():
        raise UserError(f"--suite {spec}: give the path of the benchmark's checkout after the colon, "
                        f"e.g. {name}:~/code-act")
    return ADAPTERS[name], Path(path.strip()).expanduser()


def load_suite(spec: str, catalogue_sizes: tuple[int, ...] | None = None) -> Suite:
    """A suite by name (tasks/NAME.yaml), by YAML file, or a benchmark read from its checkout (`ADAPTER:PATH`);
    `catalogue_sizes`: the sizes a catalogue suite's tasks are made at instead of its own (harness.tasks.suite)."""
    found = split_spec(spec)
    if found is None:
        return suite_files.load_suite(spec, catalogue_sizes)
    adapter, path = found
    if catalogue_sizes:
        raise UserError(f"--catalogue-size: the benchmark '{adapter.name}' takes no catalogue size")
    return adapter.load(path)
