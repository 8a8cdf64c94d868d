"""`harness gate` through the real console entry point: exit codes 0/1/2, the printed table, JUnit XML."""

from xml.etree import ElementTree

import pytest

from tests.cli.helpers import harness
from tests.results_factory import write_results

pytestmark = pytest.mark.cli  # runs the harness command in a subprocess, as a user would


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    # 6 tasks x 2 epochs; direct succeeds on t0, t2, t4 (50%), codemode on all
    return write_results(tmp_path_factory.mktemp("now"), "now", {"direct": [True, False], "codemode": [True]})


def test_thresholds_that_hold_exit_0_print_a_table_and_write_junit(results, tmp_path):
    junit = tmp_path / "gate.xml"
    result = harness("gate", str(results), "--min-success", "codemode=0.9", "--min-success", "direct=0.5",
                     "--junit", str(junit))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "direct success >= 50%" in result.stdout and "50.0% [25.4%, 74.6%]" in result.stdout
    assert "2 passed, 0 failed" in result.stdout and "FAIL" not in result.stdout
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "0"
    assert len(suite.findall("testcase")) == 2


def test_a_failed_threshold_exits_1_with_one_line_naming_arm_rate_and_threshold(results, tmp_path):
    junit = tmp_path / "gate.xml"
    result = harness("gate", str(results), "--min-success", "direct=0.8", "--min-success", "codemode=0.8",
                     "--junit", str(junit))
    assert result.returncode == 1
    failures = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert failures == ["FAIL  direct: success 50.0% [25.4%, 74.6%] over 12 runs is below the threshold 80%"]
    cases = ElementTree.parse(junit).getroot().findall("testsuite/testcase")
    assert [case.find("failure") is not None for case in cases] == [True, False]


def test_a_regression_fails_only_when_significant_unless_the_measured_drop_rule_is_asked(results, tmp_path):
    better = write_results(tmp_path / "before", "before", {"direct": [True], "codemode": [True]})
    result = harness("gate", str(results), "--baseline", str(better), "--max-drop", "0.05")
    # 3 of 6 tasks fail now in each of 2 epochs, all passed before: 6 discordant pairs (McNemar would say p = 0.031)
    # but 3 tasks: units -2, -2, -2 and three 0, P(S <= -6) = 1/8
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("NOTE  direct: success 50.0% [25.4%, 74.6%] vs baseline 100.0% [75.8%, 100.0%] on 12 paired runs (6 tasks "
            "x 2 epoch(s)): drop +50.0 points, allowed 5.0; paired sign-flip test over tasks (one-sided) p = 0.125, not "
            "significant at alpha 0.05: holds under significant-drop; this suite detects a drop of") in result.stdout
    assert "PASS (underpowered)" in result.stdout and "2 passed, 0 failed" in result.stdout
    older = harness("gate", str(results), "--baseline", str(better), "--max-drop", "0.05", "--rule", "measured-drop")
    assert older.returncode == 1 and "FAIL  direct: success 50.0%" in older.stdout
    assert "fails under measured-drop" in older.stdout and "1 passed, 1 failed" in older.stdout
    strict = harness("gate", str(results), "--baseline", str(better), "--require-detectable")
    assert strict.returncode == 1 and "(--require-detectable)" in strict.stdout


def test_a_baseline_under_another_scaffold_is_refused_unless_allowed(results, tmp_path):
    other = write_results(tmp_path / "before", "before", {"direct": [True, False], "codemode": [True]},
                          scaffold_hash="guidedhash000000")
    refused = harness("gate", str(results), "--baseline", str(other))
    assert refused.returncode == 2 and "different scaffolds" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    allowed = harness("gate", str(results), "--baseline", str(other), "--allow-scaffold-change")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "scaffold changed since the baseline" in allowed.stdout


def test_no_regression_against_itself_exits_0(results):
    result = harness("gate", str(results), "--baseline", str(results))
    assert result.returncode == 0 and "2 passed, 0 failed" in result.stdout


@pytest.mark.parametrize("args, fragment", [
    (("--min-success", "codemode"), "expected ARM=RATE"),
    (("--min-success", "codemode=high"), "is not a number"),
    (("--min-success", "codemode=1.5"), "between 0 and 1"),
    (("--min-success", "nosuch=0.5"), "arm 'nosuch'"),
    (("--min-success", "direct=0.5", "--max-drop", "2"), "'--max-drop': Input should be less than or equal to 1"),
    (("--min-success", "direct=0.5", "--rule", "strict"), "--rule strict: expected one of significant-drop"),
    (("--baseline", "/nonexistent/old.parquet"), "no such results file"),
    ((), "nothing to check"),
])
def test_usage_errors_exit_2_in_one_line(results, args, fragment):
    result = harness("gate", str(results), *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_foreign_file_is_a_usage_error(tmp_path):
    bogus = tmp_path / "x.parquet"
    bogus.write_text("not parquet")
    result = harness("gate", str(bogus), "--min-success", "direct=0.5")
    assert result.returncode == 2 and "not a readable Parquet file" in result.stderr
