"""The numbers that summarize a group of runs, computed in one place for the report's summary table and the table
`harness run` prints at its end, so one run never shows two values for the same statistic."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from harness.analysis.stats import cache_served


@dataclass(frozen=True)
class GroupSummary:
    """A group's runs summarized. Latency statistics are over the timed runs only (`timed_runs`): a run whose every
    LM call came from the response cache took the cache's time, not the model's. Every other number is over all
    the runs given. Means of no runs are NaN."""

    runs: int
    successes: int
    mean_tokens: float
    median_tokens: float
    timed_runs: int
    mean_latency_s: float
    median_latency_s: float
    mean_turns: float
    mean_tool_calls: float
    errors: int
    policy_violations: int
    cache_served_runs: int
    cost_usd: float | None  # None when any run's price is unknown


def _mean(values: pd.Series) -> float:
    return float(values.mean()) if len(values) else float("nan")


def _median(values: pd.Series) -> float:
    return float(values.median()) if len(values) else float("nan")


def summarize(runs: pd.DataFrame) -> GroupSummary:
    """Summarize `runs` (rows of the results schema)."""
    served = cache_served(runs)
    timed = runs[~served]
    costs = runs["cost_usd"]
    return GroupSummary(
        runs=len(runs), successes=int(runs["success"].sum()),
        mean_tokens=_mean(runs["total_tokens"]), median_tokens=_median(runs["total_tokens"]),
        timed_runs=len(timed), mean_latency_s=_mean(timed["latency_s"]), median_latency_s=_median(timed["latency_s"]),
        mean_turns=_mean(runs["turns"]), mean_tool_calls=_mean(runs["tool_calls"]),
        errors=int((runs["error_type"] != "").sum()), policy_violations=int(runs["policy_violations"].sum()),
        cache_served_runs=int(served.sum()),
        cost_usd=None if costs.isna().any() else float(costs.sum()))
