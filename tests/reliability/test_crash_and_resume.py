"""Kill a real `harness run` process (SIGKILL mid-run, SIGINT for Ctrl-C), then resume: nothing lost,
nothing duplicated, no corrupt file."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from harness.run.records import read_results
from harness.trace.transcript_file import read_transcript_files
from tests.cli.helpers import ROOT, harness

pytestmark = pytest.mark.integration
TASKS = 30


def write_suite(tmp_path: Path) -> Path:
    tasks = "\n".join(f"""
  - id: t{i:02d}
    category: lookup
    prompt: "Country of C-{i + 1:04d}?"
    expected: XX
    scorer: exact
    reference: print(get_customer(customer_id="C-{i + 1:04d}")["country"])""" for i in range(TASKS))
    path = tmp_path / "many.yaml"
    path.write_text(f"suite: many\nservers: [crm]\ntasks:{tasks}\n")
    return path


def start_run(suite: Path, out: Path, run_id: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", "from harness.cli import main; main()", "run", "--suite", str(suite), "--arms", "direct",
         "--model", "scripted:garbage", "--out", str(out), "--run-id", run_id],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # a garbage reply ends a direct run in 2 calls: 0.2 s each keeps the 30 runs going for ~12 s, long after
        # the signal is sent (at 0.05 s the whole suite could finish before it arrived)
        env={**os.environ, "HARNESS_SCRIPTED_LATENCY_S": "0.2"})


def wait_for_rows(path: Path, at_least: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            try:
                if pq.read_metadata(path).num_rows >= at_least:
                    return
            except Exception:
                pass
        time.sleep(0.05)
    raise AssertionError(f"{path} never reached {at_least} rows")


def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path):
    suite, out = write_suite(tmp_path), tmp_path / "out"
    results = out / "many" / "crash.parquet"
    process = start_run(suite, out, "crash")
    wait_for_rows(results, 3)
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    partial = read_results([results])  # the file is whole, whatever moment the kill hit
    assert 3 <= len(partial) < TASKS
    resumed = harness("run", "--resume", "crash", "--out", str(out))
    assert resumed.returncode == 0, resumed.stderr
    frame = read_results([results])
    assert sorted(frame.task_id) == [f"t{i:02d}" for i in range(TASKS)]
    assert frame.sample_id.is_unique
    assert not list(results.parent.glob(".*.tmp"))


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_flushes_rows_and_prints_the_resume_command(tmp_path, stop):
    suite, out = write_suite(tmp_path), tmp_path / "out"
    process = start_run(suite, out, "intr")
    wait_for_rows(out / "many" / "intr.parquet", 2)
    process.send_signal(stop)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "resume with: harness run --resume intr" in stderr
    saved = read_results([out / "many" / "intr.parquet"])
    assert 2 <= len(saved) < TASKS and saved.sample_id.is_unique


def test_resume_of_an_unknown_run_is_a_one_line_error(tmp_path):
    result = harness("run", "--resume", "nope", "--out", str(tmp_path))
    assert result.returncode == 2 and "no run 'nope'" in result.stderr


def finished_and_in_flight(folder: Path) -> tuple[dict[str, dict], set[str]]:
    """The runs whose transcript file has its end line (sample -> the row it kept), and those without one."""
    found = read_transcript_files(folder)
    return ({f.sample_id: f.end["row"] for f in found if f.end}, {f.sample_id for f in found if f.end is None})


def test_sigkill_keeps_every_finished_runs_row_and_runs_the_runs_in_flight_again(tmp_path):
    suite, out = write_suite(tmp_path), tmp_path / "out"
    folder = out / "many" / "kill.transcripts"
    process = subprocess.Popen(
        [sys.executable, "-c", "from harness.cli import main; main()", "run", "--suite", str(suite), "--arms", "direct",
         "--model", "scripted:garbage", "--out", str(out), "--run-id", "kill", "--max-concurrency", "2"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "HARNESS_SCRIPTED_LATENCY_S": "0.2"})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # kill once some runs finished while others are mid-run (events on disk)
        finished, in_flight = finished_and_in_flight(folder)
        if len(finished) >= 3 and any(f.events for f in read_transcript_files(folder) if f.sample_id in in_flight):
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    process.wait(10)
    finished, in_flight = finished_and_in_flight(folder)
    assert len(finished) >= 3 and in_flight and len(finished) < TASKS
    resumed = harness("run", "--resume", "kill", "--out", str(out))
    assert resumed.returncode == 0, resumed.stderr
    frame = read_results([out / "many" / "kill.parquet"]).set_index("sample_id")
    assert len(frame) == TASKS and frame.index.is_unique
    for sample, row in finished.items():  # kept as it was written, not run again
        assert frame.loc[sample, "started_at"].isoformat() == row["started_at"]
    rerun, _ = finished_and_in_flight(folder)
    for sample in in_flight:  # run again: a new attempt, finished this time
        assert sample in rerun and rerun[sample]["started_at"] > max(r["started_at"] for r in finished.values())
