"""Planning a suite: how many tasks and epochs a comparison needs to detect a difference of D points in success, from
the noise measured in results files (each task's runs: its success chance's spread between repeats) or from stated
assumptions (a flip rate, or a mixture of task success chances as `scripted:noisy` takes it).

The model behind the numbers: the comparison's unit is a task; with n epochs per arm a task's difference in success
varies by 2 v / n, v the within-task variance (half the flip rate), assuming the change moves every task alike (no
task-by-arm interaction, which only adds variance). Then harness.analysis.noise.minimum_detectable gives what T
tasks detect, and the plan is the fewest T that detect D. `tests/analysis/test_plan.py` simulates a printed plan
through the gate to check it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from harness.analysis.noise import POWER, Sided, clustering, minimum_detectable
from harness.analysis.stats import group_labels
from harness.errors import UserError
from harness.models.noisy import parse_mixture

MOST_TASKS = 1_000_000


@dataclass(frozen=True)
class Noise:
    """The within-task variance of success a plan assumes, and where it came from (for the printed line)."""

    within: float
    source: str
    mean_success: float = 0.5  # what a drop starts from (0.5 when unknown: the variance term it adds vanishes)

    @property
    def flip_rate(self) -> float:
        return 2 * self.within


def noise_from_results(frame: pd.DataFrame, name: str) -> Noise:
    """Mean within-task variance over every group x task with repeats (epochs, or several files of one group)."""
    frame = frame.assign(_group=group_labels(frame))
    grouped = frame.groupby(["_group", "suite", "task_id"])["success"].agg(["size", "sum"])
    counts = [(int(n), int(c)) for n, c in zip(grouped["size"], grouped["sum"])]
    if not counts or max(n for n, _ in counts) < 2:
        raise UserError(f"{name}: every task ran once, so it measures no noise; give results of `--epochs 2` or more "
                        "(or several runs), or state the noise with --flip-rate or --mixture")
    within = clustering(counts).within
    tasks = sum(n >= 2 for n, _ in counts)
    return Noise(within, f"{name}: {tasks} task(s) with repeats, flip rate {2 * within:.1%}",
                 float(frame["success"].mean()))


def noise_from_flip_rate(flip_rate: float) -> Noise:
    if not 0 < flip_rate <= 1:
        raise UserError(f"--flip-rate {flip_rate} must be above 0 and at most 1 (0.2: a fifth of tasks flip)")
    return Noise(flip_rate / 2, f"stated: flip rate {flip_rate:.1%}")


def noise_from_mixture(text: str) -> Noise:
    """Each task's runs vary by p(1 - p): the mixture's mean of it."""
    mixture = parse_mixture(text)
    within = sum(share * chance * (1 - chance) for share, chance in mixture.components)
    return Noise(within, f"stated: task success chances {text} (flip rate {2 * within:.1%})", mixture.mean)


def detectable(noise: Noise, tasks: int, epochs: int, alpha: float, power: float = POWER,
               sided: Sided = "drop") -> float:
    """The smallest difference `tasks` x `epochs` detect under `noise`."""
    return minimum_detectable(math.sqrt(2 * noise.within / epochs), tasks, alpha, power, sided, epochs,
                              noise.mean_success)


def tasks_for(noise: Noise, detect: float, epochs: int, alpha: float, power: float = POWER,
              sided: Sided = "drop") -> int | None:
    """The fewest tasks that detect `detect` with `epochs` per arm (None: not within MOST_TASKS)."""
    def enough(tasks: int) -> bool:
        return detectable(noise, tasks, epochs, alpha, power, sided) <= detect

    high = 2
    while not enough(high):
        high *= 2
        if high > MOST_TASKS:
            return None
    low = high // 2
    while high - low > 1:  # enough(high), not enough(low) (or low is 1)
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high if low < 2 or not enough(low) else low


@dataclass(frozen=True)
class PlanRow:
    epochs: int
    tasks_needed: int | None
    detectable_now: float  # with the caller's task count (nan when none given)


def plan(noise: Noise, detect: float, alpha: float, power: float = POWER, sided: Sided = "drop",
         tasks: int | None = None, max_epochs: int = 5) -> list[PlanRow]:
    """For 1 .. max_epochs epochs: the tasks needed to detect `detect`, and what `tasks` tasks detect."""
    if not 0 < detect <= 1:
        raise UserError(f"--detect {detect} must be above 0 and at most 1 (0.1: ten points)")
    if max_epochs < 1:
        raise UserError(f"--max-epochs {max_epochs} must be at least 1")
    return [PlanRow(k, tasks_for(noise, detect, k, alpha, power, sided),
                    detectable(noise, tasks, k, alpha, power, sided) if tasks else float("nan"))
            for k in range(1, max_epochs + 1)]
