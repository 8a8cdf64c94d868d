"""The one place a `--suite` value becomes a Suite: `ADAPTER:PATH` goes to the adapter registered under that name,
anything else is a suite name or YAML file (harness.tasks.suite). Adapters register themselves (harness.adapters
does on import), so this room never imports them."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from harness.errors import UserError
from harness.tasks import suite as suite_files
from harness.tasks.task import Suite


class SuiteAdapter(Protocol):
    """What suite loading needs of an adapter: its name (the `NAME:PATH` prefix of `--suite`), a line for
    `harness suites`, the scorer its tasks name, and how it reads the benchmark from a checkout."""

    name: str
    description: str
    scorer: str

    def load(self, path: Path) -> Suite: ...


ADAPTERS: dict[str, SuiteAdapter] = {}


def register_adapter(adapter: SuiteAdapter) -> None:
    """Make `--suite NAME:PATH` load through `adapter` (registering a name again replaces it)."""
    ADAPTERS[adapter.name] = adapter


def split_spec(spec: str) -> tuple[SuiteAdapter, Path] | None:
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
