"""BFCL v4's multi-turn categories as tasks: `--suite bfcl:installed#multi_turn_base` (the `bfcl-eval` package in
the harness's environment) or `bfcl:PATH#CATEGORY` (a gorilla checkout); without `#CATEGORY`, base, miss_param and
long_context. Task ids are the entries' own (`multi_turn_base_12`), so `--tasks` picks them.

Each entry is a conversation with a scripted user (UserScenario.turns): its user turns are given one after another,
each reply of the agent's without a tool call ends its turn (as BFCL's own inference loop reads a reply without
function calls), and the reply to the last turn ends the run. Its tools are one MCP server, `bfcl`, built for every
run over a fresh instance of each involved class loaded with the entry's initial config (long_context's flag passed
on); the tools are the classes' function docs, BFCL's type names mapped to JSON Schema by its own table, and each
call's result is returned as BFCL's executor returns it. The `bfcl` scorer (harness.adapters.bfcl_scoring) hands the
calls each turn executed to BFCL's own `multi_turn_checker`. `--scaffold bfcl` is BFCL's inference rules (PROTOCOL).

miss_func (functions held back until a later turn, offered through the tool list changing) is not supported yet:
naming it is an error. A task's reference is none: BFCL's ground truth is per turn, and `scripted:reference` replays
one call list, so `harness validate` checks these tasks by their scorer only.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from fastmcp import FastMCP
from fastmcp.tools import Tool
from fastmcp.tools.base import ToolResult
from pydantic import PrivateAttr

from harness.adapters.bfcl_package import (
    CATEGORIES,
    INSTALLED,
    Bfcl,
    bfcl_result,
    category_of,
    json_schema,
    load_bfcl,
)
from harness.adapters.bfcl_scoring import BfclChecker
from harness.errors import UserError
from harness.tasks.registry import PublishedProtocol
from harness.tasks.task import ScorerSpec, ServerRef, Suite, Task, UserScenario

NAME = "bfcl"
SERVER = "bfcl"
DEFAULT_CATEGORIES = ("multi_turn_base", "multi_turn_miss_param", "multi_turn_long_context")
UNSUPPORTED = {"multi_turn_miss_func": "its held-back functions (offered at a later turn) are not supported yet"}
STEP_LIMIT = 20  # BFCL's MAXIMUM_STEP_LIMIT (constants/default_prompts.py), model replies per user turn
# BFCL's inference (model_handler/base_handler.py, FC mode): every function call of a reply is executed and its
# result returned whole; a reply without function calls ends the turn; at most STEP_LIMIT replies per user turn
# (here a task's own turn limit pools them: STEP_LIMIT per user turn over the whole entry; docs/benchmarks.md).
PROTOCOL = PublishedProtocol(
    NAME, "plain", {"parallel_tool_calls": True, "observation_limit_chars": 1_000_000},
    f"BFCL's inference rules: plain, every call of a reply runs, results shown whole, a reply without a call ends "
    f"the user's turn, {STEP_LIMIT} replies per user turn (pooled over the entry's turns)")


def parse_spec(path: Path) -> tuple[str, list[str]]:
    """(where: `installed` or a checkout's path, categories) from `WHERE` or `WHERE#CATEGORY`."""
    where, _, category = str(path).partition("#")
    where = where.strip() or INSTALLED
    if not category:
        return where, list(DEFAULT_CATEGORIES)
    if not category.startswith("multi_turn_"):
        category = f"multi_turn_{category}"
    if category in UNSUPPORTED:
        raise UserError(f"--suite bfcl:{path}: {category}: {UNSUPPORTED[category]} (supported: "
                        f"{', '.join(DEFAULT_CATEGORIES)})")
    if category not in CATEGORIES:
        raise UserError(f"--suite bfcl:{path}: no category '{category}' (known: {', '.join(DEFAULT_CATEGORIES)})")
    return where, [category]


def turn_texts(entry: dict[str, Any]) -> tuple[str, ...]:
    """Each user turn as one message (a turn's several user messages joined by a blank line)."""
    return tuple("\n\n".join(str(m["content"]) for m in turn if m.get("role") == "user") for turn in entry["question"])


def entry_task(where: str, entry: dict[str, Any], ground_truth: list[list[str]]) -> Task:
    turns = turn_texts(entry)
    category = category_of(entry["id"])
    return Task(
        id=entry["id"], category=category, prompt="", expected={"turns": len(turns)},
        scorer=ScorerSpec(BfclChecker.name, (("package", where), ("entry", entry["id"]))),
        servers=(ServerRef(SERVER, source=f"{NAME}:{where}#{entry['id']}"),),
        max_turns=STEP_LIMIT * len(turns), user=UserScenario("", turns=turns),
        metadata={"benchmark": NAME, "involved_classes": list(entry["involved_classes"]),
                  "ground_truth_calls": sum(len(t) for t in ground_truth)})


class _MethodTool(Tool):
    """An MCP tool calling one method of a run's API instance by keyword, its result as BFCL returns it (an
    exception as BFCL's executor reports it: the text the model is shown, not a tool error)."""

    _method: Any = PrivateAttr()

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        try:
            value = await asyncio.to_thread(self._method, **arguments)
            text = bfcl_result(value)
        except Exception as exc:  # the benchmark's own behaviour: the error is the call's result
            text = f"Error during execution: {exc}"
        return ToolResult(content=text)


def entry_server(bfcl: Bfcl, entry: dict[str, Any]) -> FastMCP:
    """A new server with the entry's functions over fresh instances of its classes."""
    long_context = "long_context" in category_of(entry["id"])
    server = FastMCP(f"{NAME}-{entry['id']}")
    for class_name in entry["involved_classes"]:
        instance = bfcl.instance(class_name, entry.get("initial_config") or {}, long_context)
        for doc in bfcl.func_docs(class_name):
            parameters = json_schema(doc.get("parameters") or {"type": "dict", "properties": {}}, bfcl.type_map)
            tool = _MethodTool(name=doc["name"], description=doc.get("description") or doc["name"],
                               parameters=parameters)
            tool._method = getattr(instance, doc["name"])
            server.add_tool(tool)
    return server


class BfclMultiTurn:
    """The BFCL multi-turn adapter (harness.tasks.registry.BenchmarkAdapter)."""

    name = NAME
    description = ("BFCL v4 multi-turn: several user turns over stateful APIs, scored by BFCL's own checker "
                   "(--suite bfcl:installed#multi_turn_base; base, miss_param, long_context)")
    scorer = BfclChecker.name
    protocol = PROTOCOL  # `--scaffold bfcl`

    def load(self, path: Path) -> Suite:
        where, categories = parse_spec(path)
        bfcl = load_bfcl(where)
        tasks = []
        for category in categories:
            answers = bfcl.answers(category)
            tasks += [entry_task(where, entry, answers.get(entry["id"], [])) for entry in bfcl.entries(category)]
        selector = f"#{categories[0]}" if len(categories) == 1 else ""
        return Suite(name=NAME, description=f"BFCL v4 {', '.join(categories)} from {bfcl.root}", tasks=tuple(tasks),
                     path=bfcl.root, spec=f"{NAME}:{where}{selector}")

    def build_server(self, path: Path, server: str) -> FastMCP:
        where, _, entry_id = str(path).partition("#")
        bfcl = load_bfcl(where)
        return entry_server(bfcl, bfcl.entry(entry_id))
