"""Planning a suite: the numbers by hand, and a printed plan checked by simulating it through the gate."""

import math

import pandas as pd
import pytest

from harness.analysis.gate import GateRule
from harness.analysis.noise import minimum_detectable
from harness.analysis.plan import (
    detectable,
    noise_from_flip_rate,
    noise_from_mixture,
    noise_from_results,
    plan,
    tasks_for,
)
from harness.analysis.simulate import gate_trials
from harness.errors import UserError
from harness.models.noisy import parse_noisy
from tests.results_factory import record


def test_stated_noise():
    # 0.5·0.8·0.2 + 0.5·0.5·0.5 = 0.08 + 0.125 = 0.205 within-task variance, a flip rate of 41%
    assert math.isclose(noise_from_mixture("0.5@0.8+0.5@0.5").within, 0.205)
    assert noise_from_flip_rate(0.2).within == 0.1
    with pytest.raises(UserError, match="--flip-rate 0.0 must be above 0"):
        noise_from_flip_rate(0.0)


def test_noise_from_results_needs_repeats():
    once = pd.DataFrame([record("r", t, "direct", 0, t % 2 == 0).to_row() for t in range(4)])
    with pytest.raises(UserError, match="every task ran once"):
        noise_from_results(once, "once.parquet")
    # t0: 1 of 2, t1: 2 of 2 -> within (0.5 + 0)/2 = 0.25
    twice = pd.DataFrame([record("r", t, "direct", e, t == 1 or e == 0).to_row() for t in range(2) for e in range(2)])
    assert noise_from_results(twice, "twice.parquet").within == 0.25


def test_the_plan_is_the_fewest_tasks_whose_detectable_difference_is_small_enough():
    noise = noise_from_flip_rate(0.2)  # within 0.1; 2 epochs: task-level sd sqrt(2 · 0.1 / 2) = 0.316
    needed = tasks_for(noise, 0.1, 2, 0.05)
    assert detectable(noise, needed, 2, 0.05) <= 0.1 < detectable(noise, needed - 1, 2, 0.05)
    assert math.isclose(detectable(noise, 40, 2, 0.05), minimum_detectable(math.sqrt(0.1), 40, 0.05, sided="drop",
                                                                          runs_per_task=2))
    rows = plan(noise, 0.1, 0.05, tasks=40, max_epochs=3)
    assert [r.epochs for r in rows] == [1, 2, 3] and rows[1].tasks_needed == needed
    assert rows[0].tasks_needed > rows[1].tasks_needed > rows[2].tasks_needed  # each epoch buys tasks
    assert rows[0].detectable_now > rows[1].detectable_now > rows[2].detectable_now


def test_a_printed_plan_detects_its_difference_about_as_often_as_it_says():
    # tasks at 80% and 50%: a drop of 15 points moves no chance past 0, so the shift is the true drop
    noise = noise_from_mixture("0.5@0.8+0.5@0.5")
    needed = tasks_for(noise, 0.15, 2, 0.05, 0.8)
    spec = parse_noisy("scripted:noisy:p=0.5@0.8+0.5@0.5")
    found = gate_trials(spec, needed, 2, 120, GateRule(max_drop=0.0), drop=0.15, first_seed=50_000)
    assert math.isclose(found.true_drop, 0.15)
    assert 0.68 <= found.failure_rate <= 0.92  # 80% planned; 120 pairs give a standard error of 3.7 points
