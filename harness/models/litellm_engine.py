"""Any LiteLLM model string (OpenAI, Anthropic, vLLM, Ollama, an OpenAI-compatible api_base) as an engine."""

from __future__ import annotations

import functools
import threading
from typing import Any

from dspy.lm15 import Request, Response, ToolCallPart, Usage

from harness.models.messages import (
    parse_arguments,
    reply_response,
    request_messages,
    request_reply_shape,
    request_tool_choice,
    request_tools,
)


def litellm_module() -> Any:
    """litellm, told not to print help banners on stdout (errors reach the row and the CLI)."""
    import litellm

    litellm.suppress_debug_info = True
    return litellm


# Sent as the API key to an --api-base server when no key is configured for the model's provider: local
# OpenAI-compatible servers (vLLM, llama.cpp's server, LM Studio) need none, but the OpenAI client refuses to
# send a request without one. vLLM's own examples use this value.
PLACEHOLDER_API_KEY = "EMPTY"


def configured_api_key(model: str) -> bool:
    """Whether LiteLLM would find a key for the model's provider by itself (its environment variable, a key set on
    the litellm module): such a key is always the one sent."""
    litellm = litellm_module()
    if litellm.api_key or litellm.openai_key:
        return True
    try:
        _, _, dynamic_key, _ = litellm.get_llm_provider(model)
    except Exception:
        dynamic_key = None
    return bool(dynamic_key) or bool(litellm.validate_environment(model=model)["keys_in_environment"])


def api_key_for(model: str, api_base: str | None) -> str | None:
    """The key to pass explicitly: the placeholder for an --api-base server when no key is configured, else none
    (LiteLLM then uses the configured key, or reports the missing one)."""
    return PLACEHOLDER_API_KEY if api_base and not configured_api_key(model) else None


def supports_parallel_tool_calls(model: str, api_base: str | None) -> bool:
    """Whether LiteLLM lists `parallel_tool_calls` among the provider's parameters for `model`: LiteLLM refuses a
    parameter a provider does not take (UnsupportedParamsError) unless told to drop every such parameter, so the
    option goes only where it is taken."""
    module = litellm_module()
    try:
        _, provider, _, _ = module.get_llm_provider(model, api_base=api_base)
        supported = module.get_supported_openai_params(model=model, custom_llm_provider=provider)
    except Exception:
        return False
    return "parallel_tool_calls" in (supported or ())


@functools.cache
def litellm_context_window(model: str) -> int | None:
    """The model's input window in tokens from LiteLLM's bundled model table (`max_input_tokens`; never a download);
    None for a model the table does not know or gives no input window for."""
    from harness.env import configure_environment

    configure_environment()
    try:
        window = litellm_module().get_model_info(model).get("max_input_tokens")
    except Exception:  # litellm raises its own errors (ModelNotMappedError, ...) for a model it does not list
        return None
    return int(window) if isinstance(window, int) and window > 0 else None


def litellm_routes(model: str, api_base: str | None) -> bool:
    try:
        litellm_module().get_llm_provider(model, api_base=api_base)
    except Exception:
        return False
    return True


class LiteLLMEngine:
    """Any LiteLLM model string, called directly (no dspy-side cache or retries: the harness owns those).
    Tools go out as the provider's native `tools`; harness-only options (a grammar) never leave the harness. A
    native tool-calling reply shape says whether several calls are wanted: sent as `parallel_tool_calls` (true or
    false) to every provider LiteLLM knows to take it."""

    def __init__(self, model: str, api_base: str | None = None, timeout_s: float = 300.0):
        self.model, self.api_base, self.timeout_s = model, api_base, timeout_s
        self._endpoint_lock = threading.Lock()
        self._endpoint: tuple[dict[str, Any] | None] | None = None  # asked once: (identity,)

    def endpoint_identity(self) -> dict[str, Any] | None:
        """What the response cache keys this engine's endpoint by: for an --api-base server its URL and its
        `/v1/models` entry for the model (where it gives one), asked once per engine, i.e. once per run
        configuration, never per call; None for a provider's model string, which names its model by itself."""
        if self.api_base is None:
            return None
        with self._endpoint_lock:  # runs call from several threads; the server is asked once
            if self._endpoint is None:
                from harness.models.served_model import served_model_entry

                served = served_model_entry(self.api_base, self.model, api_key_for(self.model, self.api_base))
                self._endpoint = ({"api_base": self.api_base.rstrip("/"), "served": served},)
            return self._endpoint[0]

    @functools.cached_property
    def _parallel_option(self) -> bool:
        return supports_parallel_tool_calls(self.model, self.api_base)

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
            shape = request_reply_shape(request)
            if shape is not None and shape.protocol == "tool_call" and self._parallel_option:
                kwargs["parallel_tool_calls"] = shape.parallel  # the scaffold's parallel_tool_calls, said to the API
        choice = request_tool_choice(request)
        if choice is not None:
            kwargs["tool_choice"] = choice
        if self.api_base:
            kwargs["api_base"] = self.api_base
        key = api_key_for(self.model, self.api_base)
        if key is not None:
            kwargs["api_key"] = key
        return kwargs

    def complete(self, request: Request) -> Response:
        result = litellm_module().completion(model=self.model, messages=request_messages(request),
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
