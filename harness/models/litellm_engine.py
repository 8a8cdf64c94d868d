"""Any LiteLLM model string (OpenAI, Anthropic, vLLM, Ollama, an OpenAI-compatible api_base) as an engine."""

from __future__ import annotations

from typing import Any

from dspy.lm15 import Request, Response, ToolCallPart, Usage

from harness.models.messages import (
    parse_arguments,
    reply_response,
    request_messages,
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


def litellm_routes(model: str, api_base: str | None) -> bool:
    try:
        litellm_module().get_llm_provider(model, api_base=api_base)
    except Exception:
        return False
    return True


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
