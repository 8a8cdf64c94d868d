"""One run's side of the endpoints: its context, the event loop its servers' clients and its LM live on, its steps so
far, the tools its model last asked for, and what the chat endpoint refused it for.

Requests arrive on the loopback server's own thread and event loop; everything a request does to the run (an LM
call, a tool call) is run on the run's loop (`on_run_loop`), where its session's MCP clients are connected, and
tracked, so the run can cancel what is still out when it ends."""

from __future__ import annotations

import asyncio
import concurrent.futures
import secrets
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from harness.agents.context import SampleContext
from harness.trace.errors import RunError

RUN_ENDED = "the run has ended (its answer, a limit, an interrupt): this request was cut short"
MODEL_PREFIX = "harness/"  # harness.models.engine.make_lm names a run's LM "harness/<the model string>"


class Refused(Exception):
    """A request the endpoint answers with an error: its HTTP status, the OpenAI error type, and the message. `error`:
    the run error it stands for, when the refusal is one the built-in loop would end the run with."""

    def __init__(self, status: int, kind: str, message: str, error: RunError | None = None):
        super().__init__(message)
        self.status, self.kind, self.message, self.error = status, kind, message, error


@dataclass
class RunEndpoint:
    """The endpoints' state for one run. `steps`: completions made so far (each one step of the run); `requested`:
    the tools the model's last reply called natively (an MCP call of one of them is the model's own call, any other
    is made by the agent's code: `in_code`); `error`: the first refusal that ends a run in the built-in loop."""

    ctx: SampleContext
    lm: Any  # the run's dspy.LM (the context's, else the caller's dspy settings')
    loop: asyncio.AbstractEventLoop
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    steps: int = 0
    requested: frozenset[str] = frozenset()
    code_tools: frozenset[str] = frozenset()  # the agent's tools whose calls run the model's code
    error: RunError | None = None
    mcp_app: Any = None  # the run's MCP endpoint (an ASGI app: harness.agents.endpoints.mcp_proxy)
    pending: set[concurrent.futures.Future] = field(default_factory=set)
    _turn_lock: asyncio.Lock | None = None

    @property
    def model(self) -> str:
        """The run's model string, as its LM names it."""
        name = str(getattr(self.lm, "model", "") or "")
        return name.removeprefix(MODEL_PREFIX)

    def turn_lock(self) -> asyncio.Lock:
        """One completion at a time per run (on the run's loop): each is one step, and its LM call is the one the
        transcript records next."""
        if self._turn_lock is None:
            self._turn_lock = asyncio.Lock()
        return self._turn_lock

    def refuse(self, refusal: Refused) -> Refused:
        """Keep the first refusal that ends a run (the run's error), and return it to raise."""
        if self.error is None and refusal.error is not None:
            self.error = refusal.error
        return refusal

    async def on_run_loop(self, work: Coroutine[Any, Any, Any]) -> Any:
        """Await `work` on the run's event loop from the server's; a request cancelled (its client went away)
        cancels it there too, and work cancelled because the run ended is the request's `run_ended` refusal."""
        future = asyncio.run_coroutine_threadsafe(work, self.loop)
        self.pending.add(future)
        future.add_done_callback(self.pending.discard)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            request = asyncio.current_task()
            if future.cancelled() and not (request is not None and request.cancelling()):  # the run ended, not this
                raise Refused(409, "run_ended", RUN_ENDED) from None  # request: an answer, not a server traceback
            raise

    def cancel_pending(self) -> None:
        """Cancel what the run's requests still have out (the run ended): a tool call is recorded as cut short."""
        for future in list(self.pending):
            future.cancel()
