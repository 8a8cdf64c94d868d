"""Closing a run's servers. A server with no call abandoned at its timeout closes as it always did. One with such a
call (still running on the server) gets ABANDONED_CALL_GRACE_S to end by itself and is then closed hard, so that a
call the run gave up on does not hold the run open: an external server's process is killed; an in-process server's
tasks are cancelled and the run stops waiting for them (a tool running in a thread cannot be stopped from Python:
it finishes on its own while the suite goes on). Each close is recorded, and a kill is written to the server's
stderr log."""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fastmcp import Client

from harness.mcp.stdio import REAP_WAIT_S, StdioServer

ABANDONED_CALL_GRACE_S = 1.0  # how long a server with an abandoned call may take to close before it is closed hard

CloseKind = Literal["closed", "terminated", "killed", "left running"]

_LEFT: set[asyncio.Future[None]] = set()  # closes a run stopped waiting for, referenced until they end


@dataclass(frozen=True)
class ServerClose:
    """How one server of a run was closed: `closed` (it ended by itself), `terminated` / `killed` (an external
    server's process was sent SIGTERM / SIGKILL), `left running` (an in-process server whose tasks did not end within
    the grace: the run no longer waits for them); `abandoned`: whether a call on it had been abandoned at its
    timeout."""

    server: str
    how: CloseKind
    seconds: float
    abandoned: bool


async def close_server(name: str, stack: AsyncExitStack, client: Client | None, abandoned: bool,
                       stderr_log: str = "") -> ServerClose:
    """Close one server's connection (its exit stack), hard after the grace when it has an abandoned call."""
    started = time.perf_counter()
    transport = getattr(client, "transport", None)
    stdio = transport if isinstance(transport, StdioServer) else None
    how: CloseKind = "closed"
    if not abandoned:
        await stack.aclose()
    else:
        if stdio is not None:
            stdio.kill_after_s = ABANDONED_CALL_GRACE_S
        # a killed process is seen gone within REAP_WAIT_S; an in-process server gets the grace alone
        limit = ABANDONED_CALL_GRACE_S + (REAP_WAIT_S if stdio is not None else 0.0)
        if not await _within(asyncio.ensure_future(stack.aclose()), limit):
            how = "left running"
    if stdio is not None and stdio.ended in ("terminated", "killed"):
        how = stdio.ended
    close = ServerClose(name, how, time.perf_counter() - started, abandoned)
    if stderr_log and how != "closed":
        _note(Path(stderr_log), close)
    return close


async def _within(closing: asyncio.Future[None], limit_s: float) -> bool:
    """Whether `closing` ended within `limit_s` (its error raised); if not, or if the caller is cancelled, it goes
    on by itself, referenced until it ends."""
    try:
        done, _ = await asyncio.wait({closing}, timeout=limit_s)
    except asyncio.CancelledError:
        _leave(closing)
        raise
    if done:
        closing.result()
        return True
    _leave(closing)
    return False


def _leave(closing: asyncio.Future[None]) -> None:
    _LEFT.add(closing)
    closing.add_done_callback(_forget)


def _forget(closing: asyncio.Future[None]) -> None:
    _LEFT.discard(closing)
    if not closing.cancelled():
        closing.exception()  # retrieved: a close nobody waits for has no one to tell


def _note(log: Path, close: ServerClose) -> None:
    """One line in the server's stderr log saying how the harness ended it, where its user looks for why."""
    why = ("a call abandoned at its tool timeout was still running" if close.abandoned
           else "it did not exit after its stdin closed")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    try:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"[harness {stamp}] server '{close.server}' {close.how} {close.seconds:.1f} s after the run "
                         f"closed it: {why}\n")
    except OSError:
        pass
