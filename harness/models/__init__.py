"""Model strings -> dspy.LM. Every model runs through an engine stack the harness owns, so each LM call is
timed, counted and logged the same way whatever answers it:

    RecordingEngine -> [CachingEngine] -> LiteLLMEngine | LlamaEngine | ScriptedEngine

- "local" / "local:PATH.gguf": the embedded llama.cpp model, in process;
- "scripted:NAME": deterministic test doubles (harness.models.scripted);
- anything else: a LiteLLM model string ("openai/gpt-4o-mini", "anthropic/...", "ollama/...",
  "openai/<alias>" with --api-base for vLLM or any OpenAI-compatible server).

Every engine speaks native tool calls: agents call `lm.acall(messages=<OpenAI chat dicts>, tools=<OpenAI function
definitions>, stop=[...], **reply_shape_option(shape))` and get back the reply's text and its tool calls. LiteLLM
sends tools to the provider's API and ignores the reply shape; the embedded model gets tools through its own chat
template and decodes under a grammar it builds from the shape (harness.models.llama). Only that engine imports
llama_cpp, so every other model runs without the `local` extra.
"""

from __future__ import annotations

from typing import Any

from harness.errors import UserError
from harness.models.cache import CachingEngine
from harness.models.engine import DEFAULT_MAX_TOKENS, EngineProvider, ModelProvider
from harness.models.litellm_engine import LiteLLMEngine, litellm_routes
from harness.models.scripted import SCRIPTED_MODELS, ReferencePolicies, scripted_provider


def _with_cache(engine: Any, cache: bool) -> Any:
    if not cache:
        return engine
    return CachingEngine(engine)


def check_model(model: str, api_base: str | None = None) -> None:
    """Reject a model string that cannot name a model, before anything slow starts: offline, no call made
    (LiteLLM's own routing table decides whether it knows the provider)."""
    if model.startswith("scripted:"):
        if model not in SCRIPTED_MODELS:
            raise UserError(f"unknown scripted model '{model}' (known: {', '.join(SCRIPTED_MODELS)})")
        return
    if model == "local" or model.startswith("local:"):
        return
    if not litellm_routes(model, api_base):
        raise UserError(f"unknown model '{model}': LiteLLM knows no provider for it; use 'local', "
                        "'local:PATH.gguf', 'scripted:reference' or a LiteLLM model string such as "
                        "'openai/gpt-4o-mini' (or 'openai/<name>' with --api-base)")


def resolve_model(model: str, *, api_base: str | None = None, cache: bool = True,
                  max_tokens: int = DEFAULT_MAX_TOKENS,
                  reference_policies: ReferencePolicies | None = None) -> ModelProvider:
    """The provider for a model string; an unknown or unusable model is a UserError. `scripted:reference` replays
    the references through `reference_policies` (harness.run.reference)."""
    check_model(model, api_base=api_base)
    if model.startswith("scripted:"):
        return scripted_provider(model, reference_policies)
    if model == "local" or model.startswith("local:"):
        from harness.models.llama import local_engine

        return EngineProvider(model, _with_cache(local_engine(model), cache), max_tokens=max_tokens)
    return EngineProvider(model, _with_cache(LiteLLMEngine(model, api_base=api_base), cache), max_tokens=max_tokens)
