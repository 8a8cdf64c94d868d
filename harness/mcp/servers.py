"""Servers a task runs against, as the registry (harness.mcp.registry) knows them: built fresh in memory for
every run, external servers started over stdio, or remote ones reached at their URL. A ServerSession is one run's connected
servers, their tools, a log of every tool call, and the files the external servers' stderr went to. Opening
them is bounded by a start limit: a server that cannot come up is a ServerStartError naming it, never a hang.
Closing them is bounded too: a call abandoned at its timeout does not hold the run open (harness.mcp.closing)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastmcp import Client, FastMCP

import fixtures_servers
from harness.defaults import (
    DEFAULT_MAX_TOOL_RESULT_MB,
    DEFAULT_SERVER_START_TIMEOUT_S,
    DEFAULT_TOOL_LATENCY_S,
    DEFAULT_TOOL_TIMEOUT_S,
)
from harness.env import cache_dir
from harness.errors import UserError
from harness.mcp.closing import ServerClose, close_server
from harness.mcp.external import RemoteServer, connect_external, connect_remote
from harness.mcp.provenance import SeenValues, guessed_id_error
from harness.mcp.registry import build_in_memory, external_servers, is_in_memory, tool_callers
from harness.mcp.stdio import NonMCPOutput, stdout_fault
from harness.mcp.toolbox import Toolbox, ToolSpec
from harness.tasks.scoring import Probe, ProbeOutcome
from harness.tasks.task import TOOL_CALLERS, ServerRef, ToolCaller
from harness.trace.calls import ProbeCall, ToolCallRecord
from harness.trace.transcript import Transcript

logging.getLogger("fastmcp").setLevel(logging.CRITICAL)  # tool errors are recorded, not printed (see env.py)

RESULT_PREVIEW_CHARS = 2000  # how much of each tool result a trajectory keeps
CUT_SHORT = "the run ended while this call was out: no result"  # a call in flight when its run ended
STDERR_TAIL_LINES = 5  # how much of a server's stderr log a start failure quotes


class ToolCallFailed(Exception):
    """A tool returned an error; the message is the server's, as an agent would see it."""


class ServerStartError(Exception):
    """A server of the run did not come up: its process could not start, exited, or did not finish the MCP
    handshake and tool listing within the start limit. The message is one line: the server, the cause, and
    where its stderr went with its last lines (what usually says why)."""

    def __init__(self, server: str, cause: str, stderr_log: str = ""):
        self.server, self.cause, self.stderr_log = server, cause, stderr_log
        where = ""
        if stderr_log:
            tail = stderr_tail(Path(stderr_log))
            where = f" (stderr: {stderr_log}" + (f"; last lines: {tail}" if tail else ", empty") + ")"
        super().__init__(f"server '{server}' did not start: {cause}{where}")


class NonMCPOutputError(ServerStartError):
    """A server wrote something other than MCP on its stdout while it was being connected: the message is the one
    line naming the server and what it wrote (harness.mcp.stdio.non_mcp_message), not a start-limit story."""

    def __init__(self, server: str, message: str, stderr_log: str = ""):
        super().__init__(server, message, stderr_log)
        self.args = (message,)


def stderr_tail(path: Path, lines: int = STDERR_TAIL_LINES) -> str:
    """The last non-blank lines of a stderr log, joined with " | " so a row's message stays one line."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    kept = [line.strip()[:200] for line in text.splitlines() if line.strip()][-lines:]
    return " | ".join(kept)


def tool_spec(server: str, tool: Any, callers: tuple[ToolCaller, ...] = TOOL_CALLERS) -> ToolSpec:
    annotations = getattr(tool, "annotations", None)
    read_only = annotations.read_only_hint if hasattr(annotations, "read_only_hint") \
        else getattr(annotations, "readOnlyHint", None)  # the old name only where the new one is missing (deprecated)
    return ToolSpec(server=server, name=tool.name, description=tool.description or "",
                    input_schema=dict(tool.input_schema or {}), output_schema=tool.output_schema,
                    read_only=read_only, callers=callers)


def result_megabytes(text: str) -> float:
    """The size of a tool result's text in MB (10^6 bytes of UTF-8), as the run's limit counts it."""
    return len(text.encode("utf-8", "surrogatepass")) / 1e6


def oversized_result(name: str, text: str, limit_mb: float | None) -> str | None:
    """The tool error for a result larger than `limit_mb` (None: no limit), else None. A character is at most four
    bytes, so a text short enough is let through without encoding it."""
    if limit_mb is None or len(text) * 4 <= limit_mb * 1e6:
        return None
    size = result_megabytes(text)
    if size <= limit_mb:
        return None
    return (f"tool '{name}' returned {size:,.1f} MB, over this run's limit of {limit_mb:g} MB per tool result "
            "(--max-tool-result-mb): ask it for less (a filter, a smaller page or range)")


def _result_value(result: Any, spec: ToolSpec) -> tuple[Any, str]:
    """(parsed value for code, text for an LM) from an MCP CallToolResult. The value follows what the server
    declares, as the code-mode stub says (harness.mcp.toolbox): with an output schema, the structured content;
    without one, the text, parsed when the text is JSON (structured content no schema describes is ignored)."""
    text = "\n".join(getattr(part, "text", "") for part in result.content if getattr(part, "text", None))
    structured = result.structured_content if spec.output_schema else None
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
    # the run's transcript: every call is recorded there as it is made, stamped with the step in progress (from
    # the event loop or a sandbox's thread alike); a session serving no run (harness serve) has its own
    transcript: Transcript = field(default_factory=Transcript)
    opened_at: float = field(default_factory=time.perf_counter)
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
    stderr_logs: dict[str, str] = field(default_factory=dict)  # external server -> file its stderr went to
    log_dir: Path | None = None  # where the run's logs go (an agent's process logs there too: harness.agents.isolation)
    seen: SeenValues | None = None  # with it, a call with an id the run has not seen is refused (guard_ids)
    ids_refused: int = 0  # calls the id guard refused
    max_tool_result_mb: float | None = DEFAULT_MAX_TOOL_RESULT_MB  # a larger result is a tool error; None: no limit
    tool_latency_s: float = DEFAULT_TOOL_LATENCY_S  # added to every call sent to a server, as a remote server's round trip would be
    batches: int = 0  # batches of calls sandbox code awaited together, so far (each call's record names its batch)
    # per external server started per run, its placeholders' values in this run (`{"RUN_DIR": "/tmp/..."}`)
    run_values: dict[str, dict[str, str]] = field(default_factory=dict)
    abandoned_calls: int = 0  # the agent's calls abandoned at the tool timeout (maybe still running on their server)
    abandoned_on: set[str] = field(default_factory=set)  # servers with such a call (or probe): closed hard, after a grace
    closes: list[ServerClose] = field(default_factory=list)  # how each server was closed (after the session ends)
    tools_version: int = 0  # how often the tool list changed mid-run (relist_tools): an arm re-reads it on a change

    async def relist_tools(self, server: str, reason: str = "") -> None:
        """List `server`'s tools again (what a client does on its tools/list_changed) and rebuild the toolbox; a
        changed list bumps `tools_version` and is a `tools_changed` event in the run's transcript."""
        callers = next((s.callers for s in self.toolbox.specs if s.server == server), TOOL_CALLERS)
        listed = tuple(tool_spec(server, tool, callers) for tool in await self.clients[server].list_tools())
        before = {s.name for s in self.toolbox.specs if s.server == server}
        after = {s.name for s in listed}
        if before == after:
            return
        self.toolbox = Toolbox((*(s for s in self.toolbox.specs if s.server != server), *listed))
        self.tools_version += 1
        self.transcript.info_event("tools_changed", {"server": server, "added": sorted(after - before),
                                                     "removed": sorted(before - after), "reason": reason})

    def guard_ids(self, task_text: str) -> None:
        """From now on, refuse a call whose id argument appears neither in `task_text` nor in an earlier result
        (harness.mcp.provenance): what a run under a scaffold with `id_guard` does; a session serving another
        agent (harness serve) does not."""
        self.seen = SeenValues(task_text)

    @property
    def calls(self) -> list[ToolCallRecord]:
        """The agent's tool calls so far, in order (the transcript's)."""
        return list(self.transcript.tool_calls)

    @property
    def probes(self) -> tuple[ProbeCall, ...]:
        """A scorer's read-only calls after the run, so far."""
        return self.transcript.probes

    @property
    def tool_time_s(self) -> float:
        return sum(c.duration_s for c in self.calls)

    def new_batch(self) -> int:
        """The id of a new batch of calls made together (1, 2, ... within this run)."""
        self.batches += 1
        return self.batches

    async def call(self, name: str, arguments: dict[str, Any], *, in_code: bool = False,
                   batch: int | None = None) -> tuple[Any, str]:
        """Call a tool; returns (value, text). A tool error raises ToolCallFailed with the server's message; so
        does a call past the tool timeout, and a result over `max_tool_result_mb` (every arm's calls come here, so
        every arm gets the same error). A call sent to a server first waits `tool_latency_s` (an await, so
        concurrent calls overlap their waits as network round trips do); the wait is part of the call's time and
        counts against its timeout. A call past the timeout is abandoned (it may still run on its server): its
        record says so, and its server is closed hard after a short grace (harness.mcp.closing). `in_code`: the call
        comes from code in a sandbox, not from the model calling the tool itself; `batch`: the id of the calls it
        was made together with (new_batch), if any."""
        try:
            spec = self.toolbox.get(name)
        except KeyError:
            raise ToolCallFailed(f"unknown tool '{name}' (available: {', '.join(self.toolbox.names)})") from None
        arguments = {k: v for k, v in arguments.items() if v is not None}
        started = time.perf_counter()
        if self.seen is not None and (guess := self.seen.unseen_id(arguments)):
            text = guessed_id_error(spec.name, *guess)
            self.ids_refused += 1
            self._log(spec, arguments, True, text, started, in_code, batch)
            raise ToolCallFailed(text)
        abandoned = False
        try:
            result = await asyncio.wait_for(self._round_trip(spec, arguments), self.tool_timeout_s)
            value, text = _result_value(result, spec)
            is_error = bool(result.is_error)
            if not is_error and (too_large := oversized_result(spec.name, text, self.max_tool_result_mb)):
                value, text, is_error = None, too_large, True
        except asyncio.CancelledError:  # the run ended (its time limit, an interrupt) with this call out: it is kept
            self.abandoned_on.add(spec.server)  # as cut short, and may still be running on its server
            self._log(spec, arguments, True, CUT_SHORT, started, in_code, batch)
            raise
        except TimeoutError:
            value, text, is_error = None, f"tool '{spec.name}' did not answer within {self.tool_timeout_s:g} s", True
            abandoned = True
            self.abandoned_calls += 1
            self.abandoned_on.add(spec.server)
        except Exception as exc:  # a transport failure, a crashed server, non-MCP output: an error the agent sees
            text = stdout_fault(self.clients[spec.server]) or f"{type(exc).__name__}: {exc}"
            value, is_error = None, True
        self._log(spec, arguments, is_error, text, started, in_code, batch, abandoned)
        if is_error:
            raise ToolCallFailed(text or f"tool '{spec.name}' failed")
        if self.seen is not None:
            self.seen.see(text)
        return value, text

    async def _round_trip(self, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        """One call on its server, after the run's added latency (none by default)."""
        if self.tool_latency_s > 0:
            await asyncio.sleep(self.tool_latency_s)
        return await self.clients[spec.server].call_tool(spec.name, arguments, raise_on_error=False)

    def _log(self, spec: ToolSpec, arguments: dict[str, Any], is_error: bool, text: str, started: float,
             in_code: bool, batch: int | None = None, abandoned: bool = False) -> None:
        self.transcript.tool_call(ToolCallRecord(
            tool=spec.name, arguments=arguments, is_error=is_error, result_preview=text[:RESULT_PREVIEW_CHARS],
            result_chars=len(text), duration_s=time.perf_counter() - started, started_s=started - self.opened_at,
            server=spec.server, in_code=in_code, batch=batch, abandoned=abandoned))

    async def probe(self, probe: Probe) -> ProbeOutcome:
        """Call a read-only tool for a scorer after the agent ended: logged in `probes`, never in `calls` (it is
        not the agent's call), and not subject to the id guard. A tool its server annotates as changing state
        (readOnlyHint false) is refused: a probe must not change the state it reads. Unannotated tools (the
        fixtures') are the suite author's responsibility."""
        started = time.perf_counter()
        spec = next((s for s in self.toolbox.specs if s.server == probe.server and s.name == probe.tool), None)
        if probe.server not in self.clients or spec is None:
            value, text, is_error = None, f"server '{probe.server}' has no tool '{probe.tool}'", True
        elif spec.writes:
            value, text, is_error = None, f"tool '{probe.tool}' changes state; a probe calls read-only tools", True
        else:
            try:
                result = await asyncio.wait_for(self.clients[probe.server].call_tool(
                    probe.tool, probe.arguments, raise_on_error=False), self.tool_timeout_s)
                (value, text), is_error = _result_value(result, spec), bool(result.is_error)
            except TimeoutError:
                value, text, is_error = None, f"probe '{probe.tool}' did not answer within {self.tool_timeout_s:g} s", True
                self.abandoned_on.add(probe.server)
            except Exception as exc:  # a crashed server: the probe failed, and says why
                text = stdout_fault(self.clients[probe.server]) or f"{type(exc).__name__}: {exc}"
                value, is_error = None, True
        self.transcript.probe(ProbeCall(server=probe.server, tool=probe.tool, arguments=dict(probe.arguments),
                                     is_error=is_error, result_preview=text[:RESULT_PREVIEW_CHARS],
                                     result_chars=len(text), duration_s=time.perf_counter() - started))
        return ProbeOutcome(value, text, is_error)

    async def run_probes(self, probes: tuple[Probe, ...]) -> dict[str, ProbeOutcome]:
        """Each distinct probe once, in order, by Probe.key."""
        outcomes: dict[str, ProbeOutcome] = {}
        for probe in probes:
            if probe.key not in outcomes:
                outcomes[probe.key] = await self.probe(probe)
        return outcomes

    def dump_states(self) -> dict[str, dict[str, Any]]:
        """Each fixture server's whole state now (fixtures_servers.dump_state), for the next task of a session that
        shares server state; servers without one are left out."""
        dumped = {name: fixtures_servers.dump_state(server) for name, server in self.fixtures.items()}
        return {name: state for name, state in dumped.items() if state is not None}

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


def _start_failure(exc: BaseException) -> str:
    """Why a client could not connect, in one line ("Client failed to connect: [Errno 2] ..." for a missing
    command; a bare "Connection closed" means the process exited before it answered)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if text == "Connection closed":
        return "the process exited before answering the MCP handshake"
    return text[:300]


@asynccontextmanager
async def open_servers(refs: tuple[ServerRef, ...], tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S,
                       log_dir: Path | None = None,
                       start_timeout_s: float = DEFAULT_SERVER_START_TIMEOUT_S,
                       max_tool_result_mb: float | None = DEFAULT_MAX_TOOL_RESULT_MB,
                       tool_latency_s: float = DEFAULT_TOOL_LATENCY_S,
                       states: dict[str, dict[str, Any]] | None = None,
                       transcript: Transcript | None = None) -> AsyncIterator[ServerSession]:
    """Build fresh fixtures (or start external servers, their stderr to a new file in `log_dir` each) for one
    run, connect a client to each and list its tools, all within `start_timeout_s`. A server that fails or
    runs past the limit raises ServerStartError (its process ended); an unknown name is a UserError. The
    session's calls are bounded by `tool_timeout_s` and `max_tool_result_mb`, and each waits `tool_latency_s`
    first (probes do not). `states`: fixture server -> the state to start from (fixtures_servers.dump_state of an
    earlier run), for a session that shares server state; the others start fresh. The session records its calls
    into `transcript` (the run's; None: a transcript of its own)."""
    external = None
    callers = tool_callers(refs)
    deadline = asyncio.get_running_loop().time() + start_timeout_s
    clients: dict[str, Client] = {}
    fixtures: dict[str, FastMCP] = {}
    stderr_logs: dict[str, str] = {}
    run_values: dict[str, dict[str, str]] = {}
    specs: list[ToolSpec] = []
    stacks: dict[str, AsyncExitStack] = {}  # each server's connection, closed on its own (closing.close_server)
    session: ServerSession | None = None
    try:
        for ref in refs:
            if is_in_memory(ref):
                fixtures[ref.name] = build_in_memory(ref)
                if states and states.get(ref.name) is not None:
                    fixtures_servers.load_state(fixtures[ref.name], states[ref.name])
                connecting = Client(fixtures[ref.name])
            else:
                external = external_servers() if external is None else external
                if ref.name not in external:
                    raise UserError(f"unknown server '{ref.name}' (not a fixture, not in mcp_servers.json)")
                server = external[ref.name]
                if isinstance(server, RemoteServer):  # no process of ours: no stderr to keep
                    connecting = connect_remote(server)
                else:
                    log = new_stderr_log(ref.name, log_dir)
                    stderr_logs[ref.name] = str(log)
                    run_values[ref.name] = {}
                    connecting = connect_external(server, log, run_values[ref.name])
            stacks[ref.name] = AsyncExitStack()
            try:
                async with asyncio.timeout_at(deadline):
                    clients[ref.name] = await stacks[ref.name].enter_async_context(connecting)
                    specs.extend(tool_spec(ref.name, tool, callers[ref.name])
                                 for tool in await clients[ref.name].list_tools())
            except TimeoutError:
                raise ServerStartError(ref.name, f"no answer to the MCP handshake and tool listing within "
                                       f"{start_timeout_s:g} s", stderr_logs.get(ref.name, "")) from None
            except Exception as exc:  # command not found, exit before initialize, a failing tool listing
                raise _start_error(ref.name, exc, clients.get(ref.name), stderr_logs.get(ref.name, "")) from exc
        session = ServerSession(clients=clients, fixtures=fixtures, toolbox=Toolbox(tuple(specs)),
                                tool_timeout_s=tool_timeout_s, stderr_logs=stderr_logs, log_dir=log_dir,
                                max_tool_result_mb=max_tool_result_mb, tool_latency_s=tool_latency_s,
                                transcript=transcript if transcript is not None else Transcript(),
                                run_values={name: values for name, values in run_values.items() if values})
        yield session
    finally:
        closes = await asyncio.gather(*(
            close_server(name, stack, clients.get(name), session is not None and name in session.abandoned_on,
                         stderr_logs.get(name, "")) for name, stack in stacks.items()))
        if session is not None:
            session.closes.extend(closes)
            for close in closes:  # a server closed hard is part of what happened in the run
                if close.how != "closed":
                    session.transcript.info_event("server_closed", {"server": close.server, "how": close.how,
                                                                    "seconds": round(close.seconds, 3),
                                                                    "abandoned_call": close.abandoned})


def _start_error(server: str, exc: Exception, client: Client | None, stderr_log: str) -> ServerStartError:
    """The start error for a server whose connection or tool listing failed: a line naming its non-MCP output
    when its stdout had some (what spoiled the handshake), else the cause."""
    fault = str(exc) if isinstance(exc, NonMCPOutput) else stdout_fault(client)
    if fault:
        return NonMCPOutputError(server, fault, stderr_log)
    return ServerStartError(server, _start_failure(exc), stderr_log)
