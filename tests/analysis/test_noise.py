"""Noise statistics against small cases worked by hand: flip rate, within/between variance, ICC and design effect,
the clustered sign-flip test, the minimum detectable difference, Holm."""

import math

import pytest

from harness.analysis.noise import (
    clustered_sign_flip_p,
    clustered_success_test,
    clustering,
    exact_floor,
    flip_rate,
    holm,
    minimum_detectable,
    rerun_spread,
    t_quantile,
    tasks_needed,
)


def test_flip_rate_of_two_runs_is_the_share_of_tasks_that_flipped():
    # 4 tasks run twice: 1 of 2, 2 of 2, 0 of 2, 1 of 2 -> tasks 0 and 3 flipped: 2/4. Wilson over 4 tasks at 0.5:
    # d = 1 + z²/4 = 1.960365, center = 0.5, half = z·sqrt(0.0625 + z²/64)/d = 1.959964·0.353553... -> [15.0%, 85.0%]
    flips = flip_rate([(2, 1), (2, 2), (2, 0), (2, 1)])
    assert flips.value == 0.5 and flips.tasks == 4
    assert (round(flips.low, 3), round(flips.high, 3)) == (0.150, 0.850)


def test_flip_rate_with_more_epochs_is_the_share_of_disagreeing_pairs():
    # 3 runs, 1 success: pairs (s,f),(s,f),(f,f) -> 2 of 3 disagree; 3 of 3 -> 0; mean 1/3. One run: not counted.
    flips = flip_rate([(3, 1), (3, 3), (1, 1)])
    assert math.isclose(flips.value, 1 / 3) and flips.tasks == 2


def test_clustering_splits_variance_within_and_between_tasks():
    # shares 0.5, 1, 0, 0.5 (2 runs each): within = mean c(n-c)/(n(n-1)) = (0.5 + 0 + 0 + 0.5)/4 = 0.25;
    # var of shares (ddof 1) = 0.5/3 = 0.1667, less within/n = 0.125 -> between 0.0417; ICC = 0.0417/0.2917 = 1/7;
    # design effect 1 + (2-1)/7 = 8/7
    c = clustering([(2, 1), (2, 2), (2, 0), (2, 1)])
    assert math.isclose(c.within, 0.25) and math.isclose(c.between, 1 / 24)
    assert math.isclose(c.icc, 1 / 7) and math.isclose(c.design_effect, 8 / 7)


def test_tasks_that_never_vary_have_icc_one():
    c = clustering([(3, 3), (3, 0), (3, 3), (3, 0)])
    assert c.within == 0 and c.icc == 1 and c.design_effect == 3


@pytest.mark.parametrize("units, sided, expected", [
    ([-1, -1, -1], "drop", 1 / 8),  # all three tasks drop: one of 8 sign patterns
    ([-1, -1, -1], "two-sided", 2 / 8),
    ([-1, -1, 0, 0], "drop", 1 / 4),  # zeros carry nothing
    ([-2, 1], "drop", 2 / 4),  # sums -3, -1, 1, 3: P(S <= -1) = 1/2
    ([-2, 1], "two-sided", 1.0),
    ([0, 0], "two-sided", 1.0),
    ([-3, -1, 2], "drop", 3 / 8),  # observed -2; the 8 sums are -6 -4 -2 0 0 2 4 6: three are <= -2
])
def test_clustered_sign_flip_p_by_enumeration(units, sided, expected):
    assert math.isclose(clustered_sign_flip_p(units, sided), expected)


def test_clustered_test_sums_each_tasks_epochs_into_one_unit():
    # task x: baseline 2/2, candidate 0/2 -> unit -2; task y: 1/2 vs 1/2 -> 0; task z: 0/2 vs 1/2 -> +1
    tasks = ["x", "x", "y", "y", "z", "z"]
    a = [True, True, True, False, False, False]
    b = [False, False, False, True, True, False]
    test = clustered_success_test(tasks, a, b)
    assert (test.tasks, test.runs) == (3, 6) and math.isclose(test.difference, -1 / 6)
    assert math.isclose(test.p_drop, 0.5) and math.isclose(test.p_value, 1.0)
    # task means -1, 0, 0.5: mean -1/6, sd = sqrt(((5/6)² + (1/6)² + (2/3)²)/2) = sqrt(0.58333) = 0.7638
    assert math.isclose(test.sd, math.sqrt(7 / 12))


def test_t_quantiles_match_tables():
    assert abs(t_quantile(0.975, 10) - 2.228) < 0.001 and abs(t_quantile(0.8, 10) - 0.879) < 0.001
    assert abs(t_quantile(0.95, 34) - 1.691) < 0.001 and abs(t_quantile(0.975, 3) - 3.182) < 0.03


def test_minimum_detectable_difference_by_hand():
    # 35 tasks, task-level sd 0.48, one epoch from 50% success, one-sided alpha 0.05, 80% power: the variance at a
    # drop D is 0.2304 - D², the test's own 0.2304; the margin sqrt(35) D - 1/sqrt(35) - t[.95,34] · 0.48
    # - t[.8,34] · sqrt(0.2304 - D²) is 0 where 5.9161 D = 0.16903 + 1.6909 · 0.48 + 0.8524 · sqrt(0.2304 - D²):
    # at D = 0.2267, sqrt(0.1790) = 0.4231 and the right side is 1.3413 = 5.9161 · 0.2267. (A t formula on the null
    # spread alone, (1.6909 + 0.8524) · 0.48 / 5.9161 = 0.2063, overstates the exact test's power.)
    assert abs(minimum_detectable(0.48, 35, 0.05, 0.8, "drop") - 0.2267) < 0.0005
    # no spread at all: the exact test still needs 5 tasks to change (2^-5 < 0.05): 5/35 = 14.3 points
    assert math.isclose(minimum_detectable(0.0, 35, 0.05, 0.8, "drop"), 5 / 35)
    assert tasks_needed(0.05, "drop") == 5 and tasks_needed(0.05, "two-sided") == 6  # 2^-6 < 0.025
    assert exact_floor(3, 0.05, "drop") == 1.0 and minimum_detectable(5.0, 10, 0.05) == 1.0


def test_holm_adjusts_step_down_and_keeps_order():
    # sorted 0.01, 0.03, 0.04: x3 = 0.03, x2 = 0.06, x1 = 0.04 -> monotone 0.06; nan is left out of m
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    adjusted = holm([0.2, float("nan"), 0.01])
    assert adjusted[0] == pytest.approx(0.2) and math.isnan(adjusted[1]) and adjusted[2] == pytest.approx(0.02)


def test_rerun_spread_is_the_95pct_range_of_a_difference_between_two_reruns():
    # within variance 0.1, 10 tasks x 2 runs: 1.96 · sqrt(2 · 0.1 / 20) = 0.196
    assert rerun_spread(0.1, 10, 2) == pytest.approx(0.196, abs=0.001)
