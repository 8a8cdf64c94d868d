"""Gate checks on synthetic results: thresholds per arm (and model), baseline regressions, JUnit XML."""

from xml.etree import ElementTree

import pandas as pd
import pytest

from harness.analysis.gate import (
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


def test_a_drop_beyond_max_drop_fails_and_says_whether_it_is_significant():
    # 8 tasks; before all passed; now direct fails 2 (drop 25 points, 2 discordant pairs: p = 2/2^2 = 0.5),
    # codemode fails none (drop 0). Wilson 8/8: low = 1/(1 + z²/8) = 1/1.480182 = 0.675593; 6/8: center =
    # (0.75 + z²/16)/1.480182 = 0.668898, half = z·sqrt(0.1875/8 + z²/256)/1.480182 = 0.259621 -> [40.9%, 92.9%]
    before = frame(runs("direct", [True] * 8, run_id="old") + runs("codemode", [True] * 8, run_id="old"))
    now = frame(runs("direct", [True] * 6 + [False] * 2) + runs("codemode", [True] * 8))
    direct, code = baseline_checks(now, before, 0.05)
    assert not direct.passed and code.passed
    assert direct.message == ("direct: success 75.0% [40.9%, 92.9%] vs baseline 100.0% [67.6%, 100.0%] on 8 paired "
                              "runs: drop +25.0 points, allowed 5.0 (exact McNemar p = 0.500, not significant)")
    assert baseline_checks(now, before, 0.25)[0].passed  # a drop equal to the allowance holds


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
    assert not check.passed and "on 2 paired runs: drop +50.0 points" in check.message


def test_tasks_edited_since_the_baseline_are_left_out_and_named():
    before = frame(runs("direct", [True] * 4, run_id="old"))
    edited = [record("now", t, "direct", 0, t != 3, task_hash="hash-t3-edited" if t == 3 else None) for t in range(4)]
    note, check = baseline_checks(frame(edited), before, 0.05)
    assert note.skipped and note.passed
    assert note.message == ("1 task(s) changed since the baseline (different task_hash), left out of the "
                            "comparison: t3")
    assert check.passed and "on 3 paired runs: drop +0.0 points" in check.message  # t3's failure not counted


def test_rows_without_a_task_hash_pair_as_before():
    before = frame([record("old", t, "direct", 0, True, task_hash="") for t in range(2)])  # written by schema v1
    (check,) = baseline_checks(frame(runs("direct", [True, False])), before, 0.05)
    assert "on 2 paired runs: drop +50.0 points" in check.message


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
    checks = run_gate(now, ["direct=0.5", "codemode=0.9"], before, 0.1, junit)
    root = ElementTree.parse(junit).getroot()
    suite = root.find("testsuite")
    assert root.tag == "testsuites" and root.get("tests") == suite.get("tests") == "4"
    assert (suite.get("failures"), suite.get("skipped")) == ("1", "1")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [c.name for c in checks] == [
        "direct success >= 50%", "codemode success >= 90%", "direct drop vs baseline <= 10%", "codemode vs baseline"]
    assert cases[2].find("failure").get("message").startswith("direct: success 50.0%")
    assert cases[3].find("skipped") is not None
    assert ElementTree.tostring(junit_xml(checks[:2]).getroot()).count(b"<testcase") == 2


@pytest.mark.parametrize("thresholds, baseline, max_drop, fragment", [
    ([], None, 0.05, "nothing to check"),
    (["direct=0.5"], None, 1.5, "--max-drop 1.5 must be between 0 and 1"),
])
def test_run_gate_usage_errors(thresholds, baseline, max_drop, fragment):
    with pytest.raises(UserError, match=fragment):
        run_gate(frame(runs("direct", [True])), thresholds, baseline, max_drop, None)
