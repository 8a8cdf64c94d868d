"""BFCL v4's multi-turn categories as tasks: `--suite bfcl:installed#multi_turn_base` (the `bfcl-eval` package in
the harness's environment) or `bfcl:PATH#CATEGORY` (a gorilla checkout); without `#CATEGORY`, all four (base,
miss_func, miss_param, long_context). Task ids are the entries' own (`multi_turn_base_12`), so `--tasks` picks them.

Each entry is a conversation with a scripted user (UserScenario.turns): its user turns are given one after another,
each reply of the agent's without a tool call ends its turn (as BFCL's own inference loop reads a reply without
function calls), and the reply to the last turn ends the run. Its tools are one MCP server, `bfcl`, built for every
run over a fresh instance of each involved class loaded with the entry's initial config (long_context's flag passed
on); the tools are the classes' function docs, BFCL's type names mapped to JSON Schema by its own table, and each
call's result is returned as BFCL's executor returns it. The `bfcl` scorer (harness.adapters.bfcl_scoring) hands the
calls each turn executed to BFCL's own `multi_turn_checker`. `--scaffold bfcl` is BFCL's inference rules (PROTOCOL).

miss_func: the functions an entry holds back (`missed_function`: turn -> names) are left out of its server's tool
list until that turn, whose user message (empty in the data) is BFCL's own (`DEFAULT_USER_PROMPT_FOR_ADDITIONAL_
FUNCTION_FC`, as its inference loop gives it); then the server offers them and the session re-reads its tool list
(harness.mcp.held_tools), and each arm re-reads the tools or ends the run as `stale_tools`.

A task's reference is BFCL's ground truth, per turn (UserScenario.references: each turn's calls, then the message
`done`), which `scripted:reference` and `harness validate` give turn by turn (harness.agents.turn_reference).
"""

from __future__ import annotations

import ast
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
from harness.mcp.held_tools import hold_back
from harness.tasks.registry import PublishedProtocol
from harness.tasks.task import ScorerSpec, ServerRef, Suite, Task, UserScenario

NAME = "bfcl"
SERVER = "bfcl"
DEFAULT_CATEGORIES = CATEGORIES
TURN_DONE = "done"  # the message a reference ends each turn with
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
    if category not in CATEGORIES:
        raise UserError(f"--suite bfcl:{path}: no category '{category}' (known: {', '.join(DEFAULT_CATEGORIES)})")
    return where, [category]


def held_back(entry: dict[str, Any]) -> dict[int, tuple[str, ...]]:
    """The functions a miss_func entry holds back, by the (0-based) user turn that offers them."""
    return {int(turn): tuple(names) for turn, names in (entry.get("missed_function") or {}).items()}


def turn_texts(entry: dict[str, Any], offered_message: str) -> tuple[str, ...]:
    """Each user turn as one message (a turn's several user messages joined by a blank line); a turn that offers
    held-back functions is BFCL's own message saying so (`offered_message`)."""
    offers = held_back(entry)
    return tuple(offered_message if n in offers else
                 "\n\n".join(str(m["content"]) for m in turn if m.get("role") == "user")
                 for n, turn in enumerate(entry["question"]))


def ground_truth_call(text: str, param_names: dict[str, list[str]]) -> tuple[str, dict[str, Any]]:
    """A ground-truth call string (`mv('a', destination='b')`) as (name, keyword arguments): positional values take
    the function doc's parameter names in order."""
    node = ast.parse(text.strip(), mode="eval").body
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        raise UserError(f"BFCL ground truth: {text!r} is not a function call")
    name = node.func.id
    arguments = {param_names.get(name, [])[n]: ast.literal_eval(value) for n, value in enumerate(node.args)}
    arguments.update({k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg})
    return name, arguments


def turn_reference(calls: list[str], param_names: dict[str, list[str]]) -> str:
    """One turn's ground truth as a reference solution: its calls in order, then the message that ends the turn."""
    lines = [f"{name}(**{arguments!r})" for name, arguments in (ground_truth_call(c, param_names) for c in calls)]
    return "\n".join([*lines, f"print({TURN_DONE!r})"])


def entry_task(where: str, entry: dict[str, Any], ground_truth: list[list[str]], offered_message: str,
               param_names: dict[str, list[str]]) -> Task:
    turns = turn_texts(entry, offered_message)
    references = tuple(turn_reference(calls, param_names) for calls in ground_truth)
    category = category_of(entry["id"])
    return Task(
        id=entry["id"], category=category, prompt="", expected={"turns": len(turns)},
        scorer=ScorerSpec(BfclChecker.name, (("package", where), ("entry", entry["id"]))),
        servers=(ServerRef(SERVER, source=f"{NAME}:{where}#{entry['id']}"),),
        max_turns=STEP_LIMIT * len(turns), reference="\n".join(references),
        user=UserScenario("", turns=turns, references=references),
        metadata={"benchmark": NAME, "involved_classes": list(entry["involved_classes"]),
                  "ground_truth_calls": sum(len(t) for t in ground_truth),
                  **({"held_back": {str(t): list(n) for t, n in held_back(entry).items()}} if held_back(entry) else {})})


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
    """A new server with the entry's functions over fresh instances of its classes (a miss_func entry's held-back
    functions disabled until their turn: harness.mcp.held_tools)."""
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
    return hold_back(server, held_back(entry))


class BfclMultiTurn:
    """The BFCL multi-turn adapter (harness.tasks.registry.BenchmarkAdapter)."""

    name = NAME
    description = ("BFCL v4 multi-turn: several user turns over stateful APIs, scored by BFCL's own checker "
                   "(--suite bfcl:installed#multi_turn_base; base, miss_func, miss_param, long_context)")
    scorer = BfclChecker.name
    protocol = PROTOCOL  # `--scaffold bfcl`

    def load(self, path: Path) -> Suite:
        where, categories = parse_spec(path)
        bfcl = load_bfcl(where)
        tasks = []
        for category in categories:
            answers = bfcl.answers(category)
            tasks += [entry_task(where, entry, answers.get(entry["id"], []), bfcl.offered_message, bfcl.param_names)
                      for entry in bfcl.entries(category)]
        selector = f"#{categories[0]}" if len(categories) == 1 else ""
        return Suite(name=NAME, description=f"BFCL v4 {', '.join(categories)} from {bfcl.root}", tasks=tuple(tasks),
                     path=bfcl.root, spec=f"{NAME}:{where}{selector}")

    def build_server(self, path: Path, server: str) -> FastMCP:
        where, _, entry_id = str(path).partition("#")
        bfcl = load_bfcl(where)
        return entry_server(bfcl, bfcl.entry(entry_id))
