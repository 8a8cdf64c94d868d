"""The gate under a known noise: results rows drawn by the noisy model's own draws (harness.models.noisy), judged by
the real gate (harness.analysis.gate.baseline_checks), so its false-alarm rate and its power are measured rather
than assumed. Rows carry only the columns the gate reads; the draws are those a `scripted:noisy:` run would make
for the same spec, tasks, arm and epochs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from harness.agents.arms import DEFAULT_ARMS
from harness.analysis.gate import GateRule, baseline_checks
from harness.models.noisy import NoisySpec

ARM = DEFAULT_ARMS[0]  # the arm the simulated runs go through (any arm: the gate reads only the rows)


def simulated_runs(spec: NoisySpec, tasks: int, epochs: int, run_id: str, arm: str = ARM) -> pd.DataFrame:
    """One run of `tasks` x `epochs` by the noisy model `spec` (its seed draws the outcomes)."""
    rows = [{"run_id": run_id, "suite": "simulated", "task_id": f"task-{t:04d}", "task_hash": f"hash-{t:04d}",
             "arm": arm, "model": "scripted:noisy", "epoch": e, "scaffold": "plain", "scaffold_hash": "",
             "program_hash": "", "success": spec.succeeds(f"task-{t:04d}", arm, f"epoch={e}")}
            for t in range(tasks) for e in range(epochs)]
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class GateTrials:
    """How often the gate failed over `pairs` baseline/candidate pairs, and the mean drop it said it could detect;
    `true_drop` is the mean over tasks of the candidate's chance below the baseline's (clipped chances drop less)."""

    pairs: int
    failures: int
    mean_detectable: float
    true_drop: float

    @property
    def failure_rate(self) -> float:
        return self.failures / self.pairs


def gate_trials(spec: NoisySpec, tasks: int, epochs: int, pairs: int, rule: GateRule, drop: float = 0.0,
                first_seed: int = 0) -> GateTrials:
    """Run the gate on `pairs` independent (baseline, candidate) pairs of the same agent, the candidate's every task
    `drop` less likely to succeed; each pair's two runs take their own seeds."""
    failures, detectable = 0, []
    for pair in range(pairs):
        base = replace(spec, seed=first_seed + 2 * pair)
        candidate = replace(spec, seed=first_seed + 2 * pair + 1, shifts={**spec.shifts, ARM: -drop})
        before = simulated_runs(base, tasks, epochs, f"base-{pair}")
        now = simulated_runs(candidate, tasks, epochs, f"cand-{pair}")
        (check,) = baseline_checks(now, before, rule.max_drop, rule=rule)
        failures += not check.passed
        detectable.append(float(dict(check.properties)["minimum_detectable_drop"]))
    shifted = replace(spec, shifts={**spec.shifts, ARM: -drop})
    true_drop = float(np.mean([spec.chance(f"task-{t:04d}", ARM) - shifted.chance(f"task-{t:04d}", ARM)
                               for t in range(tasks)]))
    return GateTrials(pairs, failures, float(np.mean(detectable)), true_drop)
