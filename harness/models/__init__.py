"""Model strings -> dspy.LM. Every model runs through an engine stack the harness owns, so each LM call is
timed, counted and logged the same way whatever answers it:

    RecordingEngine -> [CachingEngine] -> LiteLLMEngine | LlamaEngine | ScriptedEngine

Which engine answers a model string is its family's to say (harness.models.families): "local" /
"local:PATH.gguf" the embedded llama.cpp model in process, "scripted:NAME" deterministic test doubles, anything
else a LiteLLM model string ("openai/gpt-4o-mini", "anthropic/...", "ollama/...", "openai/<alias>" with
--api-base for vLLM or any OpenAI-compatible server).

Every engine speaks native tool calls: agents call `lm.acall(messages=<OpenAI chat dicts>, tools=<OpenAI function
definitions>, stop=[...], **reply_shape_option(shape))` and get back the reply's text and its tool calls. LiteLLM
sends tools to the provider's API and ignores the reply shape; the embedded model gets tools through its own chat
template and decodes under a grammar it builds from the shape (harness.models.llama). Only that engine imports
llama_cpp, so every other model runs without the `local` extra.
"""

from __future__ import annotations

from harness.models.cache import CacheMode
from harness.models.engine import DEFAULT_MAX_TOKENS, ModelProvider
from harness.models.families import ProviderOptions, family_of
from harness.models.scripted import ReferencePolicies


def check_model(model: str, api_base: str | None = None) -> None:
    """Reject a model string that cannot name a model, before anything slow starts: offline, no call made
    (its family says what a valid string is)."""
    family_of(model).check(model, api_base)


def resolve_model(model: str, *, api_base: str | None = None, cache: CacheMode = "resume",
                  max_tokens: int = DEFAULT_MAX_TOKENS,
                  reference_policies: ReferencePolicies | None = None, concurrency: int = 1) -> ModelProvider:
    """The provider for a model string, built by its family; an unknown or unusable model is a UserError. A family
    that replays references (`scripted:reference`) replays them through `reference_policies` (harness.run.reference);
    the embedded model decodes up to `concurrency` calls together; `cache`: which stored answers a call may reuse
    (harness.models.cache)."""
    check_model(model, api_base=api_base)
    return family_of(model).build(model, ProviderOptions(api_base, cache, max_tokens, reference_policies,
                                                         concurrency))
