"""The engine stack every model runs through, so each LM call is retried, timed, counted and logged the
same way whatever answers it; and the providers that hand each run its dspy.LM."""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import dspy
from dspy.lm15 import Request, Response, Usage

from harness.models.cache import was_cache_hit
from harness.models.messages import (
    request_messages,
    request_tools,
    response_text,
    response_tool_calls,
    reuse_source,
    used_grammar,
)
from harness.models.retry import RetryPolicy, is_permanent, is_transient
from harness.tasks.task import Task
from harness.trace.calls import LMCall
from harness.trace.cursor import current_role, current_step
from harness.trace.errors import RunLimitReached

DEFAULT_MAX_TOKENS = 1024


@dataclass
class LMCallLog:
    calls: list[LMCall] = field(default_factory=list)
    # Run before and after each call with the calls so far; raises to end the run (a per-run spending limit).
    check: Callable[[list[LMCall]], None] | None = None


_CURRENT_LOG: contextvars.ContextVar[LMCallLog | None] = contextvars.ContextVar("harness_lm_log", default=None)


@contextmanager
def recording_lm_calls(check: Callable[[list[LMCall]], None] | None = None) -> Iterator[LMCallLog]:
    """Collect the LM calls made in this context (an asyncio task or thread inherits it)."""
    log = LMCallLog(check=check)
    token = _CURRENT_LOG.set(log)
    try:
        yield log
    finally:
        _CURRENT_LOG.reset(token)




class LMCallFailed(Exception):
    """An LM call that failed after the engine's retries (the provider's error is its cause); `permanent`: it
    will fail every call the same way (auth, an unknown model)."""

    def __init__(self, message: str, permanent: bool = False):
        super().__init__(message)
        self.permanent = permanent


def _checked(log: LMCallLog) -> None:
    """Run the log's per-run limit check; a limit passed fails the LM call (LMCallFailed from it)."""
    assert log.check is not None
    try:
        log.check(log.calls)
    except RunLimitReached as exc:
        raise LMCallFailed(f"{type(exc).__name__}: {exc}") from exc


class RecordingEngine:
    """Retries transient failures with backoff, times each call and appends it to the run's LMCallLog."""

    def __init__(self, inner: Any, retry: RetryPolicy = RetryPolicy()):
        self.inner, self.retry = inner, retry

    def _complete_with_retries(self, request: Request) -> tuple[Response, int]:
        for attempt in range(self.retry.max_retries + 1):
            try:
                return self.inner.complete(request), attempt
            except Exception as exc:
                if attempt == self.retry.max_retries or not is_transient(exc):
                    raise
                time.sleep(self.retry.delay(attempt))
        raise AssertionError("unreachable")

    def complete(self, request: Request) -> Response:
        """One recorded call. What fails the call itself (the model's engine after the retries, a spending limit)
        is raised as LMCallFailed from it, so the agent can tell a failed LM call from a bug in the harness's own
        handling of the request or the response, which propagates as it is."""
        log = _CURRENT_LOG.get()
        if log is not None and log.check is not None:
            _checked(log)  # a run already past its limit makes no further call (e.g. an adapter's retry)
        started = time.perf_counter()
        try:
            response, retries = self._complete_with_retries(request)
        except Exception as exc:
            raise LMCallFailed(f"{type(exc).__name__}: {exc}", is_permanent(exc)) from exc
        latency = time.perf_counter() - started
        if log is not None:
            usage = response.usage or Usage()
            log.calls.append(LMCall(
                messages=request_messages(request), output=response_text(response),
                prompt_tokens=usage.input_tokens, completion_tokens=usage.output_tokens,
                reused_prompt_tokens=usage.cache_read_tokens or 0, latency_s=latency,
                cached=was_cache_hit(response), retries=retries, grammar=used_grammar(response),
                tool_calls=response_tool_calls(response), tools=tuple(request_tools(request)),
                reuse_source=reuse_source(response), step=current_step(), role=current_role(),
            ))
            if log.check is not None:
                _checked(log)  # the call that passed the limit is recorded, then the run ends
        return response

    def stream(self, request: Request):
        raise NotImplementedError("the harness does not stream")

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close:
            close()


class AsyncEngine:
    """The async side of a sync engine: runs it in a worker thread (contextvars travel with it)."""

    def __init__(self, sync: Any):
        self.sync = sync

    async def complete(self, request: Request) -> Response:
        return await asyncio.to_thread(self.sync.complete, request)

    async def stream(self, request: Request):  # pragma: no cover - never streamed
        raise NotImplementedError("the harness does not stream")
        yield

    async def aclose(self) -> None:
        self.sync.close()


class ModelProvider(Protocol):
    """Hands each run its dspy.LM; `token_source` says where the row's token counts come from."""

    name: str
    token_source: str

    async def lm_for(self, task: Task, arm: str) -> dspy.LM: ...


def make_lm(name: str, engine: Any, max_tokens: int = DEFAULT_MAX_TOKENS, temperature: float = 0.0,
            retry: RetryPolicy = RetryPolicy()) -> dspy.LM:
    """A dspy.LM over the harness's engine stack; dspy's own cache and retries are off (the harness owns
    both, so each is counted in the row)."""
    recording = RecordingEngine(engine, retry)
    return dspy.LM(f"harness/{name}", engine=recording, async_engine=AsyncEngine(recording), cache=False,
                   temperature=temperature, max_tokens=max_tokens, num_retries=0)


@dataclass
class EngineProvider:
    """A real model: one engine for every run (an in-process model's engine serializes the calls, or decodes them
    together in a batch)."""

    name: str
    engine: Any
    token_source: str = "provider"
    max_tokens: int = DEFAULT_MAX_TOKENS

    async def lm_for(self, task: Task, arm: str) -> dspy.LM:
        return make_lm(self.name, self.engine, max_tokens=self.max_tokens)
