"""Statistics against values computed by hand (the arithmetic is in each test)."""

import math

import pytest

from harness.stats import mcnemar_exact, paired_delta, pass_at_k, pass_hat_k, wilson


def test_wilson_interval_for_8_of_10():
    # z = 1.959964; d = 1 + z²/10 = 1.384146; center = (0.8 + z²/20)/d = 0.716740
    # half = z·sqrt(0.8·0.2/10 + z²/400)/d = 0.226584  ->  [0.490156, 0.943324]
    rate = wilson(8, 10)
    assert rate.value == 0.8
    assert rate.low == pytest.approx(0.490156, abs=1e-5)
    assert rate.high == pytest.approx(0.943324, abs=1e-5)


def test_wilson_interval_at_the_edges_stays_in_range():
    # 0/5: center = (z²/10)/(1 + z²/5) = 0.384146/1.768293 = 0.217240 = half  ->  [0, 0.434480]
    none = wilson(0, 5)
    assert none.low == 0.0 and none.high == pytest.approx(0.434480, abs=1e-5)
    assert wilson(5, 5).high == 1.0
    assert math.isnan(wilson(0, 0).value)


def test_mcnemar_exact_two_sided():
    # discordant pairs: a-only 1, b-only 6 -> n = 7; P(X <= 1) = (C(7,0) + C(7,1)) / 2^7 = 8/128; p = 0.125
    a = [True] * 3 + [True] + [False] * 6 + [False] * 2
    b = [True] * 3 + [False] + [True] * 6 + [False] * 2
    result = mcnemar_exact(a, b)
    assert (result.only_a, result.only_b) == (1, 6)
    assert result.p_value == pytest.approx(0.125)
    assert not result.significant


def test_mcnemar_significant_when_one_arm_wins_every_discordant_pair():
    # 0 vs 8: p = 2 · (1/2^8) = 0.0078125
    result = mcnemar_exact([False] * 8 + [True] * 2, [True] * 10)
    assert result.p_value == pytest.approx(0.0078125) and result.significant
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0


def test_pass_at_k_and_pass_hat_k():
    # n = 5, c = 2, k = 2: pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10; pass^2 = C(2,2)/C(5,2) = 1/10
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4) == pass_hat_k(5, 2, 1)  # k = 1: both are c/n
    assert pass_at_k(3, 2, 2) == 1.0  # fewer than k failures: some draw always succeeds
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_paired_delta_of_a_constant_ratio():
    # b = a/10 for every task: mean difference = mean(1-10, 2-20, 3-30) = -18; relative = 2/20 - 1 = -0.9
    delta = paired_delta([10, 20, 30], [1, 2, 3], seed=1)
    assert delta.mean == pytest.approx(-18.0)
    assert delta.relative == pytest.approx(-0.9)
    assert delta.relative_low == pytest.approx(-0.9) and delta.relative_high == pytest.approx(-0.9)
    assert delta.high < 0 and delta.significant


def test_paired_delta_is_seeded_and_includes_zero_for_noise():
    a = [10, 12, 9, 11, 10, 13]
    b = [11, 11, 10, 10, 12, 12]
    assert paired_delta(a, b, seed=3) == paired_delta(a, b, seed=3)
    noisy = paired_delta(a, b, seed=3)
    assert noisy.low < 0 < noisy.high and not noisy.significant
