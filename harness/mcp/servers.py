"""Servers a task runs against: fixtures built fresh for every run (in memory), or external servers from
mcp_servers.json (over stdio). A ServerSession is one run's connected servers, their tools, a log of
every tool call, and the files the external servers' stderr went to."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastmcp import Client, FastMCP

import fixtures_servers
from harness.defaults import DEFAULT_TOOL_TIMEOUT_S
from harness.env import cache_dir
from harness.errors import UserError
from harness.mcp.external import connect_external, default_external_servers
from harness.mcp.provenance import SeenValues, guessed_id_error
from harness.mcp.toolbox import Toolbox, ToolSpec
from harness.tasks.task import ServerRef, Suite

logging.getLogger("fastmcp").setLevel(logging.CRITICAL)  # tool errors are recorded, not printed (see env.py)

RESULT_PREVIEW_CHARS = 2000  # how much of each tool result a trajectory keeps

ServerFactory = Callable[[ServerRef], FastMCP]
_REGISTERED: dict[str, tuple[ServerFactory, str]] = {}


def register_server(name: str, factory: ServerFactory, description: str = "") -> None:
    """Make an in-process FastMCP server available to suites by name (built fresh for every run by
    `factory(ref)`): a Python-API alternative to a fixture package or mcp_servers.json."""
    if name in fixtures_servers.FIXTURES:
        raise ValueError(f"'{name}' is a fixture server name")
    _REGISTERED[name] = (factory, description)


def unregister_server(name: str) -> None:
    _REGISTERED.pop(name, None)


@dataclass(frozen=True)
class ServerInfo:
    name: str
    kind: str  # "fixture" | "external"
    description: str


@dataclass(frozen=True)
class ToolCall:
    """One MCP tool call as the trajectory records it."""

    tool: str
    arguments: dict[str, Any]
    is_error: bool
    result_preview: str
    result_chars: int
    duration_s: float
    started_s: float  # seconds since the session opened


class ToolCallFailed(Exception):
    """A tool returned an error; the message is the server's, as an agent would see it."""


def list_servers() -> list[ServerInfo]:
    infos = [ServerInfo(name, "fixture", fixtures_servers.load(name).DESCRIPTION)
             for name in fixtures_servers.available()]
    infos += [ServerInfo(name, "registered", description) for name, (_, description) in _REGISTERED.items()]
    for name, server in default_external_servers().items():
        infos.append(ServerInfo(name, "external", " ".join([server.command, *server.args])))
    return infos


def check_servers(suite: Suite) -> None:
    """Every server the suite names exists (a fixture or an external server)."""
    known = {info.name for info in list_servers()}
    for task in suite.tasks:
        for ref in task.servers:
            if ref.name not in known:
                raise UserError(f"{suite.path}: task '{task.id}': field 'servers': unknown server '{ref.name}' "
                                f"(known: {', '.join(sorted(known))}; add external ones in mcp_servers.json)")


def build_fixture(ref: ServerRef) -> FastMCP:
    if ref.name in _REGISTERED:
        return _REGISTERED[ref.name][0](ref)
    module = fixtures_servers.load(ref.name)
    size = ref.size if ref.size is not None else module.DEFAULT_SIZE
    return module.build(seed=ref.seed, size=size)


def tool_spec(server: str, tool: Any) -> ToolSpec:
    return ToolSpec(server=server, name=tool.name, description=tool.description or "",
                    input_schema=dict(tool.input_schema or {}), output_schema=tool.output_schema)


def _result_value(result: Any, spec: ToolSpec) -> tuple[Any, str]:
    """(parsed value for code, text for an LM) from an MCP CallToolResult."""
    text = "\n".join(getattr(part, "text", "") for part in result.content if getattr(part, "text", None))
    structured = result.structured_content
    if structured is not None:
        value = structured.get("result") if spec.result_wrapped and isinstance(structured, dict) else structured
        return value, text or json.dumps(value)
    try:
        return json.loads(text), text
    except (json.JSONDecodeError, TypeError):
        return text, text


@dataclass
class ServerSession:
    """One run's connected servers: call tools by name, read the end state, and the call log."""

    clients: dict[str, Client]
    fixtures: dict[str, FastMCP]
    toolbox: Toolbox
    calls: list[ToolCall] = field(default_factory=list)
    opened_at: float = field(default_factory=time.perf_counter)
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
    stderr_logs: dict[str, str] = field(default_factory=dict)  # external server -> file its stderr went to
    seen: SeenValues | None = None  # with it, a call with an id the run has not seen is refused (guard_ids)
    ids_refused: int = 0  # calls the id guard refused

    def guard_ids(self, task_text: str) -> None:
        """From now on, refuse a call whose id argument appears neither in `task_text` nor in an earlier result
        (harness.mcp.provenance): what a run under a scaffold with `id_guard` does; a session serving another
        agent (harness serve) does not."""
        self.seen = SeenValues(task_text)

    @property
    def tool_time_s(self) -> float:
        return sum(c.duration_s for c in self.calls)

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[Any, str]:
        """Call a tool; returns (value, text). A tool error raises ToolCallFailed with the server's message."""
        try:
            spec = self.toolbox.get(name)
        except KeyError:
            raise ToolCallFailed(f"unknown tool '{name}' (available: {', '.join(self.toolbox.names)})") from None
        arguments = {k: v for k, v in arguments.items() if v is not None}
        started = time.perf_counter()
        if self.seen is not None and (guess := self.seen.unseen_id(arguments)):
            text = guessed_id_error(spec.name, *guess)
            self.ids_refused += 1
            self._log(spec.name, arguments, True, text, started)
            raise ToolCallFailed(text)
        try:
            result = await asyncio.wait_for(
                self.clients[spec.server].call_tool(spec.name, arguments, raise_on_error=False), self.tool_timeout_s)
            value, text = _result_value(result, spec)
            is_error = bool(result.is_error)
        except TimeoutError:
            value, text, is_error = None, f"tool '{spec.name}' did not answer within {self.tool_timeout_s:g} s", True
        except Exception as exc:  # a transport failure or a crashed server is an error the agent sees
            value, text, is_error = None, f"{type(exc).__name__}: {exc}", True
        self._log(spec.name, arguments, is_error, text, started)
        if is_error:
            raise ToolCallFailed(text or f"tool '{spec.name}' failed")
        if self.seen is not None:
            self.seen.see(text)
        return value, text

    def _log(self, tool: str, arguments: dict[str, Any], is_error: bool, text: str, started: float) -> None:
        self.calls.append(ToolCall(tool=tool, arguments=arguments, is_error=is_error,
                                   result_preview=text[:RESULT_PREVIEW_CHARS], result_chars=len(text),
                                   duration_s=time.perf_counter() - started, started_s=started - self.opened_at))

    def end_state(self) -> dict[str, dict[str, Any]]:
        states = {}
        for name, server in self.fixtures.items():
            snapshot = fixtures_servers.end_state(server)
            if snapshot is not None:
                states[name] = snapshot
        return states


def new_stderr_log(server: str, log_dir: Path | None = None) -> Path:
    """A new file for one run's stderr of an external server: in `log_dir`, else <harness cache>/server-logs.
    A file, not the terminal: npm warnings and banners would be printed over the progress bar."""
    folder = log_dir if log_dir is not None else cache_dir() / "server-logs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{time.strftime('%Y%m%dT%H%M%S')}-{server}-{uuid.uuid4().hex[:8]}.log"


@asynccontextmanager
async def open_servers(refs: tuple[ServerRef, ...], tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S,
                       log_dir: Path | None = None) -> AsyncIterator[ServerSession]:
    """Build fresh fixtures (or start external servers, their stderr to a new file in `log_dir` each) for one
    run and connect a client to each."""
    external = None
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        fixtures: dict[str, FastMCP] = {}
        stderr_logs: dict[str, str] = {}
        for ref in refs:
            if ref.name in fixtures_servers.available() or ref.name in _REGISTERED:
                fixtures[ref.name] = build_fixture(ref)
                clients[ref.name] = await stack.enter_async_context(Client(fixtures[ref.name]))
            else:
                external = default_external_servers() if external is None else external
                if ref.name not in external:
                    raise UserError(f"unknown server '{ref.name}' (not a fixture, not in mcp_servers.json)")
                log = new_stderr_log(ref.name, log_dir)
                stderr_logs[ref.name] = str(log)
                clients[ref.name] = await stack.enter_async_context(connect_external(external[ref.name], log))
        specs: list[ToolSpec] = []
        for name, client in clients.items():
            specs.extend(tool_spec(name, tool) for tool in await client.list_tools())
        yield ServerSession(clients=clients, fixtures=fixtures, toolbox=Toolbox(tuple(specs)),
                            tool_timeout_s=tool_timeout_s, stderr_logs=stderr_logs)
