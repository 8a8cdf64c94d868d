"""CodeAct's M3ToolEval (github.com/xingyaoww/code-act, `scripts/eval/m3tooleval/`), read from the user's checkout.

The checkout's `tasks` package is imported under a private name (never `tasks`, which could be another package):
its modules register lists of `Task` objects (name `family/task`, a mapping of `ToolType(name, description,
function, fn_signature)`, `instruction`, `expected_output`). Importing it pulls a REPL module that needs IPython
and a progress-bar import (tqdm); the harness uses neither, so stand-in modules take their place during the
import only, and what the tasks print while being built is swallowed.

Each family's tools are one server, built for each run from a deep copy of the tools as loaded: the stateful
tools (web_browsing's browser) are methods of an object, and the copy gives every run its own object.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import importlib.util
import inspect
import io
import sys
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastmcp import FastMCP

from harness.adapters.functions import python_tool, python_tools_server
from harness.adapters.m3tooleval_scoring import M3ToolEvalAnswer
from harness.errors import UserError, describe_exception
from harness.hashing import content_hash
from harness.tasks.registry import PublishedProtocol
from harness.tasks.task import ScorerSpec, ServerRef, Suite, Task

NAME = "m3tooleval"
FOLDER_IN_CHECKOUT = Path("scripts/eval/m3tooleval")
MAX_TURNS = 10  # the benchmark's own turn limit (main.py --n_turns_limit)
# The benchmark's prompt ends by asking for the bare answer; exact-match scoring needs the same request.
ANSWER_FORMAT = "Give only the answer (e.g. a single number), without any other text."
# The benchmark's own harness (main.py) tells its agent that a wrong answer is incorrect, repeats its request for
# the bare answer, and goes on until the turn limit; its JSON and text modes take one tool call per reply. Its
# protocol as a preset, in the harness's own words.
FEEDBACK = f"That answer is incorrect; try again. {ANSWER_FORMAT}"
PROTOCOL = PublishedProtocol(
    NAME, "plain", {"answer_feedback": FEEDBACK, "turn_limit": MAX_TURNS, "parallel_tool_calls": False},
    "M3ToolEval's published rules (its main.py): plain, one tool call per reply, a rejected answer is told it is "
    f"incorrect and the run goes on; success is any accepted answer within {MAX_TURNS} turns, every attempt counted")
# Modules the checkout imports but the harness never uses (its REPL and its progress bar).
STAND_INS = ("IPython", "IPython.core", "IPython.core.interactiveshell", "IPython.utils", "IPython.utils.io", "tqdm")
CLONE_HINT = "git clone https://github.com/xingyaoww/code-act"


def benchmark_folder(path: Path) -> Path:
    """The `scripts/eval/m3tooleval` folder: `path` itself or inside a code-act checkout at `path`."""
    for candidate in (path, path / FOLDER_IN_CHECKOUT):
        if (candidate / "tasks" / "__init__.py").is_file() and (candidate / "tasks" / "base.py").is_file():
            return candidate.resolve()
    raise UserError(f"{path}: not a code-act checkout (no tasks/base.py here or in {FOLDER_IN_CHECKOUT}/); "
                    f"get one with: {CLONE_HINT}")


class _StandIn(types.ModuleType):
    """A module whose every attribute is a placeholder: enough for `from X import Y` at import time."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {})


@contextlib.contextmanager
def _stand_ins(names: tuple[str, ...]) -> Iterator[None]:
    added = [name for name in names if name not in sys.modules]
    for name in added:
        sys.modules[name] = _StandIn(name)
    try:
        yield
    finally:
        for name in added:
            sys.modules.pop(name, None)


@dataclass(frozen=True)
class Family:
    """One task family's tools as loaded (never called: each run gets a deep copy) and a hash of its source."""

    name: str
    tools: Mapping[str, Any]  # tool name -> the benchmark's ToolType
    source_hash: str


@dataclass(frozen=True)
class Checkout:
    folder: Path
    tasks: tuple[Task, ...]
    families: Mapping[str, Family]


def _import_tasks(folder: Path) -> types.ModuleType:
    """The checkout's `tasks` package, imported under a name private to this folder; returns its `base` module."""
    package = f"_harness_m3tooleval_{hashlib.sha256(str(folder).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(package, folder / "tasks" / "__init__.py",
                                                  submodule_search_locations=[str(folder / "tasks")])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    try:
        with _stand_ins(STAND_INS), contextlib.redirect_stdout(io.StringIO()):
            spec.loader.exec_module(module)
    except Exception as exc:  # the user's checkout: any failure is theirs to fix, in one line
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]
        raise UserError(f"{folder}: importing the benchmark's tasks failed ({describe_exception(exc)}); "
                        f"is it an unmodified checkout of {CLONE_HINT}?") from None
    return sys.modules[f"{package}.base"]


def _source_files(tools: Mapping[str, Any]) -> list[Path]:
    """The files that define the tools: their module, or every file of their package (its data included)."""
    files: set[Path] = set()
    for tool in tools.values():
        function = getattr(tool.function, "__func__", tool.function)
        module = sys.modules.get(getattr(function, "__module__", "") or "")
        source = getattr(module, "__file__", None)
        if source is None:
            continue
        source = Path(source)
        if source.name == "__init__.py":
            files.update(p for p in source.parent.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        else:
            files.add(source)
    return sorted(files)


def _tool_shape(tools: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    return [(name, tool.description, tool.fn_signature) for name, tool in tools.items()]


def _family(name: str, tools: Mapping[str, Any], folder: Path) -> Family:
    """The family's tools and a hash of their shape and source files (named relative to the benchmark folder, so
    two checkouts of the same version hash alike)."""
    sources = {str(p.relative_to(folder) if p.is_relative_to(folder) else p.name):
               hashlib.sha256(p.read_bytes()).hexdigest() for p in _source_files(tools)}
    return Family(name, tools, content_hash({"tools": _tool_shape(tools), "sources": sources}))


@functools.cache
def load_checkout(folder: Path) -> Checkout:
    """The benchmark's tasks as harness Tasks (loaded once per process and folder)."""
    base = _import_tasks(folder)
    families: dict[str, Family] = {}
    tasks: list[Task] = []
    for iterator, _ in base.task_iterators:
        for loaded in iterator:
            family_name = loaded.name.split("/")[0]
            family = families.get(family_name)
            if family is None:
                family = families[family_name] = _family(family_name, loaded.tools, folder)
            elif _tool_shape(loaded.tools) != _tool_shape(family.tools):
                raise UserError(f"{folder}: task '{loaded.name}' offers other tools than the rest of family "
                                f"'{family_name}' (one server per family needs the same tools)")
            tasks.append(Task(
                id=loaded.name, category=family_name, prompt=f"{loaded.instruction.strip()}\n\n{ANSWER_FORMAT}",
                expected=loaded.expected_output, scorer=ScorerSpec(M3ToolEvalAnswer.name),
                reference=None, servers=(ServerRef(family_name, source=f"{NAME}:{folder}"),), max_turns=MAX_TURNS,
                metadata={"benchmark": NAME, "tools_hash": family.source_hash},
            ))
    if not tasks:
        raise UserError(f"{folder}: the benchmark's tasks package registered no tasks")
    return Checkout(folder, tuple(tasks), families)


class M3ToolEval:
    """The M3ToolEval adapter (harness.adapters.adapter.BenchmarkAdapter)."""

    name = NAME
    description = "CodeAct's M3ToolEval: 82 tool-use tasks in 5 families (--suite m3tooleval:PATH to code-act)"
    scorer = M3ToolEvalAnswer.name
    protocol = PROTOCOL

    def load(self, path: Path) -> Suite:
        checkout = load_checkout(benchmark_folder(path))
        return Suite(name=NAME, description=f"M3ToolEval from {checkout.folder}", tasks=checkout.tasks,
                     path=checkout.folder, spec=f"{NAME}:{checkout.folder}")

    def build_server(self, path: Path, server: str) -> FastMCP:
        checkout = load_checkout(benchmark_folder(path))
        if server not in checkout.families:
            raise UserError(f"{checkout.folder}: M3ToolEval has no task family '{server}' "
                            f"(known: {', '.join(sorted(checkout.families))})")
        tools = copy.deepcopy(dict(checkout.families[server].tools))  # fresh state for this run
        return python_tools_server(f"{NAME}-{server}", [
            python_tool(name, _description(tool), tool.function, tool.fn_signature) for name, tool in tools.items()])


def _description(tool: Any) -> str:
    """The tool's description followed by its signature, as the benchmark's prompt lists them."""
    text = inspect.cleandoc(str(tool.description))
    return f"{text}\nSignature: {tool.fn_signature}" if tool.fn_signature else text
