"""Agreement statistics against cases worked by hand."""

from __future__ import annotations

import math

import pytest

from harness.analysis.agreement import (
    agreement_estimate,
    bootstrap,
    cohen_kappa,
    confusion,
    kappa_estimate,
    krippendorff_alpha,
    percent_agreement,
    rate_estimate,
)

A = [True, True, False, False]
B = [True, False, False, False]


def test_kappa_worked_by_hand():
    # po = 3/4; pass rates 1/2 and 1/4, so pe = 1/2*1/4 + 1/2*3/4 = 1/2; kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2
    assert percent_agreement(A, B) == 0.75
    assert cohen_kappa(A, B) == pytest.approx(0.5)


def test_kappa_of_a_classic_table():
    # 50 items: 20 both yes, 5 a-yes b-no, 10 a-no b-yes, 15 both no: po = .7, pe = .5*.6 + .5*.4 = .5, kappa = .4
    a = [True] * 25 + [False] * 25
    b = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_kappa_is_zero_for_a_judge_that_passes_everything_and_undefined_for_one_class():
    assert cohen_kappa([True] * 4, [True, True, False, True]) == pytest.approx(0.0)
    assert math.isnan(cohen_kappa([True] * 3, [True] * 3))


def test_alpha_worked_by_hand_for_two_labellers():
    # coincidences: o(T,T) = 2, o(T,F) = o(F,T) = 1, o(F,F) = 4; n = 8, nT = 3, nF = 5;
    # alpha = 1 - (n - 1) * 2 / (2 * nT * nF) = 1 - 14/30 = 8/15
    assert krippendorff_alpha(list(zip(A, B, strict=True))) == pytest.approx(8 / 15)


def test_alpha_with_three_labellers_and_a_missing_label():
    # units: (T,T,T): o(T,T) += 3*2*(1/2) = 3; (T,F,None): o(T,F) = o(F,T) = 1; (F,F,F): o(F,F) += 3;
    # (F,T,T): pairs with 1/(3-1): o(T,T) += 1, o(T,F) += 1, o(F,T) += 1. Totals: o(T,T) = 4, o(T,F) = o(F,T) = 2,
    # o(F,F) = 3, n = 11, nT = 6, nF = 5: alpha = 1 - 10 * 4 / (2 * 6 * 5) = 1/3
    units = [(True, True, True), (True, False, None), (False, False, False), (False, True, True)]
    assert krippendorff_alpha(units) == pytest.approx(1 / 3)
    assert math.isnan(krippendorff_alpha([(True, None), (None, False)]))  # no unit has two labels: no pairs


def test_perfect_agreement_is_one():
    assert cohen_kappa(A, A) == 1.0 and krippendorff_alpha(list(zip(A, A, strict=True))) == 1.0


def test_confusion_matrix():
    c = confusion(judge=[True, True, False, False, True], human=[True, False, True, False, True])
    assert (c.both_pass, c.false_pass, c.false_fail, c.both_fail, c.n) == (2, 1, 1, 1, 5)


def test_bootstrap_interval_holds_the_estimate_and_is_seeded():
    a = [True, False] * 30
    b = [True, False] * 25 + [False, True] * 5
    first, again = kappa_estimate(a, b), kappa_estimate(a, b)
    assert first == again and first.low <= first.value <= first.high and first.high - first.low > 0
    assert agreement_estimate(a, b).value == pytest.approx(50 / 60)


def test_bootstrap_drops_undefined_resamples_and_says_how_many_it_kept():
    estimate = kappa_estimate([True, True, True, False], [True, True, True, False], resamples=200)
    assert estimate.value == 1.0 and 0 < estimate.kept < 200  # resamples of one class are undefined


def test_a_rate_estimate_of_no_flips_is_zero_with_a_zero_interval():
    estimate = rate_estimate([False] * 10)
    assert (estimate.value, estimate.low, estimate.high) == (0.0, 0.0, 0.0)
    assert math.isnan(bootstrap(lambda idx: 1.0, 0).value)
