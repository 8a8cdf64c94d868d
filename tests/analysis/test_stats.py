"""Statistics against values computed by hand (the arithmetic is in each test)."""

import math

import numpy as np
import pandas as pd
import pytest

from harness.analysis.stats import (
    compare_runs,
    group_labels,
    mcnemar_exact,
    pair_runs,
    paired_delta,
    pass_at_k,
    pass_hat_k,
    pass_k_over_tasks,
    sign_flip_p,
    tool_latency,
    wilson,
)
from tests.results_factory import record


def frame(records) -> pd.DataFrame:
    return pd.DataFrame([r.to_row() for r in records])


def test_wilson_interval_for_8_of_10():
    # z = 1.959964; d = 1 + z²/10 = 1.384146; center = (0.8 + z²/20)/d = 0.716740
    # half = z·sqrt(0.8·0.2/10 + z²/400)/d = 0.226584  ->  [0.490156, 0.943324]
    rate = wilson(8, 10)
    assert rate.value == 0.8
    assert rate.low == pytest.approx(0.490156, abs=1e-5)
    assert rate.high == pytest.approx(0.943324, abs=1e-5)
    assert str(rate) == "80.0% [49.0%, 94.3%] (n=10)"


def test_wilson_interval_at_the_edges():
    # 0/5: center = (z²/10)/(1 + z²/5) = 0.384146/1.768293 = 0.217240 = half  ->  [0, 0.434480]
    none = wilson(0, 5)
    assert none.low == 0.0 and none.high == pytest.approx(0.434480, abs=1e-5)
    # 5/5: center + half = 1 exactly, low = 1/(1 + z²/5) = 1/1.768293 = 0.565518; never below the rate
    every = wilson(5, 5)
    assert every.high == 1.0 and every.low == pytest.approx(0.565518, abs=1e-5)
    for n in range(1, 200):
        rate = wilson(n, n)
        assert rate.low <= rate.value <= rate.high
    assert math.isnan(wilson(0, 0).value)
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_mcnemar_exact_two_sided():
    # discordant pairs: a-only 1, b-only 6 -> n = 7; P(X <= 1) = (C(7,0) + C(7,1)) / 2^7 = 8/128; p = 0.125
    a = [True] * 3 + [True] + [False] * 6 + [False] * 2
    b = [True] * 3 + [False] + [True] * 6 + [False] * 2
    result = mcnemar_exact(a, b)
    assert (result.only_a, result.only_b) == (1, 6)
    assert result.p_value == pytest.approx(0.125)
    assert not result.significant and result.p_text == "p = 0.125"


def test_mcnemar_significant_when_one_arm_wins_every_discordant_pair():
    # 0 vs 8: p = 2 · (1/2^8) = 0.0078125
    result = mcnemar_exact([False] * 8 + [True] * 2, [True] * 10)
    assert result.p_value == pytest.approx(0.0078125) and result.significant
    # 0 vs 12: p = 2/4096 = 0.000488 -> printed as a bound, not as 0.000
    assert mcnemar_exact([False] * 12, [True] * 12).p_text == "p < 0.001"
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0  # no discordant pair: no evidence


def test_pass_at_k_and_pass_hat_k():
    # n = 5, c = 2, k = 2: pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10; pass^2 = C(2,2)/C(5,2) = 1/10
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4) == pass_hat_k(5, 2, 1)  # k = 1: both are c/n
    assert pass_at_k(3, 2, 2) == 1.0  # fewer than k failures: some draw always succeeds
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_pass_k_averages_over_tasks():
    # tasks (n, c) = (3, 3), (3, 1), (3, 0), k = 2
    # pass@1 = (1 + 1/3 + 0)/3 = 4/9
    # pass@2 = (1 + [1 - C(2,2)/C(3,2) = 2/3] + 0)/3 = 5/9
    # pass^2 = (1 + [C(1,2) = 0] + 0)/3 = 1/3
    estimate = pass_k_over_tasks([(3, 3), (3, 1), (3, 0)], 2)
    assert (estimate.k, estimate.tasks) == (2, 3)
    assert estimate.pass_at_1 == pytest.approx(4 / 9)
    assert estimate.pass_at_k == pytest.approx(5 / 9)
    assert estimate.pass_hat_k == pytest.approx(1 / 3)
    assert estimate.pass_hat == pytest.approx((4 / 9, 1 / 3))  # pass^1 is pass@1


def test_paired_delta_of_two_pairs_spans_the_two_differences():
    # differences b - a = [3, -1]; a bootstrap mean is 3 (p = 1/4), 1 (p = 1/2) or -1 (p = 1/4), so the
    # 2.5th and 97.5th percentiles are -1 and 3; mean 1; relative = mean(b)/mean(a) - 1 = 16/15 - 1
    delta = paired_delta([10, 20], [13, 19], seed=7)
    assert delta.mean == pytest.approx(1.0)
    assert (delta.low, delta.high) == (pytest.approx(-1.0), pytest.approx(3.0))
    assert delta.relative == pytest.approx(1 / 15)
    assert not delta.significant


def test_paired_delta_of_a_constant_ratio():
    # b = a/10 for every task: mean difference = mean(1-10, 2-20, 3-30) = -18; relative = 2/20 - 1 = -0.9 in
    # every resample; the mean difference resamples lie between -27 and -9. The interval excludes zero, but
    # over 3 tasks the exact sign-flip test judges: p = 2/2^3 = 0.25, not significant
    delta = paired_delta([10, 20, 30], [1, 2, 3], seed=1)
    assert delta.mean == pytest.approx(-18.0)
    assert delta.relative == delta.relative_low == delta.relative_high == pytest.approx(-0.9)
    assert -27 <= delta.low < delta.high <= -9
    assert (delta.test, delta.p_value, delta.significant, delta.rough) == ("sign-flip", 0.25, False, True)


@pytest.mark.parametrize("differences, p", [([1, 1, 1, 1], 0.125), ([1] * 6, 0.03125), ([3, -1], 1.0),
                                            ([1, 2, 3, -1], 6 / 16), ([0, 0, 0], 1.0)])
def test_sign_flip_p_counts_the_flips_as_extreme_as_the_observed_sum(differences, p):
    # [1, 2, 3, -1]: sum 5; of the 16 flips, |sum| >= 5 for (+ + + +) 7, (+ + + -) 5, (- + + +) 5 and mirrors
    assert sign_flip_p(differences) == pytest.approx(p)


def test_twenty_tasks_or_more_are_judged_by_the_bootstrap_interval():
    a = [10.0 + t for t in range(20)]
    delta = paired_delta(a, [x - 2 for x in a])
    assert (delta.test, delta.rough) == ("bootstrap", False) and np.isnan(delta.p_value) and delta.significant
    few = paired_delta(a[:19], [x - 2 for x in a[:19]])
    assert few.test == "sign-flip" and few.p_value == pytest.approx(2 / 2 ** 19) and few.significant


def test_paired_delta_is_seeded_and_includes_zero_for_noise():
    a = [10, 12, 9, 11, 10, 13]
    b = [11, 11, 10, 10, 12, 12]
    assert paired_delta(a, b, seed=3) == paired_delta(a, b, seed=3)
    noisy = paired_delta(a, b, seed=3)
    assert noisy.low < 0 < noisy.high and not noisy.significant
    single = paired_delta([5], [2])
    assert (single.mean, single.n, single.significant) == (-3, 1, False)  # one pair: no spread to judge


def test_compare_runs_pairs_on_task_and_epoch_and_averages_per_task():
    # 4 tasks x 2 epochs. direct succeeds on t0, t2; codemode on all -> 4 discordant pairs, all for codemode:
    # McNemar p = 2/2^4 = 0.125; per-task success deltas [0, 1, 0, 1] -> mean +0.5.
    # tokens: direct 2000 + 500t = 2000..3500 (mean 2750), codemode 200 + 40t = 200..320 (mean 260):
    # mean delta -2490, relative 260/2750 - 1 = -0.905455; per-task changes -0.9, -0.904, -0.906667,
    # -0.908571 -> median (-0.904 - 0.906667)/2 = -0.905333. Latency -0.5 s and turns -2 on every task.
    # codemode t3 epoch 1 is cache-served: that pair leaves the latency delta (t3 keeps epoch 0).
    direct = frame(record("r", t, "direct", e, t % 2 == 0) for t in range(4) for e in range(2))
    code = frame(record("r", t, "codemode", e, True, cached=(t, e) == (3, 1)) for t in range(4) for e in range(2))
    c = compare_runs(direct, code, "direct", "codemode")
    assert (c.pairs, c.tasks, c.cache_excluded) == (8, 4, 1)
    assert (c.success_baseline.successes, c.success_candidate.successes) == (4, 8)
    assert (c.mcnemar.only_a, c.mcnemar.only_b) == (0, 4) and c.mcnemar.p_value == pytest.approx(0.125)
    assert c.success.mean == pytest.approx(0.5)
    assert c.tokens.mean == pytest.approx(-2490) and c.tokens.relative == pytest.approx(-0.905455, abs=1e-6)
    assert c.tokens_median_task_change == pytest.approx(-0.905333, abs=1e-6)
    assert c.latency.mean == pytest.approx(-0.5) and c.latency.n == 4
    assert (c.latency.test, c.latency.p_value, c.latency.significant) == ("sign-flip", 0.125, False)  # 4 tasks
    assert c.turns.mean == c.turns.low == c.turns.high == -2
    assert compare_runs(direct, frame([record("r", 9, "codemode", 0, True)]), "direct", "codemode") is None


def test_pair_runs_numbers_repeats_in_run_order():
    # t0 epoch 0 ran twice for a (runs r1, r2) and once for b: it pairs with the first repeat (r1)
    a = frame([record("r2", 0, "direct", 0, False), record("r1", 0, "direct", 0, True)])
    b = frame([record("r3", 0, "codemode", 0, True)])
    left, right = pair_runs(a, b, ["task_id", "epoch"])
    assert list(left["run_id"]) == ["r1"] and list(right["run_id"]) == ["r3"]


def test_group_labels_name_model_and_program_only_when_they_vary():
    one = frame([record("r", 0, "direct", 0, True), record("r", 0, "codemode", 0, True)])
    assert list(group_labels(one)) == ["direct", "codemode"]
    mixed = frame([record("r", 0, "codemode", 0, True, model="a"),
                   record("r", 0, "codemode", 0, True, model="b", program_hash="0123456789abcdef")])
    assert list(group_labels(mixed)) == ["codemode · a · built-in prompt", "codemode · b · program 01234567"]


def test_a_row_from_before_tool_latency_was_recorded_counts_as_none_added():
    rows = frame([record("r", 0, "direct", 0, True), record("r", 1, "direct", 0, True, tool_latency_s=0.2)])
    rows.loc[0, "tool_latency_s"] = None
    assert list(tool_latency(rows)) == [0.0, 0.2]
    assert list(group_labels(rows)) == ["direct · 0 s tool latency", "direct · 0.2 s tool latency"]


def test_weighted_paired_delta_is_the_per_run_mean():
    # per-task means with 2 and 1 runs: differences [1, 4] -> weighted mean (2·1 + 1·4)/3 = 2;
    # relative: a = (2·10 + 20)/3 = 13.333, b = (2·11 + 24)/3 = 15.333 -> 15.333/13.333 - 1 = 0.15.
    # Resamples: both tasks once -> 2, task 1 twice -> 1, task 2 twice -> 4: interval [1, 4]
    delta = paired_delta([10, 20], [11, 24], weights=[2, 1], seed=5)
    assert delta.mean == pytest.approx(2.0) and delta.relative == pytest.approx(0.15)
    assert (delta.low, delta.high) == (pytest.approx(1.0), pytest.approx(4.0))
    with pytest.raises(ValueError):
        paired_delta([1, 2], [1, 2], weights=[1])


def test_compare_runs_success_delta_matches_the_per_run_rates():
    # t0 ran in 2 epochs (direct fails both, codemode succeeds both), t1 in 1 (both succeed):
    # direct 1/3, codemode 3/3 -> +2/3 per run (an unweighted mean over tasks would say (1 + 0)/2)
    direct = frame([record("r", 0, "direct", 0, False), record("r", 0, "direct", 1, False),
                    record("r", 1, "direct", 0, True)])
    code = frame([record("r", 0, "codemode", 0, True), record("r", 0, "codemode", 1, True),
                  record("r", 1, "codemode", 0, True)])
    c = compare_runs(direct, code, "direct", "codemode")
    assert c.success.mean == pytest.approx(c.success_candidate.value - c.success_baseline.value) == pytest.approx(2 / 3)


def test_a_comparison_says_whether_its_latency_pairs_ran_next_to_each_other():
    from datetime import timedelta

    from harness.analysis.prose import paired_in_time
    from harness.analysis.stats import compare_runs
    from tests.results_factory import record

    def rows(run_id: str, arm: str, hours: float) -> pd.DataFrame:
        records = [record(run_id, t, arm, 0, True) for t in range(3)]
        frame = pd.DataFrame([r.to_row() for r in records])
        frame["started_at"] = frame["started_at"] + timedelta(hours=hours)
        return frame

    together = compare_runs(rows("one", "direct", 0), rows("one", "codemode", 0), "direct", "codemode")
    assert together.same_run and together.start_gap_s == 0
    assert paired_in_time(together).startswith("Its latency pairs were paired in time")
    apart = compare_runs(rows("monday", "direct", 0), rows("tuesday", "codemode", 24), "direct", "codemode")
    assert not apart.same_run and apart.start_gap_s == 24 * 3600
    assert paired_in_time(apart) == ("Its latency pairs were not paired in time (they come from different runs, median "
                                     "24.0 h apart): drift between those runs is part of this latency difference.")
