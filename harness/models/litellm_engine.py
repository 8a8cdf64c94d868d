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
