"""What a run costs, and the per-run spending limits.

Prices come from LiteLLM's cost map as shipped in the installed package (`LITELLM_LOCAL_MODEL_COST_MAP=True`,
set by harness.env: no network). A model the map does not know has an unknown cost (None), never a guess;
the embedded model and the scripted test doubles cost nothing (0). Every cost says where its price came from
(`cost_source`).

A run's cost counts every LM call it made at the model's price, including calls the harness's response cache
answered: the number describes the configuration (what the run costs on a cold cache), like its token counts.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from harness.env import configure_environment
from harness.errors import UserError
from harness.models.families import family_of
from harness.trace.errors import RunLimitReached


class Call(Protocol):
    """What pricing needs from one LM call (harness.trace.calls.LMCall has it)."""

    prompt_tokens: int | None
    completion_tokens: int | None
    reused_prompt_tokens: int


@dataclass(frozen=True)
class Pricing:
    """How one model's calls are priced: `known` False means the cost is unknown (None)."""

    model: str
    source: str
    known: bool
    free: bool = False

    def call_cost(self, prompt_tokens: int, completion_tokens: int, reused_prompt_tokens: int = 0) -> float | None:
        """USD for one call; reused (provider-cached) prompt tokens at the map's cache-read price when it has one."""
        if self.free:
            return 0.0
        if not self.known:
            return None
        return _litellm_cost(self.model, prompt_tokens, completion_tokens, reused_prompt_tokens)


def _litellm_cost(model: str, prompt: int, completion: int, reused: int) -> float | None:
    import litellm

    try:
        prompt_cost, completion_cost = litellm.cost_per_token(model=model, prompt_tokens=prompt,
                                                              completion_tokens=completion,
                                                              cache_read_input_tokens=reused)
    except Exception:  # litellm raises its own errors (ModelNotMappedError, ...) for a model it cannot price
        return None
    return float(prompt_cost) + float(completion_cost)


def litellm_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("litellm")
    except PackageNotFoundError:
        return "unknown"


@functools.cache
def pricing_for(model: str) -> Pricing:
    """The pricing of a model string as given to --model (offline)."""
    family = family_of(model)
    if family.free_pricing:
        return Pricing(model, family.free_pricing, known=True, free=True)
    configure_environment()  # litellm's bundled cost map, never a download
    source = f"litellm {litellm_version()} cost map ({model})"
    if _litellm_cost(model, 1, 1, 0) is None:
        return Pricing(model, f"unknown: no price for {model} in the {source.split(' (')[0]}", known=False)
    return Pricing(model, source, known=True)


def call_tokens(call: Call) -> tuple[int, int]:
    """Prompt and completion tokens of one call as reported by the engine (0 when it reported none)."""
    return call.prompt_tokens or 0, call.completion_tokens or 0


def run_cost(pricing: Pricing, calls: Sequence[Call]) -> float | None:
    """USD for a run's LM calls (None if any call cannot be priced, or its engine reported no usage: a count
    made here would be a guess at the provider's tokenizer); 0 for a run with no LM call."""
    total = 0.0
    for call in calls:
        if not pricing.free and (call.prompt_tokens is None or call.completion_tokens is None):
            return None
        prompt, completion = call_tokens(call)
        cost = pricing.call_cost(prompt, completion, call.reused_prompt_tokens)
        if cost is None:
            return None
        total += cost
    return total


@dataclass(frozen=True)
class RunLimits:
    """--max-tokens-per-run and --max-cost-per-run: a run ends at the first LM call that takes it past either.
    Tokens are the row's total_tokens (prompt + completion as the engine reported them)."""

    max_tokens: int | None = None
    max_cost_usd: float | None = None

    def __post_init__(self) -> None:
        if self.max_tokens is not None and self.max_tokens < 1:
            raise UserError("--max-tokens-per-run must be at least 1")
        if self.max_cost_usd is not None and self.max_cost_usd <= 0:
            raise UserError("--max-cost-per-run must be more than 0")

    @property
    def active(self) -> bool:
        return self.max_tokens is not None or self.max_cost_usd is not None

    def check_pricing(self, pricing: Pricing) -> None:
        """A cost limit needs a price: refuse it up front for a model the cost map does not know."""
        if self.max_cost_usd is not None and not pricing.known:
            raise UserError(f"--max-cost-per-run needs the model's price, and there is none ({pricing.source}); "
                            "use --max-tokens-per-run instead")

    def exceeded(self, pricing: Pricing, calls: Sequence[Call]) -> RunLimitReached | None:
        """The limit these calls passed, if any (what the run records as its error)."""
        if self.max_tokens is not None:
            tokens = sum(sum(call_tokens(c)) for c in calls)
            if tokens > self.max_tokens:
                return RunLimitReached("token_limit", f"LM call {len(calls)} took the run to {tokens:,} tokens, "
                                                      f"past --max-tokens-per-run {self.max_tokens:,}")
        if self.max_cost_usd is not None:
            cost = run_cost(pricing, calls)
            if cost is not None and cost > self.max_cost_usd:
                return RunLimitReached("cost_limit", f"LM call {len(calls)} took the run to ${cost:.4f}, "
                                                     f"past --max-cost-per-run ${self.max_cost_usd:g}")
        return None

    def checker(self, pricing: Pricing) -> Any:
        """A function the LM call log runs before and after each call: it raises once the limit is passed."""

        def check(calls: Sequence[Call]) -> None:
            reached = self.exceeded(pricing, calls)
            if reached is not None:
                raise reached

        return check
