"""The stdio connection to an external server, held by the harness rather than by the MCP SDK's stdio client, for
the two things that client keeps out of reach. The server's process: a run that ends with one of its calls still
running (abandoned at the tool timeout) kills the server after a short grace instead of waiting for the call. And
its stdout: a line that is not an MCP message (a banner, a log line) is named once, and the connection is closed,
instead of the line being dropped with a traceback on the terminal while the answer it spoiled never comes. The
protocol itself (the session, the messages) is the SDK's."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager, suppress
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from anyio.streams.text import TextReceiveStream
from fastmcp import Client
from fastmcp.client.transports import ClientTransport
from fastmcp.client.transports.base import TransportOptions
from mcp.shared.message import SessionMessage

QUOTED_CHARS = 200  # how much of a non-MCP line its error quotes
EXIT_WAIT_S = 2.0  # how long a server may take to exit by itself once its stdin is closed, before SIGTERM
TERM_WAIT_S = 2.0  # how long after SIGTERM before SIGKILL
REAP_WAIT_S = 2.0  # how long to wait for a killed process to be seen gone
_POLL_S = 0.01
_KILL = getattr(signal, "SIGKILL", signal.SIGTERM)  # Windows has no SIGKILL; its SIGTERM ends a process at once

Ending = Literal["exited", "terminated", "killed"]


class NonMCPOutput(Exception):
    """A server wrote a line on stdout that is not an MCP message; the message names the server and the line."""


def non_mcp_message(server: str, line: str) -> str:
    """One line naming the server, what it wrote (cut to QUOTED_CHARS) and the fix."""
    text = line.strip()
    quoted = text if len(text) <= QUOTED_CHARS else text[:QUOTED_CHARS] + "..."
    return (f"server '{server}' wrote non-MCP output on stdout: {quoted!r} (MCP over stdio needs stdout for "
            "protocol messages only; send logs to stderr)")


def stdout_fault(client: Client | None) -> str | None:
    """The non-MCP output message of an external server's connection, if its stdout had such a line."""
    transport = getattr(client, "transport", None)
    return transport.non_mcp if isinstance(transport, StdioServer) else None


class StdioServer(ClientTransport):
    """A new process of a server per connection, speaking MCP over its stdin and stdout. `non_mcp`: the message
    naming the first stdout line that was not an MCP message (None: none so far); that line closes the
    connection, so every request waiting for an answer fails at once with that message rather than at its
    timeout. `kill_after_s`: when set, the server is killed that long after its stdin closed if it has not exited
    (a server with a call still running); otherwise it gets EXIT_WAIT_S, then SIGTERM, then SIGKILL. `ended`: how
    its process ended."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str] | None, stderr_log: Path | None = None):
        self.name, self.argv, self.env, self.stderr_log = name, argv, env, stderr_log
        self.non_mcp: str | None = None
        self.kill_after_s: float | None = None
        self.ended: Ending | None = None

    @asynccontextmanager
    async def connect_session(self, *, transport_options: TransportOptions | None = None,
                              **session_kwargs: Any) -> AsyncIterator[Any]:
        options = transport_options or TransportOptions()
        with ExitStack() as files:
            stderr = files.enter_context(self.stderr_log.open("a")) if self.stderr_log is not None else None
            # its own session (process group): ending the server ends whatever it started (npx -> node)
            process = await anyio.open_process(self.argv, env=self.env, stderr=stderr, start_new_session=True)
            to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
            to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)
            async with anyio.create_task_group() as pipes:
                pipes.start_soon(self._read, process, to_session)
                pipes.start_soon(self._write, process, from_session, to_session)
                try:
                    async with options.session_class(from_server, to_server, **session_kwargs) as session:
                        yield session
                finally:
                    from_server.close()  # a reader blocked on handing over a message drains stdout instead
                    to_server.close()
                    with anyio.CancelScope(shield=True):
                        await self._end(process)
                    pipes.cancel_scope.cancel()

    async def _read(self, process: Process, to_session: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        """Hand each stdout line to the session as a message; the first line that is not one closes the connection.
        Reads to the end either way, so a server writing more never blocks on a full pipe."""
        assert process.stdout is not None
        forwarding, buffer = True, ""
        async with to_session:
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for chunk in TextReceiveStream(process.stdout, errors="replace"):
                    *lines, buffer = (buffer + chunk).split("\n")
                    for line in lines:
                        if not forwarding or not line.strip():
                            continue
                        try:
                            message = SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
                        except ValueError:
                            self.non_mcp, forwarding = non_mcp_message(self.name, line), False
                            to_session.close()
                            continue
                        try:
                            await to_session.send(message)
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            forwarding = False  # the session has gone: only draining is left

    @staticmethod
    async def _write(process: Process, from_session: MemoryObjectReceiveStream[SessionMessage],
                     to_session: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        assert process.stdin is not None
        try:
            async with from_session:
                async for item in from_session:
                    line = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(line.encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            to_session.close()  # the server stopped reading: a request waiting for its answer fails now

    async def _end(self, process: Process) -> None:
        """Close stdin (the MCP way to ask a stdio server to exit), then end the process group if it lingers."""
        assert process.stdin is not None and process.stdout is not None
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
        if await _exited(process, self.kill_after_s if self.kill_after_s is not None else EXIT_WAIT_S):
            self.ended = "exited"
        else:
            if self.kill_after_s is None:  # a server with no call running gets the polite signal first
                _signal_group(process, signal.SIGTERM)
                self.ended = "terminated"
            if self.kill_after_s is not None or not await _exited(process, TERM_WAIT_S):
                _signal_group(process, _KILL)
                self.ended = "killed"
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdout.aclose()
        if await _exited(process, REAP_WAIT_S):
            await process.aclose()


async def _exited(process: Process, within_s: float) -> bool:
    """Whether the process has exited within `within_s`, by its return code (process.wait() would also wait for
    every holder of its pipes, a child it started included)."""
    with anyio.move_on_after(within_s):
        while process.returncode is None:
            await anyio.sleep(_POLL_S)
    return process.returncode is not None


def _signal_group(process: Process, sig: int) -> None:
    """Send `sig` to the server's process group (its own session: the server and what it started); on Windows,
    where there are no groups, to the process."""
    with suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(process.pid, sig)
        else:
            process.send_signal(sig)
