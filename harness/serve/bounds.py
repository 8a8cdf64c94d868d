"""What one `execute_code` request may ask of the server: the code's size, a timeout up to the server's own cap, and a
place among the executions running (the pool's size) or waiting (a bounded queue). A request past a bound is refused
with an MCP tool error that names the bound and the option that sets it, and nothing of it runs: a client on the
other end of a socket must not be able to hold the host's CPU or memory longer than its owner allowed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastmcp.exceptions import ToolError

DEFAULT_MAX_CODE_CHARS = 100_000
DEFAULT_QUEUE = 8
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class ExecutorBounds:
    """The server's bounds. `running`: executions at once (the sandbox pool's size); `queued`: requests that may
    wait for one of them, beyond which a request is refused; `default_timeout_s`: the limit of an execution that
    names none; `max_timeout_s`: the most an execution may ask for."""

    max_code_chars: int = DEFAULT_MAX_CODE_CHARS
    running: int = 1
    queued: int = DEFAULT_QUEUE
    default_timeout_s: float = DEFAULT_TIMEOUT_S
    max_timeout_s: float = DEFAULT_MAX_TIMEOUT_S

    def __post_init__(self) -> None:
        if self.default_timeout_s > self.max_timeout_s:
            raise ValueError(f"the default timeout ({self.default_timeout_s:g} s) is over the cap "
                             f"({self.max_timeout_s:g} s)")

    def check_request(self, code: str, timeout_s: float) -> None:
        """Refuse code over the size bound and a timeout that is not more than 0 or is over the cap."""
        if len(code) > self.max_code_chars:
            raise ToolError(f"refused: the code is {len(code):,} characters; this server runs at most "
                            f"{self.max_code_chars:,} (harness serve --max-code-chars)")
        if not timeout_s > 0:
            raise ToolError(f"refused: timeout {timeout_s:g} s; give more than 0 s (or leave it out: "
                            f"{self.default_timeout_s:g} s)")
        if timeout_s > self.max_timeout_s:
            raise ToolError(f"refused: timeout {timeout_s:g} s is over this server's cap of {self.max_timeout_s:g} s "
                            f"(harness serve --max-timeout); ask for at most {self.max_timeout_s:g} s")


class Admission:
    """Executions running at once (`running`) and requests waiting for them (up to `queued`); one more is refused
    at once rather than left waiting without end. Used on one event loop (the server's)."""

    def __init__(self, bounds: ExecutorBounds):
        self.bounds = bounds
        self._slots = asyncio.Semaphore(bounds.running)
        self.admitted = 0  # running + waiting

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the running slots for the block, waiting in the queue when all are taken."""
        running, queued = self.bounds.running, self.bounds.queued
        if self.admitted >= running + queued:
            raise ToolError(f"refused: the server is busy ({running} execution{'s' * (running != 1)} running and "
                            f"{queued} waiting, its bounds: harness serve --pool-size, --queue); try again when "
                            f"one has finished")
        self.admitted += 1
        try:
            async with self._slots:
                yield
        finally:
            self.admitted -= 1
