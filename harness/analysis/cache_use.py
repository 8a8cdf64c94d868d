"""How much of a set of runs the LM response cache answered, said in words by the run's summary, the report and the
gate: a reused answer is not a measurement of the model (its latency is the cache's, and the model was not asked),
so whoever reads a number should know when it was reused."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from harness.analysis.stats import cache_served

# what each cache mode's reused answers are, in the sentence that counts them
REUSED_FROM = {
    "resume": "this run's own answers, stored before it was resumed",
    "replay": "--cache replay: answers stored by any earlier run",
    "": "answers stored by earlier runs",  # rows written before modes were recorded (schema < 13)
}
BYPASS = "--no-cache asks the model for every call"


@dataclass(frozen=True)
class CacheUse:
    """Runs and LM calls, and how many of them the response cache answered: `served_runs` had every LM call answered
    by it, `partly_served_runs` some. `modes`: the cache modes of the runs it answered (harness.models.cache)."""

    runs: int
    served_runs: int
    partly_served_runs: int
    calls: int
    cached_calls: int
    modes: tuple[str, ...]

    @property
    def any(self) -> bool:
        return self.cached_calls > 0

    @property
    def all_served(self) -> bool:
        """Every run was answered by the cache alone: nothing in these results was measured now."""
        return self.runs > 0 and self.served_runs == self.runs


def cache_use(frame: pd.DataFrame) -> CacheUse:
    """Count the cache's answers in `frame` (rows of the results schema)."""
    served = cache_served(frame)
    partly = (frame["cached_llm_calls"] > 0) & ~served
    hit = frame[frame["cached_llm_calls"] > 0]
    modes = tuple(sorted(set(hit["cache_mode"].fillna(""))))
    return CacheUse(runs=len(frame), served_runs=int(served.sum()), partly_served_runs=int(partly.sum()),
                    calls=int(frame["llm_calls"].sum()), cached_calls=int(frame["cached_llm_calls"].sum()),
                    modes=modes if len(hit) else ())


def cache_sentence(use: CacheUse, lead: str = "Response cache:") -> str | None:
    """'Response cache: 3 of 8 runs ... (what the answers were); the flag that bypasses it.', or None when the cache
    answered no call. `lead`: the words it starts with (the report sets them in bold)."""
    if not use.any:
        return None
    partly = f", {use.partly_served_runs} more in part" if use.partly_served_runs else ""
    sources = "; ".join(REUSED_FROM.get(mode, f"cache mode {mode}") for mode in use.modes)
    return (f"{lead} {use.served_runs} of {use.runs} run(s) were answered by the cache alone{partly}: "
            f"{use.cached_calls} of {use.calls} LM call(s) came from the cache, not from the model ({sources}). "
            f"Their latency is not the model's; {BYPASS}.")


def nothing_measured_warning(use: CacheUse) -> str | None:
    """The gate's warning when every run was answered by the cache alone (None otherwise): it measured nothing new."""
    if not use.all_served:
        return None
    return ("warning: every run in these results was answered by the response cache alone: this gate measured "
            "nothing new (the model was not asked). Run again with --no-cache (or without --cache replay) to measure.")
