from xml.etree import ElementTree

import pytest

from tests.cli.helpers import harness
from tests.results_factory import write_results


@pytest.fixture
def results(tmp_path):
    return write_results(tmp_path / "now", "now", {"direct": [True, False], "codemode": [True, True, True]})


def test_thresholds_that_hold_exit_0_and_write_junit(results, tmp_path):
    junit = tmp_path / "gate.xml"
    result = harness("gate", str(results), "--min-success", "codemode=0.9", "--min-success", "direct=0.5",
                     "--junit", str(junit))
    assert result.returncode == 0, result.stdout + result.stderr
    suite = ElementTree.parse(junit).getroot()
    assert suite.get("tests") == "2" and suite.get("failures") == "0"
    assert len(suite.findall("testcase")) == 2


def test_a_failed_threshold_exits_1_with_one_line_naming_arm_rate_and_threshold(results, tmp_path):
    junit = tmp_path / "gate.xml"
    result = harness("gate", str(results), "--min-success", "direct=0.8", "--junit", str(junit))
    assert result.returncode == 1
    line = next(line for line in result.stdout.splitlines() if line.startswith("FAIL"))
    assert "direct: success 50.0% [" in line and "below the threshold 80%" in line
    assert ElementTree.parse(junit).getroot().find("testcase/failure") is not None


def test_a_regression_against_the_baseline_fails(results, tmp_path):
    better = write_results(tmp_path / "before", "before", {"direct": [True], "codemode": [True]})
    result = harness("gate", str(results), "--baseline", str(better), "--max-drop", "0.05")
    assert result.returncode == 1
    assert "direct: success 50.0% vs baseline 100.0% on 12 paired runs (drop +50.0 points" in result.stdout
    # 3 of 6 tasks fail now in each of 2 epochs, all passed before: 6 discordant pairs, p = 2 / 2^6 = 0.031
    assert "McNemar p = 0.031, significant" in result.stdout
    assert "PASS  codemode" in result.stdout


@pytest.mark.parametrize("args, fragment", [
    (("--min-success", "codemode"), "expected ARM=RATE"),
    (("--min-success", "codemode=high"), "is not a number"),
    (("--min-success", "codemode=1.5"), "between 0 and 1"),
    (("--min-success", "nosuch=0.5"), "arm 'nosuch'"),
    ((), "nothing to check"),
])
def test_usage_errors_exit_2_in_one_line(results, args, fragment):
    result = harness("gate", str(results), *args)
    assert result.returncode == 2 and fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_foreign_file_is_a_usage_error(tmp_path):
    bogus = tmp_path / "x.parquet"
    bogus.write_text("not parquet")
    result = harness("gate", str(bogus), "--min-success", "direct=0.5")
    assert result.returncode == 2 and "not a readable Parquet file" in result.stderr
