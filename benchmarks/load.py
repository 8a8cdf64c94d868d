"""Load: 1,000 runs of a trivial task with a zero-latency scripted model at concurrency 8.

Prints: rows present (must be all), runs per second, RSS at start vs end (target: growth < 10%).
Usage: .venv/bin/python benchmarks/load.py [--runs 1000] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import rss_mb, trivial_provider, trivial_suite
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner


async def run_batch(runs: int, concurrency: int, out: Path, run_id: str) -> float:
    config = RunConfig(suite=trivial_suite(), model="scripted:trivial", arms=("direct",), epochs=runs,
                       out_dir=out, run_id=run_id, max_concurrency=concurrency)
    started = time.perf_counter()
    await Runner(config, provider=trivial_provider()).run()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--smallest", action="store_true", help="20 runs at concurrency 4 (seconds)")
    args = parser.parse_args()
    if args.smallest:
        args.runs, args.concurrency = 20, 4
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        asyncio.run(run_batch(20, args.concurrency, out, "warmup"))  # imports, tokenizer, first server build
        rss_start = rss_mb()
        seconds = asyncio.run(run_batch(args.runs, args.concurrency, out, "load"))
        rss_end = rss_mb()
        frame = read_results([out / "trivial" / "load.parquet"])
    complete = len(frame) == args.runs and frame.sample_id.is_unique and bool(frame.success.all())
    growth = (rss_end - rss_start) / rss_start
    print(f"{'runs recorded':<28}{len(frame):>10} / {args.runs}  ({'all present' if complete else 'MISSING'})")
    print(f"{'concurrency':<28}{args.concurrency:>10}")
    print(f"{'wall time (s)':<28}{seconds:>10.1f}")
    print(f"{'runs per second':<28}{args.runs / seconds:>10.1f}")
    print(f"{'RSS start / end (MB)':<28}{rss_start:>10.0f} / {rss_end:.0f}")
    print(f"{'RSS growth':<28}{growth:>10.1%}  (target < 10%)")


if __name__ == "__main__":
    main()
