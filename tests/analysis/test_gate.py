"""Gate checks on synthetic results: thresholds per arm (and model), baseline regressions, JUnit XML."""

from xml.etree import ElementTree

import pandas as pd
import pytest

from harness.analysis.gate import (
    GateRule,
    Threshold,
    baseline_checks,
    junit_xml,
    parse_threshold,
    run_gate,
    threshold_checks,
)
from harness.errors import UserError
from tests.results_factory import record


def frame(records) -> pd.DataFrame:
    return pd.DataFrame([r.to_row() for r in records])


def runs(arm: str, outcomes: list[bool], model: str = "m", run_id: str = "now") -> list:
    return [record(run_id, t, arm, 0, ok, model=model) for t, ok in enumerate(outcomes)]


@pytest.mark.parametrize("expression, expected", [("codemode=0.7", Threshold("codemode", 0.7)),
                                                  (" direct = 1 ", Threshold("direct", 1.0)),
                                                  ("codemode-discover=0", Threshold("codemode-discover", 0.0))])
def test_parse_threshold(expression, expected):
    assert parse_threshold(expression) == expected


@pytest.mark.parametrize("expression, fragment", [("codemode", "expected ARM=RATE"), ("=0.5", "expected ARM=RATE"),
                                                  ("codemode=high", "is not a number"),
                                                  ("codemode=1.5", "between 0 and 1"),
                                                  ("codemode=-0.1", "between 0 and 1")])
def test_bad_thresholds_are_user_errors(expression, fragment):
    with pytest.raises(UserError, match=fragment):
        parse_threshold(expression)


def test_threshold_holds_at_equality_and_fails_below():
    # 3 of 4: Wilson d = 1 + z²/4 = 1.960365, center = (0.75 + z²/8)/d = 1.230182/1.960365 = 0.627527,
    # half = z·sqrt(0.75·0.25/4 + z²/64)/d = 1.959964 · 0.326953/1.960365 = 0.326886  ->  [30.1%, 95.4%]
    results = frame(runs("codemode", [True, True, True, False]))
    exact, above = threshold_checks(results, [Threshold("codemode", 0.75), Threshold("codemode", 0.8)])
    assert exact.passed and exact.measured == "75.0% [30.1%, 95.4%]"
    assert not above.passed
    assert above.message == "codemode: success 75.0% [30.1%, 95.4%] over 4 runs is below the threshold 80%"


def test_a_threshold_holds_for_every_model_of_its_arm():
    results = frame(runs("codemode", [True, True], model="a") + runs("codemode", [True, False], model="b"))
    checks = threshold_checks(results, [Threshold("codemode", 0.75)])
    assert [(c.name, c.passed) for c in checks] == [("codemode · a success >= 75%", True),
                                                    ("codemode · b success >= 75%", False)]


def test_an_unknown_arm_is_a_user_error():
    with pytest.raises(UserError, match="arm 'code', which is not in the results \\(arms: direct, codemode\\)"):
        threshold_checks(frame(runs("codemode", [True]) + runs("direct", [True])), [Threshold("code", 0.5)])


def test_a_drop_beyond_max_drop_that_is_not_significant_holds_and_says_what_the_suite_can_detect():
    # 8 tasks; before all passed; now direct fails 2 (drop 25 points). Task-level differences -1, -1 and six 0:
    # under sign flips the sum is -2, 0, 0 or +2, so P(S <= -2) = 1/4. Their sd = sqrt((6·0.0625 + 2·0.5625)/7)
    # = 0.4629, from a baseline at 100%: even a 100-point drop misses the margin (sqrt(8) - 1/sqrt(8) - t[.95,7] ·
    # sqrt(0.2143 + 1) - t[.8,7] · 0.4629 = 2.474 - 2.088 - 0.415 < 0), so only a drop on every task is detectable.
    # Wilson 8/8: low = 1/(1 + z²/8) = 0.675593; 6/8 -> [40.9%, 92.9%].
    before = frame(runs("direct", [True] * 8, run_id="old") + runs("codemode", [True] * 8, run_id="old"))
    now = frame(runs("direct", [True] * 6 + [False] * 2) + runs("codemode", [True] * 8))
    direct, code = baseline_checks(now, before, 0.05)
    assert direct.passed and code.passed and direct.note == "underpowered"
    assert direct.message == (
        "direct: success 75.0% [40.9%, 92.9%] vs baseline 100.0% [67.6%, 100.0%] on 8 paired runs (8 tasks x 1 "
        "epoch(s)): drop +25.0 points, allowed 5.0; paired sign-flip test over tasks (one-sided) p = 0.250, not "
        "significant at alpha 0.05: holds under significant-drop; this suite detects a drop of 100.0 points (80% "
        "power, alpha 0.05), so it cannot detect the allowed 5.0")
    older = GateRule(max_drop=0.05, rule="measured-drop")
    assert not baseline_checks(now, before, 0.05, rule=older)[0].passed  # the older rule: the drop alone
    assert baseline_checks(now, before, 0.25, rule=GateRule(max_drop=0.25, rule="measured-drop"))[0].passed


def test_a_significant_drop_beyond_max_drop_fails():
    # every one of 8 tasks drops: P(S <= -8) = 1/2^8 = 0.0039
    before = frame(runs("direct", [True] * 8, run_id="old"))
    (check,) = baseline_checks(frame(runs("direct", [False] * 8)), before, 0.05)
    assert not check.passed and "(one-sided) p = 0.004, significant at alpha 0.05: fails" in check.message


def test_the_epochs_of_one_task_count_as_one_unit_not_as_independent_pairs():
    # one of 3 tasks fails all 4 epochs now: McNemar over epochs would see 4 discordant pairs (one-sided p = 1/16),
    # the clustered test one task (units -4, 0, 0: P(S <= -4) = 1/2)
    before = frame([record("old", t, "direct", e, True) for t in range(3) for e in range(4)])
    now = frame([record("now", t, "direct", e, t != 0) for t in range(3) for e in range(4)])
    (check,) = baseline_checks(now, before, 0.05)
    assert check.passed and "3 tasks x 4 epoch(s)" in check.message and "p = 0.500" in check.message


def test_an_allowance_the_suite_cannot_detect_fails_when_detectability_is_required():
    before = frame(runs("direct", [True] * 8, run_id="old"))
    now = frame(runs("direct", [True] * 8))
    (check,) = baseline_checks(now, before, 0.05, rule=GateRule(max_drop=0.05, require_detectable=True))
    assert not check.passed and check.note == "underpowered" and "(--require-detectable)" in check.message
    (wide,) = baseline_checks(now, before, 0.9, rule=GateRule(max_drop=0.9, require_detectable=True))
    assert wide.passed and not wide.note  # 85.6 points detectable (no spread, from 100%), 90 allowed


def test_min_success_can_hold_against_the_lower_confidence_bound():
    # 3 of 4 tasks, one epoch (design effect 1): one-sided 95% Wilson lower bound, z = 1.644854: d = 1 + z²/4 =
    # 1.676386, center = (0.75 + z²/8)/d = 0.649132, half = z·sqrt(0.1875/4 + z²/64)/d = 0.292963 -> 0.356169
    results = frame(runs("codemode", [True, True, True, False]))
    lower = GateRule(success_bound="lower-bound")
    passes, fails = threshold_checks(results, [Threshold("codemode", 0.35), Threshold("codemode", 0.4)], lower)
    assert passes.passed and not fails.passed
    assert "(its lower 95% confidence bound 35.6%, over 4 runs / design effect 1.00)" in fails.message
    assert threshold_checks(results, [Threshold("codemode", 0.4)])[0].passed  # the estimate, 75%, meets it


def test_the_lower_bound_counts_epochs_of_one_task_by_their_design_effect():
    # 2 tasks x 2 epochs, one task always passes, the other always fails: ICC 1, design effect 2, so the 4 runs
    # count as 2: the bound is that of 1 success in 2, not 2 in 4
    results = frame([record("now", t, "codemode", e, t == 0) for t in range(2) for e in range(2)])
    (check,) = threshold_checks(results, [Threshold("codemode", 0.0)], GateRule(success_bound="lower-bound"))
    assert "over 4 runs / design effect 2.00" in check.message


def test_baseline_pairs_on_task_arm_epoch_and_skips_arms_it_lacks():
    before = frame(runs("direct", [True, True, False], run_id="old")[:2])  # t0, t1 only
    now = frame(runs("direct", [False, True, True]) + runs("codemode", [True]))
    direct, skipped = baseline_checks(now, before, 0.05)
    assert skipped.skipped and skipped.passed and "codemode: no runs paired" in skipped.message
    assert "on 2 paired runs" in direct.message  # t2 has no baseline
    with pytest.raises(UserError, match="shares no runs"):
        baseline_checks(now, frame([record("old", 9, "direct", 0, True)]), 0.05)


def test_a_new_model_is_compared_with_the_baseline_on_the_same_tasks():
    before = frame(runs("direct", [True, True], model="old-model", run_id="old"))
    now = frame(runs("direct", [True, False], model="new-model"))
    (check,) = baseline_checks(now, before, 0.05)
    assert check.passed and "on 2 paired runs (2 tasks x 1 epoch(s)): drop +50.0 points" in check.message
    assert "over 2 tasks no drop can be significant at alpha 0.05 (5 tasks needed)" in check.message


def test_tasks_edited_since_the_baseline_are_left_out_and_named():
    before = frame(runs("direct", [True] * 4, run_id="old"))
    edited = [record("now", t, "direct", 0, t != 3, task_hash="hash-t3-edited" if t == 3 else None) for t in range(4)]
    note, check = baseline_checks(frame(edited), before, 0.05)
    assert note.skipped and note.passed
    assert note.message == ("1 task(s) changed since the baseline (different task_hash), left out of the "
                            "comparison: t3")
    assert check.passed and "on 3 paired runs (3 tasks x 1 epoch(s)): drop +0.0 points" in check.message  # t3's failure not counted


def test_rows_without_a_task_hash_pair_as_before():
    before = frame([record("old", t, "direct", 0, True, task_hash="") for t in range(2)])  # written by schema v1
    (check,) = baseline_checks(frame(runs("direct", [True, False])), before, 0.05)
    assert "on 2 paired runs (2 tasks x 1 epoch(s)): drop +50.0 points" in check.message


def test_runs_under_another_scaffold_are_refused_unless_allowed():
    before = frame([record("old", t, "direct", 0, True, scaffold_hash="guidedhash000000") for t in range(2)])
    now = frame(runs("direct", [True, True]))
    with pytest.raises(UserError, match="different scaffolds .*--allow-scaffold-change"):
        baseline_checks(now, before, 0.05)
    note, check = baseline_checks(now, before, 0.05, allow_scaffold_change=True)
    assert note.skipped and "scaffold changed since the baseline (allowed)" in note.message and check.passed


def test_rows_without_a_scaffold_hash_pair_as_before():
    before = frame([record("old", t, "direct", 0, True, scaffold_hash="") for t in range(2)])  # written by schema v4
    (check,) = baseline_checks(frame(runs("direct", [True, True])), before, 0.05)
    assert check.passed


def test_junit_has_one_testcase_per_check_with_failures_and_skips(tmp_path):
    before = frame(runs("direct", [True] * 4, run_id="old"))
    now = frame(runs("direct", [True, True, False, False]) + runs("codemode", [True] * 4))
    junit = tmp_path / "out" / "gate.xml"
    checks = run_gate(now, ["direct=0.5", "codemode=0.9"], before, 0.1, junit, rule="measured-drop")
    root = ElementTree.parse(junit).getroot()
    suite = root.find("testsuite")
    assert root.tag == "testsuites" and root.get("tests") == suite.get("tests") == "4"
    assert (suite.get("failures"), suite.get("skipped")) == ("1", "1")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [c.name for c in checks] == [
        "direct success >= 50%", "codemode success >= 90%", "direct drop vs baseline <= 10%", "codemode vs baseline"]
    assert cases[2].find("failure").get("message").startswith("direct: success 50.0%")
    properties = {p.get("name"): p.get("value") for p in cases[2].iter("property")}
    assert properties["underpowered"] == "true" and properties["rule"] == "measured-drop"
    assert cases[3].find("skipped") is not None
    assert ElementTree.tostring(junit_xml(checks[:2]).getroot()).count(b"<testcase") == 2


@pytest.mark.parametrize("thresholds, baseline, max_drop, fragment", [
    ([], None, 0.05, "nothing to check"),
    (["direct=0.5"], None, 1.5, "--max-drop 1.5 must be between 0 and 1"),
])
def test_run_gate_usage_errors(thresholds, baseline, max_drop, fragment):
    with pytest.raises(UserError, match=fragment):
        run_gate(frame(runs("direct", [True])), thresholds, baseline, max_drop, None)


@pytest.mark.parametrize("options, fragment", [({"alpha": 0.0}, "--alpha 0.0 must be between 0 and 0.5"),
                                               ({"power": 1.0}, "--power 1.0 must be at least 0.5"),
                                               ({"rule": "drop"}, "--rule drop: expected one of significant-drop"),
                                               ({"success_bound": "low"}, "--min-success-bound low: expected one")])
def test_bad_gate_options_are_user_errors(options, fragment):
    with pytest.raises(UserError, match=fragment):
        run_gate(frame(runs("direct", [True])), ["direct=0.5"], None, 0.05, None, **options)
