"""Statistics for comparing arms honestly: intervals, paired deltas, an exact test, pass@k and pass^k.

- Success rates get Wilson score intervals (good coverage at small n and near 0 or 1, unlike the normal
  approximation).
- Arms run the same tasks, so comparisons are paired: runs are matched on (task, epoch) and the mean
  per-run difference gets a seeded percentile bootstrap interval that resamples whole tasks (epochs of one
  task are not independent). Paired success is tested with tasks as the unit, every epoch counted (the exact
  sign-flip test of harness.analysis.noise); McNemar's discordant pairs are kept as counts to show.
- A percentile bootstrap over few tasks is too narrow, so with fewer than SMALL_SAMPLE_TASKS paired tasks a
  continuous difference (tokens, latency, turns) is judged by an exact sign-flip permutation test over the
  task-level differences instead; the interval is still shown, and called rough below ROUGH_INTERVAL_TASKS.
- With several epochs, pass@k (at least one of k samples succeeds) and pass^k (all k succeed) use the
  unbiased estimators over n samples with c successes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.analysis.noise import ClusteredTest, clustered_success_test

Z95 = 1.959963984540054
SMALL_SAMPLE_TASKS = 20  # below this many paired tasks, significance comes from the exact sign-flip test
ROUGH_INTERVAL_TASKS = 10  # a bootstrap interval from fewer tasks than this is rough (too narrow)


@dataclass(frozen=True)
class Rate:
    """A success rate with its 95% interval."""

    successes: int
    n: int
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.successes / self.n if self.n else float("nan")

    def __str__(self) -> str:
        return f"{self.value:.1%} [{self.low:.1%}, {self.high:.1%}] (n={self.n})"


def wilson(successes: int, n: int, z: float = Z95) -> Rate:
    """Success rate with its Wilson score interval."""
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes out of {n} runs")
    if n == 0:
        return Rate(0, 0, float("nan"), float("nan"))
    p = successes / n
    denominator = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # At 0 or n successes one bound is exactly 0 or 1; pin it so rounding cannot put it past the rate.
    low = 0.0 if successes == 0 else max(0.0, center - half)
    high = 1.0 if successes == n else min(1.0, center + half)
    return Rate(successes, n, low, high)


@dataclass(frozen=True)
class Delta:
    """Mean of paired differences (b - a) with a bootstrap interval; `relative` is mean(b)/mean(a) - 1. `test` is
    what its significance comes from: the exact sign-flip test over the task-level differences (`p_value`) when
    fewer than SMALL_SAMPLE_TASKS pair, else whether the bootstrap interval excludes zero."""

    mean: float
    low: float
    high: float
    n: int
    relative: float
    relative_low: float
    relative_high: float
    test: str = "bootstrap"  # "sign-flip" | "bootstrap"
    p_value: float = float("nan")  # the sign-flip test's two-sided p (nan under the bootstrap)

    @property
    def significant(self) -> bool:
        """p < 0.05 under the sign-flip test; the 95% interval excluding zero under the bootstrap, and never from
        a bootstrap over fewer than ROUGH_INTERVAL_TASKS tasks (nor from a single pair: no spread to judge)."""
        if self.test == "sign-flip":
            return self.p_value < 0.05
        return self.n >= ROUGH_INTERVAL_TASKS and (self.low > 0 or self.high < 0)

    @property
    def rough(self) -> bool:
        """The interval comes from so few tasks that it is too narrow to read closely."""
        return self.n < ROUGH_INTERVAL_TASKS


def sign_flip_p(differences: Sequence[float] | np.ndarray, weights: Sequence[float] | np.ndarray | None = None) -> float:
    """Exact two-sided permutation test of a zero mean difference: under no effect each task's difference is as
    likely positive as negative, so the weighted mean is compared with its value under all 2^n sign flips
    (n up to 19 is at most 2^19 flips). With n tasks the smallest possible p is 2 / 2^n (0.125 at 4 tasks)."""
    d = np.asarray(differences, dtype=float)
    w = np.ones_like(d) if weights is None else np.asarray(weights, dtype=float)
    n = len(d)
    if n == 0 or not np.any(d):
        return 1.0
    if n >= 25:
        raise ValueError(f"an exact sign-flip test over {n} tasks enumerates 2^{n} flips; use the bootstrap")
    totals = np.zeros(1)
    for value in d * w:  # the weighted sum under every sign flip, built by doubling
        totals = np.concatenate([totals + value, totals - value])
    totals = np.abs(totals)
    observed = abs(float(np.dot(d, w)))
    return float(np.mean(totals >= observed - 1e-9 * max(1.0, observed)))


def paired_delta(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *,
                 weights: Sequence[float] | np.ndarray | None = None, resamples: int = 10_000, seed: int = 0,
                 confidence: float = 0.95) -> Delta:
    """Percentile-bootstrap (seeded) interval of the mean of b - a over paired observations, and of the ratio
    of means minus one (for "code mode uses X% fewer tokens" statements). With `weights` (runs per task, when
    a and b are per-task means) the means are weighted, so they equal the per-run means while tasks stay the
    unit that is resampled. With fewer than SMALL_SAMPLE_TASKS pairs the exact sign-flip test is attached."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    w = np.ones_like(a) if weights is None else np.asarray(weights, dtype=float)
    if not a.shape == b.shape == w.shape:
        raise ValueError("paired samples (and weights) must have the same length")
    n = len(a)
    nan = float("nan")
    if n == 0:
        return Delta(nan, nan, nan, 0, nan, nan, nan)
    differences = b - a
    mean_a, mean_b = np.average(a, weights=w), np.average(b, weights=w)
    relative = float(mean_b / mean_a - 1) if mean_a else nan
    mean = float(np.average(differences, weights=w))
    test, p_value = ("sign-flip", sign_flip_p(differences, w)) if n < SMALL_SAMPLE_TASKS else ("bootstrap", nan)
    if n == 1:
        return Delta(mean, mean, mean, 1, relative, relative, relative, test, p_value)
    rng = np.random.default_rng(seed)
    index = rng.integers(0, n, size=(resamples, n))
    total = w[index].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile((differences * w)[index].sum(axis=1) / total, [tail, 100 - tail])
    a_means, b_means = (a * w)[index].sum(axis=1) / total, (b * w)[index].sum(axis=1) / total
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = b_means / a_means - 1
    finite = ratios[np.isfinite(ratios)]
    r_low, r_high = np.percentile(finite, [tail, 100 - tail]) if len(finite) else (nan, nan)
    return Delta(mean, float(low), float(high), n, relative, float(r_low), float(r_high), test, p_value)


@dataclass(frozen=True)
class McNemar:
    only_a: int  # pairs where a succeeded and b failed
    only_b: int  # pairs where b succeeded and a failed
    p_value: float

    @property
    def significant(self) -> bool:
        return self.p_value < 0.05

    @property
    def p_text(self) -> str:
        """'p = 0.031', or 'p < 0.001' (three decimals would print a misleading 0.000)."""
        return "p < 0.001" if self.p_value < 0.001 else f"p = {self.p_value:.3f}"


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemar:
    """Exact (binomial) McNemar test, two-sided, on paired success."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    only_a = sum(1 for x, y in zip(a, b) if x and not y)
    only_b = sum(1 for x, y in zip(a, b) if y and not x)
    n = only_a + only_b
    if n == 0:
        return McNemar(0, 0, 1.0)
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return McNemar(only_a, only_b, min(1.0, 2 * tail))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples (drawn from n with c correct) is correct."""
    if k > n:
        raise ValueError(f"k={k} exceeds the {n} samples")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: probability that all k samples (drawn from n with c correct) are correct."""
    if k > n:
        raise ValueError(f"k={k} exceeds the {n} samples")
    return math.comb(c, k) / math.comb(n, k)


@dataclass(frozen=True)
class PassK:
    """Means over tasks; `pass_hat` holds pass^1 .. pass^k (the curve τ-bench's leaderboards report, falling
    with k for an agent that does not succeed reliably), so pass_hat[-1] is pass^k."""
    k: int
    tasks: int
    pass_at_1: float
    pass_at_k: float
    pass_hat: tuple[float, ...]

    @property
    def pass_hat_k(self) -> float:
        return self.pass_hat[-1]


def pass_k_over_tasks(counts: Sequence[tuple[int, int]], k: int) -> PassK:
    """Mean pass@1, pass@k and pass^1 .. pass^k over tasks, from (samples, successes) per task."""
    if not counts:
        raise ValueError("no tasks")
    return PassK(k, len(counts), float(np.mean([c / n for n, c in counts])),
                 float(np.mean([pass_at_k(n, c, k) for n, c in counts])),
                 tuple(float(np.mean([pass_hat_k(n, c, j) for n, c in counts])) for j in range(1, k + 1)))


# ---- grouping and pairing runs ----

def tool_latency(frame: pd.DataFrame) -> pd.Series:
    """Seconds added to each run's tool calls: its tool_latency_s, or 0 for a row from before the column existed
    (those runs added none)."""
    return frame["tool_latency_s"].astype(float).fillna(0.0)


def tool_latency_label(seconds: float) -> str:
    return f"{seconds:g} s tool latency"


def group_labels(frame: pd.DataFrame) -> pd.Series:
    """One label per run: the arm, plus the model, the program, the scaffold and the tool latency when the results
    mix several."""
    label = frame["arm"].astype(str)
    if frame["model"].nunique() > 1:
        label = label + " · " + frame["model"].astype(str)
    if frame["program_hash"].nunique() > 1:
        label = label + " · " + frame["program_hash"].map(lambda h: f"program {h[:8]}" if h else "built-in prompt")
    if frame["scaffold_hash"].nunique() > 1:
        label = label + " · " + frame["scaffold"].astype(str) + " scaffold"
    latency = tool_latency(frame)
    if latency.nunique() > 1:
        label = label + " · " + latency.map(tool_latency_label)
    return label


def cache_served(frame: pd.DataFrame) -> pd.Series:
    """Runs whose every LM call came from the response cache: their latency is not the model's."""
    return (frame["llm_calls"] > 0) & (frame["cached_llm_calls"] == frame["llm_calls"])


def pair_runs(a: pd.DataFrame, b: pd.DataFrame, keys: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rows of a and b matched on `keys`, aligned row by row. Repeats of one key (the same configuration
    run in several result files) are numbered in run order and paired in that order."""
    def numbered(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.sort_values(["run_id", *keys], kind="stable")
        return frame.assign(_repeat=frame.groupby(list(keys)).cumcount()).set_index([*keys, "_repeat"])

    a, b = numbered(a), numbered(b)
    common = a.index.intersection(b.index).sort_values()
    return a.loc[common].reset_index(), b.loc[common].reset_index()


def changed_tasks(*frames: pd.DataFrame) -> list[str]:
    """Task ids recorded with more than one definition (task_hash) across the frames: the task was edited
    between runs. Rows without a hash (written by schema v1) are no evidence either way."""
    rows = pd.concat([f[["task_id", "task_hash"]] for f in frames], ignore_index=True)
    versions = rows[rows["task_hash"] != ""].groupby("task_id")["task_hash"].nunique()
    return sorted(versions[versions > 1].index)


@dataclass(frozen=True)
class Comparison:
    """candidate minus baseline on paired runs; deltas are over per-task means, success also per run."""

    baseline: str
    candidate: str
    pairs: int
    tasks: int
    success_baseline: Rate
    success_candidate: Rate
    success: Delta
    mcnemar: McNemar  # its counts of discordant pairs are shown; significance comes from success_test
    success_test: ClusteredTest  # the paired sign-flip test clustered by task, over every epoch
    tokens: Delta
    tokens_median_task_change: float  # median over tasks of (candidate / baseline - 1): the typical task
    latency: Delta
    turns: Delta
    cache_excluded: int  # pairs left out of the latency delta because a side was served from the cache
    start_gap_s: float = float("nan")  # median seconds between the starts of a timed pair's two runs
    same_run: bool = False  # every timed pair ran in one run (interleaved: paired in time)


def _task_means(a: pd.DataFrame, b: pd.DataFrame, column: str) -> pd.DataFrame:
    pairs = pd.DataFrame({"task_id": a["task_id"].values, "a": a[column].astype(float).values,
                          "b": b[column].astype(float).values})
    return pairs.groupby("task_id").agg(a=("a", "mean"), b=("b", "mean"), runs=("a", "size"))


def _per_task(a: pd.DataFrame, b: pd.DataFrame, column: str, seed: int) -> Delta:
    """Per-task means, weighted by runs: the mean is the per-run mean, the bootstrap resamples tasks."""
    means = _task_means(a, b, column)
    return paired_delta(means["a"].values, means["b"].values, weights=means["runs"].values, seed=seed)


def _median_change(a: pd.DataFrame, b: pd.DataFrame, column: str) -> float:
    means = _task_means(a, b, column)
    means = means[means["a"] > 0]
    return float((means["b"] / means["a"] - 1).median()) if len(means) else float("nan")


def compare_runs(baseline: pd.DataFrame, candidate: pd.DataFrame, baseline_name: str, candidate_name: str,
                 keys: Sequence[str] = ("task_id", "epoch"), seed: int = 0) -> Comparison | None:
    """Pair two sets of runs on `keys` and compare success, tokens, latency and turns (None: nothing pairs)."""
    a, b = pair_runs(baseline, candidate, keys)
    if a.empty:
        return None
    timed = ~(cache_served(a).values | cache_served(b).values)
    return Comparison(
        baseline=baseline_name, candidate=candidate_name, pairs=len(a), tasks=a["task_id"].nunique(),
        success_baseline=wilson(int(a["success"].sum()), len(a)),
        success_candidate=wilson(int(b["success"].sum()), len(b)),
        success=_per_task(a, b, "success", seed),
        mcnemar=mcnemar_exact(list(a["success"]), list(b["success"])),
        success_test=clustered_success_test(list(a["task_id"]), list(a["success"]), list(b["success"])),
        tokens=_per_task(a, b, "total_tokens", seed),
        tokens_median_task_change=_median_change(a, b, "total_tokens"),
        latency=_per_task(a[timed], b[timed], "latency_s", seed),
        turns=_per_task(a, b, "turns", seed),
        cache_excluded=int((~timed).sum()),
        start_gap_s=_start_gap(a[timed], b[timed]),
        same_run=bool(timed.any()) and bool((a["run_id"].values[timed] == b["run_id"].values[timed]).all()),
    )


def _start_gap(a: pd.DataFrame, b: pd.DataFrame) -> float:
    """Median absolute seconds between the starts of paired runs (nan: no pair, or no start times)."""
    if a.empty or "started_at" not in a:
        return float("nan")
    gaps = (pd.to_datetime(a["started_at"]).values - pd.to_datetime(b["started_at"]).values) / np.timedelta64(1, "s")
    gaps = np.abs(gaps.astype(float))
    return float(np.nanmedian(gaps)) if np.isfinite(gaps).any() else float("nan")
