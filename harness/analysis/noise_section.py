"""The report's noise section: whenever a configuration ran a task more than once (`--epochs k`, or several results
files of one group), how much re-running alone moves its success, tokens and latency, how often a task's outcome
flips, what a repeat is worth against a new task, and which of the report's differences are smaller than that.

The re-run spread of a metric is the range within which 95% of differences between two re-runs of the whole
configuration fall (harness.analysis.noise.rerun_spread: from the metric's variance between repeats of one task,
over the group's tasks and runs per task), so a difference between two arms smaller than it is one that
re-running a single arm could produce alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.analysis.noise import FlipRate, clustering, flip_rate, rerun_spread
from harness.analysis.stats import cache_served
from harness.analysis.tables import Pairing, group_order


@dataclass(frozen=True)
class NoiseFloor:
    """One group's repeats: tasks, mean runs per task, flip rate, ICC and design effect, and the re-run spread of
    success (points as a fraction), tokens (a fraction of the mean) and latency (seconds)."""

    group: str
    tasks: int
    runs_per_task: float
    flips: FlipRate
    icc: float
    design_effect: float
    success_spread: float
    tokens_spread: float
    latency_spread: float


def _within_variance(part: pd.DataFrame, column: str) -> float:
    """Mean over tasks with >= 2 runs of the variance of `column` between a task's runs."""
    variances = part.groupby(["suite", "task_id"])[column].var(ddof=1).dropna()
    return float(variances.mean()) if len(variances) else float("nan")


def noise_floor(part: pd.DataFrame, group: str) -> NoiseFloor | None:
    """The noise floor of one group's runs (None when no task of it ran more than once)."""
    grouped = part.groupby(["suite", "task_id"])["success"].agg(["size", "sum"])
    counts = [(int(n), int(c)) for n, c in zip(grouped["size"], grouped["sum"])]
    if max(n for n, _ in counts) < 2:
        return None
    spread = clustering(counts)
    tasks, runs = len(counts), spread.runs
    tokens = rerun_spread(_within_variance(part, "total_tokens"), tasks, runs)
    mean_tokens = float(part["total_tokens"].mean())
    timed = part[~cache_served(part)]
    latency = rerun_spread(_within_variance(timed, "latency_s"), timed["task_id"].nunique(),
                           len(timed) / max(1, timed["task_id"].nunique())) if len(timed) else float("nan")
    return NoiseFloor(group, tasks, runs, flip_rate(counts), spread.icc, spread.design_effect,
                      rerun_spread(spread.within, tasks, runs), tokens / mean_tokens if mean_tokens else float("nan"),
                      latency)


def noise_floors(frame: pd.DataFrame) -> list[NoiseFloor]:
    floors = [noise_floor(frame[frame["group"] == group], group) for group in group_order(frame)]
    return [f for f in floors if f is not None]


def _points(value: float) -> str:
    return f"±{value * 100:.1f} points" if math.isfinite(value) else "-"


def noise_table(frame: pd.DataFrame) -> pd.DataFrame | None:
    """One row per group with repeats (None when no group has any)."""
    floors = noise_floors(frame)
    if not floors:
        return None
    return pd.DataFrame([{
        "group": f.group, "tasks": f.tasks, "runs per task": f"{f.runs_per_task:.1f}",
        "flip rate [95% CI]": f"{f.flips.value:.1%} [{f.flips.low:.1%}, {f.flips.high:.1%}]",
        "ICC": f"{f.icc:.2f}" if math.isfinite(f.icc) else "-", "design effect": f"{f.design_effect:.2f}",
        "re-run spread: success": _points(f.success_spread),
        "tokens": f"±{f.tokens_spread:.1%}" if math.isfinite(f.tokens_spread) else "-",
        "latency": f"±{f.latency_spread:.2f} s" if math.isfinite(f.latency_spread) else "-",
    } for f in floors])


def _below(pairing: Pairing, floors: dict[str, NoiseFloor]) -> list[str]:
    """The differences of one comparison smaller than what re-running either side alone moves."""
    c = pairing.comparison
    sides = [floors[g] for g in (pairing.baseline, pairing.candidate) if g in floors]
    if c is None or not sides:
        return []
    name = f"{pairing.candidate} vs {pairing.baseline}"
    below = []
    checks = (("success", abs(c.success.mean), max(f.success_spread for f in sides), f"{c.success.mean * 100:+.1f} points"),
              ("tokens", abs(c.tokens.relative), max(f.tokens_spread for f in sides), f"{c.tokens.relative:+.1%}"),
              ("latency", abs(c.latency.mean), max(f.latency_spread for f in sides), f"{c.latency.mean:+.2f} s"))
    for metric, size, floor, text in checks:
        if math.isfinite(size) and math.isfinite(floor) and size < floor:
            below.append(f"{name} {metric} ({text})")
    return below


def noise_paragraphs(frame: pd.DataFrame, found: list[Pairing]) -> list[str]:
    """The noise section in words: per group with repeats, its flip rate and re-run spreads, what a repeat is worth;
    then which differences of the report are below that noise. Without repeats, says how to measure it."""
    floors = noise_floors(frame)
    if not floors:
        return ["Every task ran once per group, so nothing here measures how much re-running alone moves the numbers: "
                "run with `--epochs 3` (or gate against several runs) to see the noise floor. Each comparison above "
                "states the smallest difference its tasks could detect, from the spread of its task-level "
                "differences."]
    paragraphs = []
    for f in floors:
        independent = f.runs_per_task / f.design_effect
        worth = (f"{f.runs_per_task:.1f} run(s) of one task are worth {independent:.2f} run(s) of new tasks (ICC "
                 f"{f.icc:.2f}, design effect {f.design_effect:.2f})." if math.isfinite(f.icc) else
                 "Every run had the same outcome, so the ICC is undefined.")
        paragraphs.append(
            f"**{f.group}**: {f.tasks} task(s), {f.runs_per_task:.1f} run(s) each. Between two runs of this "
            f"configuration, {f.flips.value:.1%} of tasks would flip outcome (95% CI {f.flips.low:.1%} to "
            f"{f.flips.high:.1%}). Re-running it alone moves its success rate by up to {_points(f.success_spread)}, "
            f"its tokens per run by up to ±{f.tokens_spread:.1%} and its latency by up to ±{f.latency_spread:.2f} s "
            f"(95% of re-runs of the same tasks and epochs). {worth}")
    by_group = {f.group: f for f in floors}
    below = [item for pairing in found for item in _below(pairing, by_group)]
    if below:
        paragraphs.append("Differences smaller than re-running alone moves (not evidence of an effect, whatever their "
                          f"p): {'; '.join(below)}.")
    elif any(p.comparison is not None for p in found):
        paragraphs.append("Every difference the report compares is larger than what re-running alone moved.")
    if np.isfinite([f.flips.value for f in floors]).all() and all(f.flips.value == 0 for f in floors):
        paragraphs.append("No task changed outcome between repeats: the runs were deterministic (a cached or "
                          "scripted model, or temperature 0 with identical prompts).")
    return paragraphs
