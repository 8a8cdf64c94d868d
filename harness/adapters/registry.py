"""The benchmark adapters by name, and the one place a `--suite` value is turned into a Suite: `ADAPTER:PATH`
goes to that adapter, anything else is a suite name or YAML file (harness.tasks.suite)."""

from __future__ import annotations

from pathlib import Path

from fastmcp import FastMCP

from harness.adapters.adapter import BenchmarkAdapter
from harness.adapters.m3tooleval import M3ToolEval
from harness.errors import UserError
from harness.tasks import suite as suite_files
from harness.tasks.task import ServerRef, Suite

ADAPTERS: dict[str, BenchmarkAdapter] = {adapter.name: adapter for adapter in (M3ToolEval(),)}


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


def load_suite(spec: str) -> Suite:
    """A suite by name (tasks/NAME.yaml), by YAML file, or a benchmark read from its checkout (`ADAPTER:PATH`)."""
    found = split_spec(spec)
    if found is None:
        return suite_files.load_suite(spec)
    adapter, path = found
    return adapter.load(path)


def build_server(ref: ServerRef) -> FastMCP:
    """A fresh server for a benchmark task's ServerRef (its `source` says which adapter and checkout)."""
    found = split_spec(ref.source)
    if found is None:
        raise ValueError(f"server '{ref.name}': source {ref.source!r} is not ADAPTER:PATH")
    adapter, path = found
    return adapter.build_server(path, ref.name)
