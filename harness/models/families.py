"""Model families, registered once: every rule that depends on what kind of model a `--model` string names (how its
provider is built, the scaffold it runs under by default, whether it is charged, what `harness setup` does for it,
whether a prompt can be tuned on it, whether it replays the tasks' references, its context window) is a field of its
family, and every other module asks `family_of(model)` instead of testing the string.

The built-in families register here through `register_model_family` (public as `harness.register_model_family`),
the call a plugin makes for its own kind of model string:

- `local`, `local:PATH.gguf`: the embedded llama.cpp model, in process (llama_cpp is imported only when its engine
  is built, so every other family runs without the `local` extra);
- `scripted:reference`: replays each task's reference solution through each arm's protocol;
- `scripted:noisy:OPTIONS`: replays the references with a seeded chance of success per task (harness.models.noisy);
- `scripted:NAME`: the other deterministic test doubles (harness.models.scripted);
- anything else: a LiteLLM model string.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.errors import UserError
from harness.models.batching import default_concurrency, local_n_ctx
from harness.models.cache import CacheMode, CachingEngine
from harness.models.engine import DEFAULT_MAX_TOKENS, EngineProvider, ModelProvider
from harness.models.litellm_engine import LiteLLMEngine, litellm_context_window, litellm_routes
from harness.models.scripted import (
    SCRIPTED_MODELS,
    ReferencePolicies,
    garbage_provider,
    reference_provider,
    scripted_user_provider,
)
from harness.models.noisy import NOISY_PREFIX, SIMULATED_PRICING, noisy_provider, parse_noisy
from harness.models.scripted_judge import scripted_judge_provider

FALLBACK = "litellm"  # the family of every string no registered family's key takes


@dataclass(frozen=True)
class ProviderOptions:
    """What building a provider may use; `reference_policies` is given only to a family that replays references."""

    api_base: str | None = None
    cache: CacheMode = "resume"  # which stored answers a call may reuse (harness.models.cache)
    max_tokens: int = DEFAULT_MAX_TOKENS
    reference_policies: ReferencePolicies | None = None
    concurrency: int = 1  # the run's --max-concurrency: how many calls an in-process model may decode together


def _no_check(model: str, api_base: str | None) -> None:
    return None


def _one() -> int:
    return 1


def _unknown_window(model: str) -> int | None:
    return None


@dataclass(frozen=True)
class ModelFamily:
    """One kind of model string. `keys` name its strings: a key ending in ':' is a prefix, any other key the
    whole string. Only `name`, `keys` and `build` are required; the rest default to what an API model needs."""

    name: str
    keys: tuple[str, ...]
    build: Callable[[str, ProviderOptions], ModelProvider]
    # (model, api_base) -> None, or a UserError for a string that names no model (offline, no call made)
    check: Callable[[str, str | None], None] = _no_check
    default_scaffold: str = "plain"  # a preset name (harness.agents.scaffold); the embedded model's is guided
    free_pricing: str = ""  # the cost source of a model that charges nothing; "" when LiteLLM's cost map prices it
    setup: Callable[[str], str] | None = None  # what `harness setup` does for it, returning the line it prints
    optimizable: bool = True  # a model that answers by itself (not a replay) can have its prompt tuned
    replays_references: bool = False  # its provider needs the runner's reference traces, so every task needs one
    # --max-concurrency when none is given: the embedded model's measured best on this machine, else 1
    default_concurrency: Callable[[], int] = _one
    # model -> its context window in tokens, what a run's prompts must fit unless --context-window states one (None:
    # unknown, nothing refused)
    context_window: Callable[[str], int | None] = _unknown_window
    strings: str = ""  # how its model strings are written, for `harness models` (empty: its keys)
    needs: str = "-"  # what it needs installed or configured, for `harness models`


def _with_cache(engine: Any, cache: CacheMode) -> Any:
    return engine if cache == "off" else CachingEngine(engine, mode=cache)


def _local_file(model: str) -> str | None:
    """'local' -> None (the embedded model, or $HARNESS_LOCAL_MODEL); 'local:PATH.gguf' -> PATH.gguf."""
    return model.split(":", 1)[1] if model.startswith("local:") else None


def _build_embedded(model: str, options: ProviderOptions) -> ModelProvider:
    from harness.models.llama import local_engine

    return EngineProvider(model, _with_cache(local_engine(_local_file(model), options.concurrency), options.cache),
                          max_tokens=options.max_tokens)


def _setup_embedded(model: str) -> str:
    """Assemble and verify the model file once; without the `local` extra there is nothing to prepare."""
    from harness.models.model_file import INSTALL_HINT, resolve_local_model

    if importlib.util.find_spec("llama_cpp") is None:
        return f"model: the embedded model is not installed (API and scripted models need none); {INSTALL_HINT}"
    started = time.perf_counter()
    path = resolve_local_model(_local_file(model))
    return f"model: {path} (verified, {time.perf_counter() - started:.1f} s)"


def _check_scripted(model: str, api_base: str | None) -> None:
    if model not in SCRIPTED_MODELS:
        raise UserError(f"unknown scripted model '{model}' (known: {', '.join(SCRIPTED_MODELS)})")


def _check_noisy(model: str, api_base: str | None) -> None:
    parse_noisy(model)


def _check_litellm(model: str, api_base: str | None) -> None:
    """LiteLLM's own routing table decides whether it knows the provider (no call is made)."""
    if not litellm_routes(model, api_base):
        raise UserError(f"unknown model '{model}': LiteLLM knows no provider for it; use 'local', "
                        "'local:PATH.gguf', 'scripted:reference' or a LiteLLM model string such as "
                        "'openai/gpt-4o-mini' (or 'openai/<name>' with --api-base)")


def _build_litellm(model: str, options: ProviderOptions) -> ModelProvider:
    return EngineProvider(model, _with_cache(LiteLLMEngine(model, api_base=options.api_base), options.cache),
                          max_tokens=options.max_tokens)


_FAMILIES: dict[str, ModelFamily] = {}


def register_model_family(family: ModelFamily) -> None:
    """Make `family`'s model strings usable wherever a model is named (`--model`, RunConfig, `harness models`).
    Registering a name again replaces that family; a key another family already takes is a ValueError, so no model
    string belongs to two families."""
    if not family.name or (family.name != FALLBACK and not family.keys):
        raise ValueError(f"model family {family.name!r}: give a name and at least one key (a model string, or a "
                         "prefix ending in ':')")
    for other in _FAMILIES.values():
        taken = set(family.keys) & set(other.keys)
        if other.name != family.name and taken:
            raise ValueError(f"model family '{family.name}': key(s) {', '.join(sorted(taken))} already belong to "
                             f"family '{other.name}'")
    _FAMILIES[family.name] = family


def model_families() -> tuple[ModelFamily, ...]:
    """Every registered family, in registration order (the built-in ones first)."""
    return tuple(_FAMILIES.values())


EMBEDDED = ModelFamily("embedded", ("local", "local:"), _build_embedded, default_scaffold="guided",
                       free_pricing="embedded model (runs in process, no charge)", setup=_setup_embedded,
                       default_concurrency=default_concurrency, context_window=lambda model: local_n_ctx(),
                       strings="local | local:PATH.gguf",
                       needs="the local extra")
REFERENCE = ModelFamily("reference", ("scripted:reference",),
                        lambda model, options: reference_provider(model, options.reference_policies),
                        free_pricing="scripted model (no charge)", optimizable=False, replays_references=True)
NOISY = ModelFamily("noisy", ("scripted:noisy", NOISY_PREFIX),
                    lambda model, options: noisy_provider(model, options.reference_policies), check=_check_noisy,
                    free_pricing=SIMULATED_PRICING, optimizable=False, replays_references=True,
                    strings="scripted:noisy:p=0.7,seed=1 (options: docs/noise.md)")
SCRIPTED_USER = "scripted:user"  # the scripted model that plays a conversation's user
SCRIPTED_JUDGE = "scripted:judge"  # the scripted model that judges open answers by word overlap
_SCRIPTED_BUILDERS = {SCRIPTED_USER: scripted_user_provider, SCRIPTED_JUDGE: scripted_judge_provider}
SCRIPTED = ModelFamily("scripted", ("scripted:",),
                       lambda model, options: _SCRIPTED_BUILDERS.get(model, garbage_provider)(model),
                       check=_check_scripted, free_pricing="scripted model (no charge)", optimizable=False,
                       strings="scripted:NAME")
LITELLM = ModelFamily(FALLBACK, (), _build_litellm, check=_check_litellm, context_window=litellm_context_window,
                      strings="any LiteLLM model string, e.g. openai/gpt-4o-mini, or openai/NAME with --api-base URL",
                      needs="the provider's API key; none for a local server (--api-base)")
for _family in (EMBEDDED, REFERENCE, NOISY, SCRIPTED, LITELLM):
    register_model_family(_family)


def family_of(model: str) -> ModelFamily:
    """The family of a model string: a whole-string key first, then the longest prefix key it starts with;
    LiteLLM takes every other string. The one place that tests a model string."""
    families = _FAMILIES.values()
    for family in families:
        if model in family.keys:
            return family
    prefixes = [(len(key), family) for family in families for key in family.keys
                if key.endswith(":") and model.startswith(key)]
    return max(prefixes, key=lambda found: found[0])[1] if prefixes else _FAMILIES[FALLBACK]


def default_user_model(model: str) -> str:
    """The user model of a run on `model` when none is named: the same model, except that a scripted agent gets
    the scripted user (`scripted:user`), since a scripted agent model cannot play a user."""
    return SCRIPTED_USER if family_of(model) in (REFERENCE, NOISY, SCRIPTED) else model
