"""Model strings -> dspy.LM. Every model runs through an engine stack the harness owns, so each LM call is
timed, counted and logged the same way whatever answers it:

    RecordingEngine -> [CachingEngine] -> LiteLLMEngine | LlamaEngine | ScriptedEngine

- "local" / "local:PATH.gguf": the embedded llama.cpp model, in process;
- "scripted:NAME": deterministic test doubles (harness.testing);
- anything else: a LiteLLM model string ("openai/gpt-4o-mini", "anthropic/...", "ollama/...",
  "openai/<alias>" with --api-base for vLLM or any OpenAI-compatible server).
"""

from __future__ import annotations

import asyncio
import contextvars
import random
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Protocol

import dspy
from dspy.lm15 import Message, Request, Response, TextPart, Usage

from harness.errors import UserError
from harness.suite import Task

DEFAULT_MAX_TOKENS = 1024


def request_messages(request: Request) -> list[dict[str, str]]:
    """A canonical request as OpenAI-style chat messages (system first)."""
    messages = []
    if request.system is not None:
        system = request.system if isinstance(request.system, str) else "".join(p.text for p in request.system)
        messages.append({"role": "system", "content": system})
    messages.extend({"role": m.role, "content": m.text or ""} for m in request.messages)
    return messages


def text_response(text: str, model: str, usage: Usage) -> Response:
    return Response(id=None, model=model, message=Message.assistant([TextPart(text)]), finish_reason="stop",
                    usage=usage)


def response_text(response: Response) -> str:
    return response.message.text or ""


# ---- per-run log of LM calls ----

@dataclass(frozen=True)
class LMCall:
    messages: list[dict[str, str]]
    output: str
    prompt_tokens: int | None
    completion_tokens: int | None
    reused_prompt_tokens: int
    latency_s: float
    cached: bool
    retries: int = 0


@dataclass
class LMCallLog:
    calls: list[LMCall] = field(default_factory=list)


_CURRENT_LOG: contextvars.ContextVar[LMCallLog | None] = contextvars.ContextVar("harness_lm_log", default=None)


@contextmanager
def recording_lm_calls() -> Iterator[LMCallLog]:
    """Collect the LM calls made in this context (an asyncio task or thread inherits it)."""
    log = LMCallLog()
    token = _CURRENT_LOG.set(log)
    try:
        yield log
    finally:
        _CURRENT_LOG.reset(token)


def _was_cached(response: Response) -> bool:
    try:
        from harness.lm_cache import was_cache_hit
    except ImportError:
        return False
    return was_cache_hit(response)


TRANSIENT_ERROR_NAMES = frozenset({
    "RateLimitError", "Timeout", "APITimeoutError", "APIConnectionError", "ServiceUnavailableError",
    "InternalServerError", "BadGatewayError", "TransientLMError",
})


class TransientLMError(Exception):
    """An LM failure worth retrying (test doubles and engines may raise it directly)."""


def is_transient(exc: BaseException) -> bool:
    """Rate limits, timeouts, dropped connections and 5xx answers: worth another try."""
    return isinstance(exc, (ConnectionError, TimeoutError)) or any(
        cls.__name__ in TRANSIENT_ERROR_NAMES for cls in type(exc).__mro__)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def delay(self, attempt: int) -> float:
        """Exponential backoff with jitter (attempt 0 is the first retry)."""
        return min(self.max_delay_s, self.base_delay_s * 2 ** attempt) * random.uniform(0.5, 1.0)


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
        started = time.perf_counter()
        response, retries = self._complete_with_retries(request)
        latency = time.perf_counter() - started
        log = _CURRENT_LOG.get()
        if log is not None:
            usage = response.usage or Usage()
            log.calls.append(LMCall(
                messages=request_messages(request), output=response_text(response),
                prompt_tokens=usage.input_tokens, completion_tokens=usage.output_tokens,
                reused_prompt_tokens=usage.cache_read_tokens or 0, latency_s=latency,
                cached=_was_cached(response), retries=retries,
            ))
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


class LiteLLMEngine:
    """Any LiteLLM model string, called directly (no dspy-side cache or retries: the harness owns those)."""

    def __init__(self, model: str, api_base: str | None = None, timeout_s: float = 300.0):
        self.model, self.api_base, self.timeout_s = model, api_base, timeout_s

    def complete(self, request: Request) -> Response:
        import litellm

        config = request.config
        kwargs: dict[str, Any] = {"temperature": config.temperature if config.temperature is not None else 0.0}
        if config.max_tokens is not None:
            kwargs["max_tokens"] = config.max_tokens
        if config.seed is not None:
            kwargs["seed"] = config.seed
        if config.stop:
            kwargs["stop"] = list(config.stop)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        result = litellm.completion(model=self.model, messages=request_messages(request), timeout=self.timeout_s,
                                    num_retries=0, **kwargs)
        usage = getattr(result, "usage", None)
        cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)
        return text_response(
            result.choices[0].message.content or "", self.model,
            Usage(input_tokens=getattr(usage, "prompt_tokens", None),
                  output_tokens=getattr(usage, "completion_tokens", None), cache_read_tokens=cached),
        )

    def close(self) -> None:
        pass


# ---- model providers ----

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
    """A real model: one engine for every run (calls to an in-process model are serialized by its engine)."""

    name: str
    engine: Any
    token_source: str = "provider"
    max_tokens: int = DEFAULT_MAX_TOKENS

    async def lm_for(self, task: Task, arm: str) -> dspy.LM:
        return make_lm(self.name, self.engine, max_tokens=self.max_tokens)


def _with_cache(engine: Any, cache: bool) -> Any:
    if not cache:
        return engine
    from harness.lm_cache import CachingEngine

    return CachingEngine(engine)


SCRIPTED_MODELS = ("scripted:reference", "scripted:garbage")


def check_model(model: str) -> None:
    """Reject a model string that cannot name a model, before anything slow starts."""
    if model.startswith("scripted:") and model not in SCRIPTED_MODELS:
        raise UserError(f"unknown scripted model '{model}' (known: {', '.join(SCRIPTED_MODELS)})")
    if not (model.startswith(("scripted:", "local:")) or model == "local" or "/" in model):
        raise UserError(f"unknown model '{model}': use 'local', 'local:PATH.gguf', 'scripted:reference', "
                        "or a LiteLLM model string such as 'openai/gpt-4o-mini' or 'ollama/qwen2.5-coder'")


def resolve_model(model: str, *, api_base: str | None = None, cache: bool = True,
                  max_tokens: int = DEFAULT_MAX_TOKENS, reference_runner: Any = None) -> ModelProvider:
    """The provider for a model string; an unknown or unusable model is a UserError."""
    check_model(model)
    if model.startswith("scripted:"):
        from harness.testing import scripted_provider

        return scripted_provider(model, reference_runner=reference_runner)
    if model == "local" or model.startswith("local:"):
        from harness.local_model import local_engine

        return EngineProvider(model, _with_cache(local_engine(model), cache), max_tokens=max_tokens)
    return EngineProvider(model, _with_cache(LiteLLMEngine(model, api_base=api_base), cache), max_tokens=max_tokens)
