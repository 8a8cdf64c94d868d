"""What writing each event of a run to disk as it happens costs: events per second through a run's transcript
(flushed per event vs left in the OS's buffer), and a suite's wall time with per-event flushing on and off,
measured side by side (alternating, so drift in the machine's load falls on both).

Usage: .venv/bin/python benchmarks/transcript_writes.py [--events 20000] [--runs 200] [--rounds 3]
       [--model local --runs 2 --rounds 1]   (the embedded model: run it under flock /tmp/harness-embedded.lock)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import trivial_provider, trivial_suite
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner
from harness.trace.calls import LMCall, ToolCallRecord
from harness.trace.transcript import Transcript
from harness.trace.transcript_file import TranscriptWriter

MESSAGES = [{"role": "system", "content": "You answer with tool calls. " * 40},
            {"role": "user", "content": "In which country is customer C-0007?"}]


def events_per_second(events: int, folder: Path, flush_each: bool) -> float:
    """Appends alternating LM calls (a ~1 kB prompt) and tool calls to one run's transcript, written to its file."""
    transcript = Transcript(TranscriptWriter(folder / f"run-{flush_each}.jsonl", {"sample_id": "s"}, flush_each))
    call = LMCall(messages=MESSAGES, output="get_customer(customer_id='C-0007')", prompt_tokens=300,
                  completion_tokens=12, latency_s=0.4)
    tool = ToolCallRecord(tool="get_customer", arguments={"customer_id": "C-0007"}, result_preview='{"country": "IN"}')
    started = time.perf_counter()
    for index in range(events):
        if index % 2:
            transcript.tool_call(tool)
        else:
            transcript.lm_call(call)
    seconds = time.perf_counter() - started
    transcript.sink.close()
    return events / seconds


def suite_seconds(runs: int, model: str, folder: Path, run_id: str, flush_events: bool) -> tuple[float, int]:
    if model == "local":
        from harness.tasks.suite import load_suite

        smoke = load_suite("smoke")
        config = RunConfig(suite=smoke, model="local", arms=("direct",), task_ids=("customer-country",),
                           epochs=runs, out_dir=folder, run_id=run_id, cache=False)
        runner = Runner(config, flush_events=flush_events)
    else:
        config = RunConfig(suite=trivial_suite(), model="scripted:trivial", arms=("direct",), epochs=runs,
                           out_dir=folder, run_id=run_id, max_concurrency=4)
        runner = Runner(config, provider=trivial_provider(), flush_events=flush_events)
    started = time.perf_counter()
    summary = asyncio.run(runner.run())
    seconds = time.perf_counter() - started
    return seconds, len(read_results([summary.path]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model", default="scripted", choices=["scripted", "local"])
    parser.add_argument("--smallest", action="store_true", help="2,000 events, 10 scripted runs, 1 round (seconds)")
    args = parser.parse_args()
    if args.smallest:
        args.events, args.runs, args.rounds, args.model = 2000, 10, 1, "scripted"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        flushed = [events_per_second(args.events, folder, True) for _ in range(args.rounds)]
        buffered = [events_per_second(args.events, folder, False) for _ in range(args.rounds)]
        print(f"{'events per second, flushed':<36}{statistics.median(flushed):>12,.0f}")
        print(f"{'events per second, buffered':<36}{statistics.median(buffered):>12,.0f}")
        print(f"{'buffered / flushed':<36}{statistics.median(buffered) / statistics.median(flushed):>12.2f}")
        suite_seconds(2, "scripted", folder, "warmup", True)  # imports and the first server build, outside timing
        timings: dict[bool, list[float]] = {True: [], False: []}
        for round_ in range(args.rounds):
            for flush in (True, False) if round_ % 2 == 0 else (False, True):
                seconds, rows = suite_seconds(args.runs, args.model, folder, f"r{round_}-{flush}", flush)
                assert rows == args.runs, f"{rows} rows of {args.runs}"
                timings[flush].append(seconds)
        on, off = statistics.median(timings[True]), statistics.median(timings[False])
        print(f"{'suite runs':<36}{args.runs:>12}  ({args.model}, {args.rounds} round(s) each)")
        print(f"{'suite wall time, flushed (s)':<36}{on:>12.2f}")
        print(f"{'suite wall time, not flushed (s)':<36}{off:>12.2f}")
        print(f"{'flushed / not flushed':<36}{on / off:>12.3f}")


if __name__ == "__main__":
    main()
