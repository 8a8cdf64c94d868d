"""Per-run overhead against inspect_ai, the framework users would otherwise pick.

The same trivial tool-using task, N samples at the same concurrency: our harness (direct arm, scripted
model, an in-memory MCP server built fresh for every run, Parquet + trajectories written) vs inspect_ai
with its `mockllm` model (a Python tool, its own eval log). Prints runs per second for each and the ratio
(target: ours >= inspect_ai's). inspect_ai is installed only in .venv-bench (created on first use).

Usage: .venv/bin/python benchmarks/vs_inspect.py [--samples 200] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._common import trivial_provider, trivial_suite
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner

BENCH_VENV = ROOT / ".venv-bench"


def ensure_inspect() -> Path:
    python = BENCH_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(BENCH_VENV)], check=True)
    if subprocess.run([str(python), "-c", "import inspect_ai"], capture_output=True).returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "inspect_ai"], check=True)
    return python


def ours(samples: int, concurrency: int) -> tuple[float, int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        config = RunConfig(suite=trivial_suite(), model="scripted:trivial", arms=("direct",), epochs=samples,
                           out_dir=Path(tmp), run_id="bench", max_concurrency=concurrency)
        started = time.perf_counter()
        asyncio.run(Runner(config, provider=trivial_provider()).run())
        seconds = time.perf_counter() - started
        frame = read_results([Path(tmp)])
    return seconds, len(frame), float(frame.success.mean())


def theirs(python: Path, samples: int, concurrency: int) -> dict:
    # inspect_ai counts tokens with tiktoken too: give it the same offline encodings ours uses
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": os.environ["TIKTOKEN_CACHE_DIR"]}
    result = subprocess.run([str(python), str(ROOT / "benchmarks" / "_inspect_trivial.py"), str(samples),
                             str(concurrency)], capture_output=True, text=True, check=True, env=env)
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    if outcome["status"] != "success":
        raise SystemExit(f"inspect_ai run failed: {outcome}")
    return outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--smallest", action="store_true", help="10 samples; inspect_ai only if .venv-bench exists already")
    args = parser.parse_args()
    if args.smallest:
        args.samples = 10
    if args.smallest and not (BENCH_VENV / "bin" / "python").exists():
        our_seconds, our_rows, our_success = ours(args.samples, args.concurrency)
        print(f"ours: {our_rows} rows, {args.samples / our_seconds:.1f} runs/s, success {our_success:.0%}; "
              "inspect_ai skipped (--smallest does not create .venv-bench)")
        return
    python = ensure_inspect()
    ours(10, args.concurrency)  # warm-up: imports, tokenizer
    theirs(python, 10, args.concurrency)
    our_seconds, our_rows, our_success = ours(args.samples, args.concurrency)
    inspect = theirs(python, args.samples, args.concurrency)
    our_rate, their_rate = args.samples / our_seconds, args.samples / inspect["seconds"]
    print(f"{'':<24}{'harness':>12}{'inspect_ai':>12}")
    print(f"{'samples':<24}{our_rows:>12}{inspect['samples']:>12}")
    print(f"{'success / accuracy':<24}{our_success:>12.2f}{inspect['accuracy'] or 0:>12.2f}")
    print(f"{'wall time (s)':<24}{our_seconds:>12.2f}{inspect['seconds']:>12.2f}")
    print(f"{'runs per second':<24}{our_rate:>12.1f}{their_rate:>12.1f}")
    print(f"ratio harness / inspect_ai: {our_rate / their_rate:.2f}  (target >= 1.5)")


if __name__ == "__main__":
    main()
