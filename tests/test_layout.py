"""The package's shape, checked: stages import one way, no module imports itself back, files stay small, and
every stage says what it does.

Imports are read from the source (every `import`, including ones inside functions and under TYPE_CHECKING),
so a cycle cannot hide behind a late import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "harness"
MAX_LINES = 400

# Each stage may import from its own package and from lower layers only (docs/development.md: "Where things go").
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"env", "errors", "files", "hashing", "defaults", "version"}),  # shared helpers
    frozenset({"plugins"}),  # loads the installed plugins: they register through the stages' public functions
    frozenset({"limits"}),  # a run's limits, one value every later stage is handed
    frozenset({"trace"}),  # the record types every later stage shares
    frozenset({"tasks"}),
    frozenset({"mcp", "models", "sandbox"}),
    frozenset({"adapters"}),  # register into tasks' suite registry and mcp's server registry
    frozenset({"agents"}),
    frozenset({"run", "serve"}),
    frozenset({"optimize", "analysis", "viewer", "exports"}),
    frozenset({"cli", "__init__"}),
    frozenset({"__main__"}),  # `python -m harness`: the command line
)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(path: Path) -> set[str]:
    """The harness modules a file imports, anywhere in it (`from harness.x import y` counts harness.x.y when
    y is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("harness"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("harness"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names
                         if f"{node.module}.{alias.name}" in MODULES)
    return {name for name in found if name in MODULES}


GRAPH = {name: imported_modules(path) - {name} for name, path in MODULES.items()}


def stage(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def layer(module: str) -> int:
    return next(n for n, names in enumerate(LAYERS) if stage(module) in names)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path (first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_imports_itself_back_even_through_late_imports():
    assert find_cycle(GRAPH) is None


def test_every_module_belongs_to_a_layer():
    known = set().union(*LAYERS)
    assert {stage(m) for m in MODULES} <= known


def test_stages_import_only_their_own_package_and_lower_layers():
    upward = sorted(f"{src} -> {dst}" for src, targets in GRAPH.items() for dst in targets
                    if stage(src) != stage(dst) and layer(dst) >= layer(src))
    assert upward == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_file_is_over_the_line_limit(name: str):
    assert len(MODULES[name].read_text().splitlines()) <= MAX_LINES


@pytest.mark.parametrize("package", sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py")))
def test_each_stage_says_what_it_does(package: str):
    docstring = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text()))
    assert docstring and len(docstring.split()) >= 8
