"""Model strings -> dspy.LM. Every model runs through an engine stack the harness owns, so each LM call is
timed, counted and logged the same way whatever answers it:

    RecordingEngine -> [CachingEngine] -> LiteLLMEngine | LlamaEngine | ScriptedEngine

- "local" / "local:PATH.gguf": the embedded llama.cpp model, in process;
- "scripted:NAME": deterministic test doubles (harness.models.scripted);
- anything else: a LiteLLM model string ("openai/gpt-4o-mini", "anthropic/...", "ollama/...",
  "openai/<alias>" with --api-base for vLLM or any OpenAI-compatible server).

Every engine speaks native tool calls: agents call `lm.acall(messages=<OpenAI chat dicts>, tools=<OpenAI function
definitions>, stop=[...], **grammar_option(gbnf))` and get back the reply's text and its tool calls. LiteLLM sends
tools to the provider's API; the embedded model gets them through its own chat template and decodes under a
grammar (harness.models.llama).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import random
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import dspy
from dspy.lm15 import FunctionTool, Message, Request, Response, TextPart, ToolCallPart, Usage

from harness.errors import UserError
from harness.tasks.suite import Task

DEFAULT_MAX_TOKENS = 1024
GRAMMAR_KEY = "harness_grammar"


# ---- requests and responses as OpenAI chat dicts ----

def _texts(parts: tuple[Any, ...]) -> str:
    return "\n".join(p.text for p in parts if isinstance(p, TextPart))


def _message_dicts(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        rows = []
        for part in message.parts:
            row = {"role": "tool", "tool_call_id": part.id, "content": _texts(part.content)}
            if part.name is not None:
                row["name"] = part.name
            rows.append(row)
        return rows
    # dspy reads a system message after the first as a developer message; it was sent as system
    row: dict[str, Any] = {"role": "system" if message.role == "developer" else message.role,
                           "content": _texts(message.parts)}
    calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
    if calls:
        row["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.name, "arguments": json.dumps(c.input)}} for c in calls]
    return [row]


def request_messages(request: Request) -> list[dict[str, Any]]:
    """A canonical request as OpenAI chat messages (system first, tool calls and tool results in OpenAI's
    shape), the one form every engine, the cache key and the trajectory read."""
    messages: list[dict[str, Any]] = []
    if request.system is not None:
        system = request.system if isinstance(request.system, str) else "".join(p.text for p in request.system)
        messages.append({"role": "system", "content": system})
    for message in request.messages:
        messages.extend(_message_dicts(message))
    return messages


def request_tools(request: Request) -> list[dict[str, Any]]:
    """The request's tools as OpenAI function definitions (what LiteLLM and Qwen's chat template take)."""
    tools = []
    for tool in request.tools:
        if not isinstance(tool, FunctionTool):
            raise TypeError(f"harness engines take function tools only, got {type(tool).__name__}")
        function: dict[str, Any] = {"name": tool.name}
        if tool.description is not None:
            function["description"] = tool.description
        function["parameters"] = tool.parameters
        tools.append({"type": "function", "function": function})
    return tools


def request_tool_choice(request: Request) -> str | dict[str, Any] | None:
    """Config.tool_choice in OpenAI's spelling (None: the provider's default)."""
    choice = request.config.tool_choice
    if choice is None:
        return None
    if choice.mode == "required" and len(choice.allowed) == 1:
        return {"type": "function", "function": {"name": choice.allowed[0]}}
    return choice.mode


def grammar_option(grammar: str) -> dict[str, Any]:
    """The LM-call keyword argument that hands a GBNF grammar to the local engine:
    `await lm.acall(messages=..., **grammar_option(gbnf))`. dspy refuses keywords OpenAI's chat API does not
    know, and `metadata` is one it carries into Config.extensions; engines never forward it to a provider."""
    return {"metadata": {GRAMMAR_KEY: grammar}}


def request_grammar(request: Request) -> str | None:
    """The grammar a caller attached with `grammar_option`, if any."""
    metadata = (request.config.extensions or {}).get("metadata")
    grammar = metadata.get(GRAMMAR_KEY) if isinstance(metadata, dict) else None
    return grammar if isinstance(grammar, str) and grammar else None


def reply_response(text: str, model: str, usage: Usage, tool_calls: tuple[ToolCallPart, ...] = (),
                   finish_reason: str = "stop", grammar: bool = False) -> Response:
    """An assistant reply: its text, then its tool calls; `grammar` marks a reply decoded under a grammar."""
    parts = ([TextPart(text)] if text or not tool_calls else []) + list(tool_calls)
    return Response(id=None, model=model, message=Message.assistant(parts),
                    finish_reason="tool_call" if tool_calls else finish_reason, usage=usage,
                    provider_data={GRAMMAR_KEY: True} if grammar else None)


def text_response(text: str, model: str, usage: Usage) -> Response:
    return reply_response(text, model, usage)


def response_text(response: Response) -> str:
    """The reply's text without its tool calls ("" when it has none)."""
    return _texts(response.message.parts)


def response_tool_calls(response: Response) -> tuple[dict[str, Any], ...]:
    """The reply's tool calls as {"name", "arguments"} (what the trajectory records)."""
    return tuple({"name": call.name, "arguments": call.input} for call in response.tool_calls)


def used_grammar(response: Response) -> bool:
    """True if the engine decoded this reply under a grammar (it says so in provider_data)."""
    return bool((response.provider_data or {}).get(GRAMMAR_KEY))


# ---- per-run log of LM calls ----

@dataclass(frozen=True)
class LMCall:
    """One LM call as the run saw it: `output` is the reply's text, `tool_calls` its native tool calls
    ({"name", "arguments"}), `grammar` whether the engine constrained decoding with a grammar."""

    messages: list[dict[str, Any]]
    output: str
    prompt_tokens: int | None
    completion_tokens: int | None
    reused_prompt_tokens: int
    latency_s: float
    cached: bool
    retries: int = 0
    grammar: bool = False
    tool_calls: tuple[dict[str, Any], ...] = ()
    tools: tuple[dict[str, Any], ...] = ()  # the tool definitions sent with the call (native tool calling)


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


def _was_cached(response: Response) -> bool:
    try:
        from harness.models.cache import was_cache_hit
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
    """Rate limits, timeouts, dropped connections and 5xx answers: worth another try. Not a client that could
    not even be built (litellm reports a missing api key as a 500, but no request was sent)."""
    if any(_is_client_setup_error(error) for error in _causes(exc)):
        return False
    return isinstance(exc, (ConnectionError, TimeoutError)) or any(
        cls.__name__ in TRANSIENT_ERROR_NAMES for cls in type(exc).__mro__)


# Errors that fail every call of a suite the same way (a missing key, an unknown model, a refused request);
# a prompt too long or refused for its content is about that prompt, not the model setup.
PERMANENT_ERROR_NAMES = frozenset({
    "AuthenticationError", "PermissionDeniedError", "NotFoundError", "BadRequestError", "UnsupportedParamsError",
    "LMAuthError", "LMBillingError", "LMUnsupportedModelError", "LMConfigurationError", "LMUnsupportedFeatureError",
    "UserError",  # raised inside an engine (dspy wraps it): e.g. tools offered to a GGUF without a chat template
})
PROMPT_ERROR_NAMES = frozenset({"ContextWindowExceededError", "ContentPolicyViolationError", "ContextLengthError"})
UNREACHABLE_ERRORS = (ConnectionRefusedError, socket.gaierror)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def is_permanent(exc: BaseException) -> bool:
    """True for an LM error that will fail every call the same way: bad credentials, an unknown model or
    provider, a request the provider refuses, an api_base that refuses connections or does not resolve.
    Reads the whole cause chain (dspy wraps engine errors)."""
    chain = list(_causes(exc))
    names = {cls.__name__ for error in chain for cls in type(error).__mro__}
    if names & PROMPT_ERROR_NAMES:
        return False
    return (bool(names & PERMANENT_ERROR_NAMES) or any(isinstance(error, UNREACHABLE_ERRORS) for error in chain)
            or any(_is_client_setup_error(error) for error in chain))


def _is_client_setup_error(error: BaseException) -> bool:
    """The OpenAI client raises its bare base error (no HTTP status) when it cannot even be built, e.g. with no
    api key; litellm reports that as a 500. Its subclasses are the API's own answers."""
    return type(error).__name__ == "OpenAIError" and type(error).__module__.split(".")[0] == "openai"


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
        log = _CURRENT_LOG.get()
        if log is not None and log.check is not None:
            log.check(log.calls)  # a run already past its limit makes no further call (e.g. an adapter's retry)
        started = time.perf_counter()
        response, retries = self._complete_with_retries(request)
        latency = time.perf_counter() - started
        if log is not None:
            usage = response.usage or Usage()
            log.calls.append(LMCall(
                messages=request_messages(request), output=response_text(response),
                prompt_tokens=usage.input_tokens, completion_tokens=usage.output_tokens,
                reused_prompt_tokens=usage.cache_read_tokens or 0, latency_s=latency,
                cached=_was_cached(response), retries=retries, grammar=used_grammar(response),
                tool_calls=response_tool_calls(response), tools=tuple(request_tools(request)),
            ))
            if log.check is not None:
                log.check(log.calls)  # the call that passed the limit is recorded, then the run ends
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


def parse_arguments(raw: Any) -> dict[str, Any] | None:
    """Tool-call arguments as a JSON object, or None when they are not one."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


class LiteLLMEngine:
    """Any LiteLLM model string, called directly (no dspy-side cache or retries: the harness owns those).
    Tools go out as the provider's native `tools`; harness-only options (a grammar) never leave the harness."""

    def __init__(self, model: str, api_base: str | None = None, timeout_s: float = 300.0):
        self.model, self.api_base, self.timeout_s = model, api_base, timeout_s

    def _options(self, request: Request) -> dict[str, Any]:
        config = request.config
        kwargs: dict[str, Any] = {"temperature": config.temperature if config.temperature is not None else 0.0}
        if config.max_tokens is not None:
            kwargs["max_tokens"] = config.max_tokens
        if config.seed is not None:
            kwargs["seed"] = config.seed
        if config.stop:
            kwargs["stop"] = list(config.stop)
        if request.tools:
            kwargs["tools"] = request_tools(request)
        choice = request_tool_choice(request)
        if choice is not None:
            kwargs["tool_choice"] = choice
        if self.api_base:
            kwargs["api_base"] = self.api_base
        return kwargs

    def complete(self, request: Request) -> Response:
        result = _litellm().completion(model=self.model, messages=request_messages(request),
                                       timeout=self.timeout_s, num_retries=0, **self._options(request))
        choice = result.choices[0]
        texts, calls = [choice.message.content] if choice.message.content else [], []
        for call in choice.message.tool_calls or []:
            name, arguments = call.function.name, parse_arguments(call.function.arguments)
            if arguments is None or not name:  # unreadable as a call: the model sees what it wrote
                texts.append(f"{name}({call.function.arguments})")
                continue
            calls.append(ToolCallPart(id=call.id or f"call_{len(calls)}", name=name, input=arguments))
        text = "\n".join(texts)
        usage = getattr(result, "usage", None)
        cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)
        return reply_response(
            text, self.model,
            Usage(input_tokens=getattr(usage, "prompt_tokens", None),
                  output_tokens=getattr(usage, "completion_tokens", None), cache_read_tokens=cached),
            tool_calls=tuple(calls), finish_reason="length" if choice.finish_reason == "length" else "stop")

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
    from harness.models.cache import CachingEngine

    return CachingEngine(engine)


SCRIPTED_MODELS = ("scripted:reference", "scripted:garbage")


def _litellm() -> Any:
    """litellm, told not to print help banners on stdout (errors reach the row and the CLI)."""
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def _litellm_routes(model: str, api_base: str | None) -> bool:
    try:
        _litellm().get_llm_provider(model, api_base=api_base)
    except Exception:
        return False
    return True


def check_model(model: str, api_base: str | None = None) -> None:
    """Reject a model string that cannot name a model, before anything slow starts: offline, no call made
    (LiteLLM's own routing table decides whether it knows the provider)."""
    if model.startswith("scripted:"):
        if model not in SCRIPTED_MODELS:
            raise UserError(f"unknown scripted model '{model}' (known: {', '.join(SCRIPTED_MODELS)})")
        return
    if model == "local" or model.startswith("local:"):
        return
    if not _litellm_routes(model, api_base):
        raise UserError(f"unknown model '{model}': LiteLLM knows no provider for it; use 'local', "
                        "'local:PATH.gguf', 'scripted:reference' or a LiteLLM model string such as "
                        "'openai/gpt-4o-mini' (or 'openai/<name>' with --api-base)")


def resolve_model(model: str, *, api_base: str | None = None, cache: bool = True,
                  max_tokens: int = DEFAULT_MAX_TOKENS, reference_runner: Any = None) -> ModelProvider:
    """The provider for a model string; an unknown or unusable model is a UserError."""
    check_model(model, api_base=api_base)
    if model.startswith("scripted:"):
        from harness.models.scripted import scripted_provider

        return scripted_provider(model, reference_runner=reference_runner)
    if model == "local" or model.startswith("local:"):
        from harness.models.llama import local_engine

        return EngineProvider(model, _with_cache(local_engine(model), cache), max_tokens=max_tokens)
    return EngineProvider(model, _with_cache(LiteLLMEngine(model, api_base=api_base), cache), max_tokens=max_tokens)
