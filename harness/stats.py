"""Statistics for comparing arms honestly: intervals, paired deltas, an exact test, pass@k and pass^k.

- Success rates get Wilson score intervals (good coverage at small n and near 0 or 1, unlike the normal
  approximation).
- Arms run the same tasks, so comparisons are paired per task: the mean of per-task differences with a
  seeded percentile-bootstrap interval, and an exact McNemar test on paired success (only discordant pairs
  carry information about the difference).
- With several epochs, pass@k (at least one of k samples succeeds) and pass^k (all k succeed) use the
  unbiased estimators over n samples with c successes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Rate:
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
    if n == 0:
        return Rate(0, 0, float("nan"), float("nan"))
    p = successes / n
    denominator = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return Rate(successes, n, max(0.0, center - half), min(1.0, center + half))


@dataclass(frozen=True)
class Delta:
    """Mean of paired differences (b - a) with a bootstrap interval; `relative` is mean(b)/mean(a) - 1."""

    mean: float
    low: float
    high: float
    n: int
    relative: float
    relative_low: float
    relative_high: float

    @property
    def significant(self) -> bool:
        return self.n > 1 and (self.low > 0 or self.high < 0)


def paired_delta(a: list[float] | np.ndarray, b: list[float] | np.ndarray, *, resamples: int = 10_000,
                 seed: int = 0, confidence: float = 0.95) -> Delta:
    """Bootstrap (percentile, seeded) interval of mean(b - a) over paired observations, and of the ratio of
    means (for "code mode uses X% fewer tokens" statements)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError("paired samples must have the same length")
    n = len(a)
    if n == 0:
        nan = float("nan")
        return Delta(nan, nan, nan, 0, nan, nan, nan)
    differences = b - a
    relative = b.mean() / a.mean() - 1 if a.mean() else float("nan")
    if n == 1:
        return Delta(float(differences[0]), float(differences[0]), float(differences[0]), 1, relative, relative,
                     relative)
    rng = np.random.default_rng(seed)
    index = rng.integers(0, n, size=(resamples, n))
    mean_differences = differences[index].mean(axis=1)
    a_means, b_means = a[index].mean(axis=1), b[index].mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = b_means / a_means - 1
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(mean_differences, [tail, 100 - tail])
    finite = ratios[np.isfinite(ratios)]
    r_low, r_high = np.percentile(finite, [tail, 100 - tail]) if len(finite) else (float("nan"),) * 2
    return Delta(float(differences.mean()), float(low), float(high), n, float(relative), float(r_low), float(r_high))


@dataclass(frozen=True)
class McNemar:
    only_a: int  # pairs where a succeeded and b failed
    only_b: int  # pairs where b succeeded and a failed
    p_value: float

    @property
    def significant(self) -> bool:
        return self.p_value < 0.05


def mcnemar_exact(a: list[bool], b: list[bool]) -> McNemar:
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
