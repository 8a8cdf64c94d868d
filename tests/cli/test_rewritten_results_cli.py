"""A results file filtered in pandas and written back (`df.to_parquet`) loses the harness's schema metadata but
keeps every column: `harness report` and `harness gate` read it like the original."""

import pandas as pd
import pytest

from tests.cli.helpers import harness
from tests.results_factory import write_results

pytestmark = pytest.mark.cli  # runs the harness command in a subprocess, as a user would


def test_report_and_gate_accept_a_results_file_rewritten_by_pandas(tmp_path):
    original = write_results(tmp_path / "r", "run1", {"direct": [True, False], "codemode": [True]})
    frame = pd.read_parquet(original)
    rewritten = tmp_path / "first-tasks.parquet"
    frame[frame.task_id.isin(["t0", "t1", "t2"])].to_parquet(rewritten)

    report = harness("report", str(rewritten), "--out", str(tmp_path / "report"), env={"MPLBACKEND": "Agg"})
    assert report.returncode == 0, report.stdout + report.stderr
    assert "codemode vs direct" in report.stdout and (tmp_path / "report" / "report.md").exists()
    gate = harness("gate", str(rewritten), "--min-success", "codemode=0.5", "--baseline", str(original))
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "3 passed, 0 failed" in gate.stdout  # the threshold and a baseline check per arm
