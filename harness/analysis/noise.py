"""How noisy a configuration is, and how large a difference its tasks and epochs can detect.

- Repeats of one configuration (epochs, or several results files) give each task's runs n and successes c. Two runs
  of a task disagree with chance 2p(1-p); its unbiased estimate from one task is c(n-c)/C(n,2), and the **flip
  rate** is its mean over tasks: the share of tasks whose outcome would differ between two runs. Its interval is a
  Wilson interval over tasks (each task counts once: more epochs sharpen its own share, not the task count).
- The **within-task variance** (the noise a repeat sees) is half the flip rate; the **between-task variance** is
  what the per-task success shares vary beyond that. Their ratio is the intraclass correlation (ICC), and the
  design effect 1 + (n-1) ICC says how many runs of one task are worth one run of a new task.
- Success is compared by a **paired test clustered by task**: each task's difference in successes over its paired
  runs (every epoch) is one unit, and under no change each unit is as likely positive as negative. The exact
  distribution of their sum under all sign flips is computed by convolution (success counts are integers), so
  the test is exact at any number of tasks and its false-alarm rate is at most alpha by construction, unlike
  McNemar over epochs, which counts the epochs of one task as independent pairs.
- The **minimum detectable difference** (MDD) at a power and alpha is the true difference that test detects that
  often (minimum_detectable: its normal approximation with the variance a binary outcome has at that difference),
  from the T task-level differences' spread, and never below what the exact test can reach at all:
  ceil(log2(1/alpha)) tasks that each change one run the same way.
- **Holm** adjusts a family of p-values for being read together (step-down, controls the family-wise error).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np


Sided = Literal["two-sided", "drop"]  # the alternative: any change, or a drop (b below a)
POWER = 0.8
Z95 = NormalDist().inv_cdf(0.975)


def t_quantile(q: float, df: float) -> float:
    """Student's t quantile by the Cornish-Fisher expansion around the normal one (within 0.03 of the exact value at 3
    degrees of freedom, 0.001 from 10 up; the normal quantile at infinite df)."""
    z = NormalDist().inv_cdf(q)
    if not math.isfinite(df) or df <= 0:
        return z
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))


@dataclass(frozen=True)
class FlipRate:
    value: float
    low: float
    high: float
    tasks: int  # tasks with at least two runs


def flip_rate(counts: Sequence[tuple[int, int]]) -> FlipRate:
    """Mean over tasks (with >= 2 runs) of the share of their pairs of runs that disagree, from (runs, successes)."""
    shares = [c * (n - c) / math.comb(n, 2) for n, c in counts if n >= 2]
    if not shares:
        return FlipRate(float("nan"), float("nan"), float("nan"), 0)
    value = float(np.mean(shares))
    low, high = wilson_bounds(value, len(shares))
    return FlipRate(value, low, high, len(shares))


def wilson_bounds(share: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a share observed over n units (n may be fractional: an effective size)."""
    denominator = 1 + z * z / n
    center = (share + z * z / (2 * n)) / denominator
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / denominator
    return (0.0 if share <= 0 else max(0.0, center - half)), (1.0 if share >= 1 else min(1.0, center + half))


@dataclass(frozen=True)
class Clustering:
    """Variance of success within a task (between its repeats) and between tasks; `runs` the mean runs per task."""

    within: float
    between: float
    runs: float

    @property
    def icc(self) -> float:
        total = self.within + self.between
        return self.between / total if total > 0 else float("nan")

    @property
    def design_effect(self) -> float:
        """1 + (runs - 1) ICC: runs per task count as runs / design_effect independent runs."""
        return 1 + (self.runs - 1) * (self.icc if math.isfinite(self.icc) else 0.0)


def clustering(counts: Sequence[tuple[int, int]]) -> Clustering:
    """One-way ANOVA estimates from (runs, successes) per task: within = mean unbiased within-task variance
    c(n-c)/(n(n-1)) over tasks with >= 2 runs; between = the variance of the task shares c/n less the share of it
    that within-task noise explains (mean within / n), floored at 0."""
    repeated = [(n, c) for n, c in counts if n >= 2]
    within = float(np.mean([c * (n - c) / (n * (n - 1)) for n, c in repeated])) if repeated else float("nan")
    shares = np.array([c / n for n, c in counts if n > 0], dtype=float)
    runs = float(np.mean([n for n, _ in counts if n > 0])) if len(shares) else float("nan")
    spread = float(np.var(shares, ddof=1)) if len(shares) > 1 else 0.0
    noise = within / runs if repeated else 0.0
    return Clustering(within, max(0.0, spread - noise), runs)


def sign_flip_distribution(units: Sequence[int]) -> tuple[np.ndarray, int]:
    """The exact distribution of sum(+-u) over all sign flips of integer units: (probabilities, offset), where
    probabilities[i] is the chance that the sum is i - offset."""
    magnitudes = [abs(int(u)) for u in units if u]
    offset = sum(magnitudes)
    dist = np.zeros(2 * offset + 1)
    dist[offset] = 1.0
    for m in magnitudes:
        shifted = np.zeros_like(dist)
        shifted[m:] += dist[:len(dist) - m] / 2
        shifted[:len(dist) - m] += dist[m:] / 2
        dist = shifted
    return dist, offset


def clustered_sign_flip_p(units: Sequence[int], sided: Sided = "two-sided") -> float:
    """Exact p of the sum of per-task integer differences (b - a successes over a task's paired runs) under all
    sign flips: two-sided P(|S| >= |s|), or for a drop P(S <= s)."""
    observed = int(sum(units))
    dist, offset = sign_flip_distribution(units)
    values = np.arange(len(dist)) - offset
    if sided == "drop":
        return float(min(1.0, dist[values <= observed].sum()))
    return float(min(1.0, dist[np.abs(values) >= abs(observed)].sum()))


def tasks_needed(alpha: float, sided: Sided) -> int:
    """The fewest tasks over which the exact test can be significant at all: ceil(log2(1/a)), a = alpha for a
    drop, alpha/2 two-sided (every task changing the same way has p = 2^-T one-sided)."""
    one_side = alpha if sided == "drop" else alpha / 2
    return math.ceil(math.log2(1 / one_side) - 1e-12)


def exact_floor(tasks: int, alpha: float, sided: Sided, runs_per_task: float = 1.0) -> float:
    """The smallest difference in success the exact test can call significant at all: tasks_needed of the `tasks`
    each changing one of its `runs_per_task` runs, the same way; 1.0 (nothing detectable) when there are fewer tasks
    than that."""
    if not tasks:
        return float("nan")
    needed = tasks_needed(alpha, sided)
    return 1.0 if tasks < needed else min(1.0, needed / (tasks * runs_per_task))


def detection_margin(difference: float, sd: float, tasks: int, alpha: float, power: float, sided: Sided,
                     runs_per_task: float, mean_success: float) -> float:
    """How far a true `difference` is beyond detection at `power` (> 0: detected more often): sqrt(T) D - 1/(n sqrt(T))
    - t[1-a] sqrt(v + D^2) - t[power] sqrt(v), v = sd^2 + (D (2 m - 1) - D^2) / n the task-level variance under the
    difference (a binary outcome's variance moves with its rate; m the mean success it drops from), v + D^2 the
    sign-flip test's own variance (uncentered), and 1/(n T) the continuity correction of its integer sum."""
    one_side = alpha if sided == "drop" else alpha / 2
    df = tasks - 1
    variance = max(0.0, sd ** 2 + (difference * (2 * mean_success - 1) - difference ** 2) / runs_per_task)
    return (math.sqrt(tasks) * difference - 1 / (runs_per_task * math.sqrt(tasks))
            - t_quantile(1 - one_side, df) * math.sqrt(variance + difference ** 2)
            - t_quantile(power, df) * math.sqrt(variance))


def minimum_detectable(sd: float, tasks: int, alpha: float, power: float = POWER, sided: Sided = "two-sided",
                       runs_per_task: float = 1.0, mean_success: float = 0.5) -> float:
    """The smallest true difference in success the paired sign-flip test over `tasks` task-level differences
    (spread `sd` under no difference, `runs_per_task` runs each, from a mean success of `mean_success`) detects with
    probability `power` at `alpha`: the root of detection_margin (bisection), never below exact_floor, at most 1
    (100 points). The normal approximation of the test, with its own variance and continuity correction, and a
    binary outcome's variance at the difference: a plain t formula on the null spread overstates the power of
    the exact test (measured in docs/experiments.md)."""
    if tasks < 2:
        return float("nan")
    floor = exact_floor(tasks, alpha, sided, runs_per_task)
    if detection_margin(1.0, sd, tasks, alpha, power, sided, runs_per_task, mean_success) < 0:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(50):
        middle = (low + high) / 2
        low, high = (middle, high) if detection_margin(middle, sd, tasks, alpha, power, sided, runs_per_task,
                                                       mean_success) < 0 else (low, middle)
    return min(1.0, max(high, floor))


@dataclass(frozen=True)
class ClusteredTest:
    """b minus a in success over paired runs, tested with tasks as the unit. `difference` is the per-run mean
    difference; `p_value` two-sided, `p_drop` one-sided (b below a); `sd` the task-level differences' spread."""

    tasks: int
    runs: int
    difference: float
    p_value: float
    p_drop: float
    sd: float
    baseline_success: float = 0.5  # the mean success of a (what a drop starts from)

    def mdd(self, alpha: float, power: float = POWER, sided: Sided = "two-sided") -> float:
        return minimum_detectable(self.sd, self.tasks, alpha, power, sided, self.runs / self.tasks,
                                  self.baseline_success)


def clustered_success_test(task_ids: Sequence[str], a: Sequence[bool], b: Sequence[bool]) -> ClusteredTest:
    """The clustered paired test of success on runs paired row by row (a[i] with b[i], task_ids[i] their task)."""
    if not len(task_ids) == len(a) == len(b):
        raise ValueError("paired runs and their task ids must have the same length")
    units: dict[str, list[int]] = {}
    for task, x, y in zip(task_ids, a, b):
        units.setdefault(task, [0, 0])
        units[task][0] += int(y) - int(x)
        units[task][1] += 1
    differences = [u for u, _ in units.values()]
    means = np.array([u / n for u, n in units.values()], dtype=float)
    runs = len(task_ids)
    return ClusteredTest(
        tasks=len(units), runs=runs, difference=sum(differences) / runs if runs else float("nan"),
        p_value=clustered_sign_flip_p(differences), p_drop=clustered_sign_flip_p(differences, "drop"),
        sd=float(np.std(means, ddof=1)) if len(means) > 1 else 0.0,
        baseline_success=float(np.mean(a)) if runs else 0.5)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment, in the order given: the i-th smallest p times (m - i + 1), made monotone and
    capped at 1 (nan stays nan and is not counted in m)."""
    indexed = sorted((p, i) for i, p in enumerate(p_values) if math.isfinite(p))
    adjusted = [float("nan")] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (len(indexed) - rank) * p))
        adjusted[i] = running
    return adjusted


def rerun_spread(within_variance: float, tasks: int, runs_per_task: float, z: float = Z95) -> float:
    """How far apart two re-runs of one configuration land, 95% of the time, in a mean over `tasks` tasks and
    `runs_per_task` runs each, when a run's value varies by `within_variance` within its task: z sqrt(2 v / (T n))."""
    if tasks <= 0 or runs_per_task <= 0 or not math.isfinite(within_variance):
        return float("nan")
    return z * math.sqrt(2 * within_variance / (tasks * runs_per_task))
