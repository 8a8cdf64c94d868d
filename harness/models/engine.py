"""The engine stack every model runs through, so each LM call is retried, timed, counted and logged the
same way whatever answers it; and the providers that hand each run its dspy.LM."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
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
    setup_seconds,
    used_grammar,
    with_cache_scope,
)
from harness.models.retry import RetryPolicy, is_permanent, is_transient
from harness.models.tokens import TOKENIZER, prompt_tokens
from harness.tasks.task import Task
from harness.trace.calls import LMCall, LMRole
from harness.trace.errors import ContextOverflow, RunLimitReached
from harness.trace.transcript import Transcript

DEFAULT_MAX_TOKENS = 1024


@dataclass(frozen=True)
class CallRecorder:
    """Where one run's LM calls of one role go, handed to the run's LM explicitly (harness.models.engine.make_lm):
    the run's transcript (each call stamped with the step in progress), whose call it is, the run's spending check
    (run before and after each call with every LM call of the run so far; raises RunLimitReached to end the run),
    the response cache's scope (the run's epoch: independent samples are cached apart) and run (the run id whose
    stored answers a resume reuses: harness.models.cache), and the model's context window in tokens (the run's
    Limits.context_window; None: unknown, no prompt is refused for its size)."""

    transcript: Transcript
    role: LMRole = "agent"
    check: Callable[[Sequence[LMCall]], None] | None = None
    cache_scope: str = ""
    context_window: int | None = None
    cache_run: str = ""

    def as_role(self, role: LMRole) -> CallRecorder:
        """The same run's recorder for another role's calls (a simulated user's, a judge's)."""
        return replace(self, role=role)

    def checked(self) -> None:
        """Run the spending check; a limit passed fails the LM call (LMCallFailed from it)."""
        if self.check is None:
            return
        try:
            self.check(self.transcript.lm_calls)
        except RunLimitReached as exc:
            raise LMCallFailed(f"{type(exc).__name__}: {exc}") from exc

    def fits(self, request: Request) -> None:
        """Refuse a prompt over the context window before it is sent, counted as the row counts prompts (its
        messages' text and the tool definitions sent natively): a failed LM call whose cause is ContextOverflow."""
        if self.context_window is None:
            return
        tokens = prompt_tokens(request_messages(request), request_tools(request))
        if tokens > self.context_window:
            overflow = ContextOverflow(tokens, self.context_window, f"{TOKENIZER}, tool definitions included")
            raise LMCallFailed(f"{type(overflow).__name__}: {overflow}") from overflow


class LMCallFailed(Exception):
    """An LM call that failed after the engine's retries (the provider's error is its cause); `permanent`: it
    will fail every call the same way (auth, an unknown model)."""

    def __init__(self, message: str, permanent: bool = False):
        super().__init__(message)
        self.permanent = permanent


class RecordingEngine:
    """Retries transient failures with backoff, times each call and records it into the run's transcript (its
    `recorder`; None: an LM used outside any run, whose calls are not recorded)."""

    def __init__(self, inner: Any, retry: RetryPolicy = RetryPolicy(), recorder: CallRecorder | None = None):
        self.inner, self.retry, self.recorder = inner, retry, recorder

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
        recorder = self.recorder
        if recorder is not None:
            recorder.checked()  # a run already past its limit makes no further call (e.g. an adapter's retry)
            recorder.fits(request)  # a prompt over the window is never sent
            request = with_cache_scope(request, recorder.cache_scope, recorder.cache_run)
        started = time.perf_counter()
        # the call is known to the run from now on: a run that ends while it is out records it as cut short
        begun = recorder.transcript.lm_started(recorder.role, request_messages(request)) if recorder else None
        try:
            response, retries = self._complete_with_retries(request)
        except Exception as exc:
            if recorder is not None and begun is not None:
                recorder.transcript.lm_failed(begun)
            raise LMCallFailed(f"{type(exc).__name__}: {exc}", is_permanent(exc)) from exc
        latency = time.perf_counter() - started
        if recorder is not None:
            usage = response.usage or Usage()
            # start-up an engine reports (a prompt prefix evaluated for the first time and kept) is the prefix every
            # run shares only in a role's first call; a later call's new prefix (tools a search loaded) is its own
            first = not any(call.role == recorder.role for call in recorder.transcript.lm_calls)
            recorder.transcript.lm_call(LMCall(
                messages=request_messages(request), output=response_text(response),
                prompt_tokens=usage.input_tokens, completion_tokens=usage.output_tokens,
                reused_prompt_tokens=usage.cache_read_tokens or 0, latency_s=latency,
                cached=was_cache_hit(response), retries=retries, grammar=used_grammar(response),
                tool_calls=response_tool_calls(response), tools=tuple(request_tools(request)),
                reuse_source=reuse_source(response), role=recorder.role,
                setup_s=setup_seconds(response) if first else 0.0,
            ), started=begun)
            recorder.checked()  # the call that passed the limit is recorded, then the run ends
        return response

    def stream(self, request: Request):
        raise NotImplementedError("the harness does not stream")

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close:
            close()


class AsyncEngine:
    """The async side of a sync engine: runs it in a worker thread."""

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
    """Hands each run its dspy.LM, recording into that run's transcript through `recorder`; `token_source` says
    where the row's token counts come from. `sample` is the run's context (harness.agents.context), opaque here:
    a provider that replays the run's own references reads it."""

    name: str
    token_source: str

    async def lm_for(self, task: Task, arm: str, recorder: CallRecorder | None = None,
                     sample: Any = None) -> dspy.LM: ...


def make_lm(name: str, engine: Any, max_tokens: int = DEFAULT_MAX_TOKENS, temperature: float = 0.0,
            retry: RetryPolicy = RetryPolicy(), recorder: CallRecorder | None = None) -> dspy.LM:
    """A dspy.LM over the harness's engine stack, recording into `recorder`'s transcript; dspy's own cache and
    retries are off (the harness owns both, so each is counted in the row)."""
    recording = RecordingEngine(engine, retry, recorder)
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

    async def lm_for(self, task: Task, arm: str, recorder: CallRecorder | None = None,
                     sample: Any = None) -> dspy.LM:
        return make_lm(self.name, self.engine, max_tokens=self.max_tokens, recorder=recorder)
