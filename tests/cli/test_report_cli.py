"""`harness report` through the real console entry point."""

import pytest

from tests.cli.helpers import harness
from tests.results_factory import write_results

pytestmark = pytest.mark.cli  # runs the harness command in a subprocess, as a user would


def test_report_writes_its_files_and_prints_the_answer(tmp_path):
    path = write_results(tmp_path / "r", "run1", {"direct": [True, False], "codemode": [True]})
    out = tmp_path / "reports" / "core"
    result = harness("report", str(path.parent), "--out", str(out), "--title", "Core, scripted",
                     env={"MPLBACKEND": "Agg"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "codemode vs direct" in result.stdout and f"html:    {out / 'report.html'}" in result.stdout
    assert (out / "report.md").read_text().startswith("# Core, scripted")
    assert sorted(p.name for p in out.glob("*.png")) == ["latency_by_arm.png", "success_by_arm.png",
                                                         "token_breakdown.png", "tokens_paired.png"]


def test_report_of_nothing_is_a_usage_error(tmp_path):
    (tmp_path / "empty").mkdir()
    result = harness("report", str(tmp_path / "empty"), "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "no results files" in result.stderr
