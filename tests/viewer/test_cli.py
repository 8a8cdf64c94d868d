"""`harness view` and the viewer `harness report` writes, run as a user would; the run limits on `harness run`."""

import re
import subprocess
import sys
import urllib.request

import pytest

from tests.cli.helpers import ROOT, harness
from tests.results_factory import write_results
from tests.viewer.test_data import store_with

pytestmark = pytest.mark.cli  # runs the harness command in a subprocess, as a user would


def test_view_out_writes_a_static_copy_linked_to_a_report(tmp_path):
    store_with(tmp_path / "results", ["t1/direct/m/0"])
    (tmp_path / "report.html").write_text("<html></html>")
    done = harness("view", str(tmp_path / "results"), "--out", str(tmp_path / "site"),
                   "--report", str(tmp_path / "report.html"))
    assert done.returncode == 0, done.stderr
    assert "1 runs written to" in done.stdout
    assert '"report": "../report.html"' in (tmp_path / "site" / "data" / "runs.js").read_text()


def test_view_of_nothing_or_a_missing_report_is_one_line(tmp_path):
    done = harness("view", str(tmp_path / "nothing"))
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0 and "no such results file" in done.stderr
    store_with(tmp_path / "results", ["t1/direct/m/0"])
    done = harness("view", str(tmp_path / "results"), "--report", str(tmp_path / "none.html"))
    assert done.returncode == 2 and "no such report file" in done.stderr


def test_view_serves_on_localhost_and_prints_the_url(tmp_path):
    store_with(tmp_path / "results", ["t1/direct/m/0"])
    process = subprocess.Popen([sys.executable, "-c", "from harness.cli import main; main()", "view",
                                str(tmp_path / "results"), "--port", "0"], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/viewer/", line).group(0)
        with urllib.request.urlopen(url + "data/runs.js", timeout=10) as response:
            assert b'"sample_id": "t1/direct/m/0"' in response.read()
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_report_writes_the_viewer_and_links_each_task_to_it(tmp_path):
    path = write_results(tmp_path / "r", "run", {"direct": [True, False], "codemode": [True]}, tasks=2, epochs=1)
    done = harness("report", str(path), "--out", str(tmp_path / "report"))
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "report" / "report.html").read_text()
    assert "href='viewer/index.html'" in page and "href='viewer/index.html#/task/t0?suite=core'" in page
    assert (tmp_path / "report" / "viewer" / "index.html").exists()
    assert '"report": "../report.html"' in (tmp_path / "report" / "viewer" / "data" / "runs.js").read_text()
    assert "cost per success (USD)" in (tmp_path / "report" / "report.md").read_text()


@pytest.mark.sandbox  # scripted:reference traces each reference in the sandbox
def test_run_with_a_token_limit_records_token_limit_rows(tmp_path):
    done = harness("run", "--suite", "smoke", "--arms", "direct", "--model", "scripted:reference",
                   "--max-tokens-per-run", "100", "--out", str(tmp_path), "--run-id", "lim")
    assert done.returncode == 0, done.stderr
    from harness.run.records import read_results

    frame = read_results([tmp_path])
    assert (frame.error_type == "token_limit").all() and (frame.llm_calls == 1).all()
    assert (frame.cost_usd == 0).all() and (frame.total_tokens > 100).all()
