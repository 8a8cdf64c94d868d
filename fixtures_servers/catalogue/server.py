"""The catalogue: N tools over eight domain servers, the same for the same seed and size. Every size holds the eight
tools the tasks use (`core`); the rest are distractors: first the near misses (tools of the tasks' own resources
whose names are close to theirs: `list_ticket_history`, `get_account_stats`, ...) and one tool of each other server,
then the other generated tools in an order shuffled by the seed. So a catalogue of size N is the one of size N-1 plus one tool, and the tasks'
answers are the same at every size: the size counts tools, never records."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastmcp import FastMCP
from fastmcp.server.dependencies import get_context
from fastmcp.tools import Tool
from mcp.types import ToolAnnotations

from fixtures_servers import register_state, state_of
from fixtures_servers._common import copies
from fixtures_servers.catalogue import data
from fixtures_servers.catalogue.core import CORE, CORE_COLLECTIONS
from fixtures_servers.catalogue.domains import CORE_RESOURCES, DOMAINS, RESOURCES
from fixtures_servers.catalogue.generic import check_arguments, run_operation, seed_records
from fixtures_servers.catalogue.operations import OPERATIONS, ToolDef, generated_tool

DESCRIPTION = "A catalogue of N tools (the size) over eight domain servers of a company's internal tools"
DEFAULT_SIZE = 64
SERVERS = DOMAINS
NEAR_MISS_OPERATIONS = ("history", "stats", "export", "add_comment", "archive")
BY_SINGULAR = {r.singular: r for r in RESOURCES}
_CORE_HANDLERS = {tool.name: handler for tool, handler in CORE}


def _near_misses(seed: int) -> list[ToolDef]:
    return [generated_tool(BY_SINGULAR[s], op, seed) for op in NEAR_MISS_OPERATIONS for s in CORE_RESOURCES]


def _others(seed: int) -> list[ToolDef]:
    tools = [generated_tool(r, op, seed) for r in RESOURCES if r.singular not in CORE_RESOURCES for op in OPERATIONS]
    random.Random(seed * 104729 + 7).shuffle(tools)
    return tools


MIN_SIZE = len(CORE)
MAX_SIZE = MIN_SIZE + len(NEAR_MISS_OPERATIONS) * len(CORE_RESOURCES) + \
    (len(RESOURCES) - len(CORE_RESOURCES)) * len(OPERATIONS)


def check_size(size: int) -> None:
    """A catalogue has between MIN_SIZE tools (the tasks' own) and MAX_SIZE (every tool it can generate)."""
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"a catalogue has {MIN_SIZE} to {MAX_SIZE} tools, not {size}")


@functools.lru_cache(maxsize=16)
def catalogue(seed: int, size: int) -> tuple[ToolDef, ...]:
    """The `size` tools of the catalogue for `seed`, in the order they join it."""
    check_size(size)
    near, others = _near_misses(seed), _others(seed)
    # one tool of each other server early, so that from 16 tools on no server of the catalogue is empty
    firsts = [next(t for t in others if t.server == server) for server in SERVERS if server not in CORE_COLLECTIONS]
    rest = [t for t in others if t not in firsts]
    tools = [tool for tool, _ in CORE] + near[:len(CORE_RESOURCES)] + firsts + near[len(CORE_RESOURCES):] + rest
    return tuple(tools[:size])


@dataclass
class CatalogueState:
    """One domain server's records: its core collection from the start, a generated resource's records from the
    first call that touches them."""

    server: str
    seed: int
    records: dict[str, list[dict]]

    def collection(self, name: str) -> list[dict]:
        if name not in self.records:
            resource = next(r for r in RESOURCES if r.plural == name)
            self.records[name] = seed_records(resource, self.seed)
        return self.records[name]

    def snapshot(self) -> dict[str, Any]:
        return {name: [{k: (list(v) if isinstance(v, list) else v) for k, v in r.items()} for r in records]
                for name, records in self.records.items()}


class CatalogueTool(Tool):
    """A tool whose schema is given as JSON (as a server generated from an API description has it): arguments are
    checked against it, then `handler(state of the server called, arguments)` answers."""

    handler: Callable[[CatalogueState, dict], dict]

    async def run(self, arguments: dict[str, Any]):
        check_arguments(self.parameters, arguments)
        return self.convert_result(self.handler(state_of(get_context()), arguments))


def _generic_handler(tool: ToolDef) -> Callable[[CatalogueState, dict], dict]:
    resource = BY_SINGULAR[tool.resource]
    collection = CORE_COLLECTIONS.get(resource.domain) if resource.singular in CORE_RESOURCES else resource.plural
    return lambda state, args: run_operation(state.collection(collection), resource, tool.operation, args)


@functools.lru_cache(maxsize=4096)
def _tool(tool: ToolDef) -> Tool:
    handler = _CORE_HANDLERS[tool.name] if tool.operation == "core" else _generic_handler(tool)
    return CatalogueTool(name=tool.name, description=tool.description, parameters=tool.schema,
                         output_schema={"type": "object"}, handler=handler,
                         annotations=ToolAnnotations(readOnlyHint=tool.read_only))


def tools_of(server: str, seed: int, size: int) -> tuple[ToolDef, ...]:
    """The catalogue's tools that live on `server`."""
    return tuple(tool for tool in catalogue(seed, size) if tool.server == server)


def build(seed: int = 0, size: int = DEFAULT_SIZE, server: str = "cat_people") -> FastMCP:
    """A fresh `server` of the catalogue of `size` tools: its share of the tools and its own records."""
    if server not in SERVERS:
        raise ValueError(f"'{server}' is not a catalogue server (known: {', '.join(SERVERS)})")
    generated = data.generate(seed)
    core = CORE_COLLECTIONS.get(server)
    state = CatalogueState(server, seed, {core: copies(generated[core])} if core else {})
    if core == "tickets":  # a ticket's tags and comments are lists: copied too, so no build shares them
        state.records[core] = [{**t, "tags": list(t["tags"]), "comments": []} for t in generated[core]]
    if core == "accounts":
        state.records[core] = [{**a, "billing_contact": dict(a["billing_contact"])} for a in generated[core]]
    mcp = FastMCP(server, instructions=SERVERS[server])
    for tool in tools_of(server, seed, size):
        mcp.add_tool(_tool(tool))
    return register_state(mcp, state)
