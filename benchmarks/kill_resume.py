"""A suite killed with SIGKILL mid-way, then resumed: how many runs had finished (their transcript's end line
written), how many of those rows the Parquet file held at the kill (it is rewritten at most once a second), how
many runs were in flight, and after `--resume`: every finished run's row kept as it was, every run in flight run
again, nothing duplicated. A scripted model slowed down (HARNESS_SCRIPTED_LATENCY_S) keeps runs in flight.

Usage: .venv/bin/python benchmarks/kill_resume.py [--tasks 40] [--concurrency 4] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pyarrow.parquet as pq

from harness.run.records import read_results
from harness.trace.transcript_file import read_transcript_files

ROOT = Path(__file__).resolve().parent.parent


def suite_file(folder: Path, tasks: int) -> Path:
    entries = "".join(f"""
  - id: t{i:03d}
    category: lookup
    prompt: "Country of C-{i % 50 + 1:04d}?"
    expected: XX
    scorer: exact""" for i in range(tasks))
    path = folder / "kill.yaml"
    path.write_text(f"suite: kill\nservers: [crm]\ntasks:{entries}\n")
    return path


def harness(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "from harness.cli import main; main()", *args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--smallest", action="store_true", help="12 tasks at concurrency 2")
    args = parser.parse_args()
    if args.smallest:
        args.tasks, args.concurrency = 12, 2
    env = {**os.environ, "HARNESS_SCRIPTED_LATENCY_S": str(args.latency)}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        out, results = folder / "out", folder / "out" / "kill" / "k.parquet"
        transcripts = results.with_name("k.transcripts")
        run = harness("run", "--suite", str(suite_file(folder, args.tasks)), "--arms", "direct", "--model",
                      "scripted:garbage", "--out", str(out), "--run-id", "k", "--max-concurrency",
                      str(args.concurrency), env=env)
        started, deadline = time.perf_counter(), time.monotonic() + 120
        while time.monotonic() < deadline:
            found = read_transcript_files(transcripts)
            ended = [f for f in found if f.end]
            if len(ended) >= min(5, args.tasks // 3) and any(f.end is None and f.events for f in found):
                run.send_signal(signal.SIGKILL)
                break
            time.sleep(0.01)
        run.wait(30)
        killed_at = time.perf_counter() - started
        found = read_transcript_files(transcripts)
        finished = {f.sample_id: f.end["row"]["started_at"] for f in found if f.end}
        in_flight = {f.sample_id for f in found if f.end is None}
        in_parquet = pq.read_metadata(results).num_rows if results.exists() else 0
        resumed = harness("run", "--resume", "k", "--out", str(out), env=env)
        _, err = resumed.communicate(timeout=600)
        if resumed.returncode != 0:
            raise SystemExit(f"resume failed:\n{err[-2000:]}")
        frame = read_results([results]).set_index("sample_id")
        kept = sum(frame.loc[s, "started_at"].isoformat() == at for s, at in finished.items())
        after = {f.sample_id: f.end for f in read_transcript_files(transcripts)}
        rerun = sum(1 for s in in_flight if after.get(s) and after[s]["row"]["started_at"] > max(finished.values()))
    print(f"{'tasks, concurrency':<44}{args.tasks:>6}, {args.concurrency}")
    print(f"{'killed after (s)':<44}{killed_at:>6.1f}")
    print(f"{'runs finished at the kill':<44}{len(finished):>6}")
    print(f"{'  of them rows in the Parquet file then':<44}{in_parquet:>6}")
    print(f"{'runs in flight at the kill':<44}{len(in_flight):>6}")
    print(f"{'after resume: rows':<44}{len(frame):>6}  (unique: {frame.index.is_unique})")
    print(f"{'  finished runs kept as written':<44}{kept:>6} / {len(finished)}")
    print(f"{'  runs in flight run again':<44}{rerun:>6} / {len(in_flight)}")


if __name__ == "__main__":
    main()
