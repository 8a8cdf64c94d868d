"""Batched decoding on the embedded model: the same core tasks through both default arms at several
--max-concurrency levels, side by side in one run.

Each level runs in its own process (a fresh engine with that many sequences, its own peak RSS), after a warm-up
process that runs every task once and saves the prefix states (to a folder of this benchmark's own; tasks with
other servers offer other tools, so one task per arm is not enough), so every level starts warm. The
LM response cache is off. Prints per level: wall time, runs per second and its ratio to concurrency 1, LM time per
call, generated tokens per second, peak RSS, the mean number of sequences per decoding step, the share of prompt
tokens reused, and how many runs' success or answer differ from concurrency 1.
Usage: python benchmarks/batched_local.py [--levels 1,2,4] [--tasks a,b,...] [--arms codemode,direct] [--smallest]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import child_result

TASKS = ("lookup-customer-country", "lookup-ticket-priority", "chain-ticket-customer-tier",
         "chain-order-owner-company", "fanout-ticket-priorities", "data-below-reorder-count")


def run_level(level: int, tasks: list[str], arms: list[str], out: Path) -> dict:
    """One level, in this process: the suite's runs at `level` at once; what the parent prints."""
    import harness
    from harness.run.runner import RunConfig, Runner
    from harness.tasks.registry import load_suite

    config = RunConfig(suite=load_suite("core"), model="local", arms=tuple(arms), task_ids=tuple(tasks), out_dir=out,
                       run_id=f"c{level}", max_concurrency=level, cache="off")
    runner = Runner(config)  # loads the engine: not timed
    started = time.perf_counter()
    summary = asyncio.run(runner.run())
    wall = time.perf_counter() - started
    records = summary.records
    engine = getattr(runner.provider, "engine", None)
    decoder = getattr(engine, "decoder", None)
    sizes = decoder.step_sizes if decoder is not None else []
    return {"level": level, "wall": wall, "runs": len(records), "harness": harness.__file__,
            "calls": sum(r.llm_calls for r in records), "lm_time": sum(r.lm_time_s for r in records),
            "generated": sum(r.completion_tokens for r in records),
            "reused": sum(r.reused_prompt_tokens for r in records) / max(sum(r.prompt_tokens for r in records), 1),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "mean_batch": sum(sizes) / len(sizes) if sizes else 1.0,
            "outcomes": {f"{r.task_id}/{r.arm}": [bool(r.success), r.answer] for r in records}}


def child(level: int, tasks: list[str], arms: list[str], out: Path, env: dict[str, str]) -> dict:
    command = [sys.executable, __file__, "--child", str(level), "--tasks", ",".join(tasks), "--arms", ",".join(arms),
               "--out", str(out)]
    return child_result(command, env, f"level {level}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="1,2,4")
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--arms", default="codemode,direct")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--smallest", action="store_true", help="one task through direct at levels 1 and 2")
    args = parser.parse_args()
    if args.smallest:
        args.tasks, args.arms, args.levels = TASKS[0], "direct", "1,2"
    tasks, arms = args.tasks.split(","), args.arms.split(",")
    if args.child:
        print(json.dumps(run_level(args.child, tasks, arms, args.out)))
        return
    levels = [int(x) for x in args.levels.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HARNESS_PREFIX_CACHE_DIR": str(Path(tmp) / "prefix-states")}
        child(max(levels), tasks, arms, Path(tmp) / "warm", env)  # saves every task's prefix states (tool lists differ)
        results = [child(level, tasks, arms, Path(tmp) / f"c{level}", env) for level in levels]
    print(f"harness: {results[0]['harness']}; {len(tasks)} core tasks x {', '.join(arms)}; prefix states warm")
    base = next((r for r in results if r["level"] == 1), results[0])
    print(f"{'concurrency':>11} {'wall s':>7} {'runs/s':>7} {'ratio':>6} {'LM s/call':>9} {'gen tok/s':>9} "
          f"{'peak RSS MB':>11} {'mean batch':>10} {'reused':>6} {'success':>7} {'succ diff':>9} {'answer diff':>11}")
    for r in results:
        diff_success = sum(r["outcomes"][k][0] != base["outcomes"][k][0] for k in base["outcomes"] if k in r["outcomes"])
        diff_answer = sum(r["outcomes"][k][1] != base["outcomes"][k][1] for k in base["outcomes"] if k in r["outcomes"])
        successes = sum(v[0] for v in r["outcomes"].values())
        print(f"{r['level']:>11} {r['wall']:>7.1f} {r['runs'] / r['wall']:>7.3f} "
              f"{(r['runs'] / r['wall']) / (base['runs'] / base['wall']):>5.2f}x {r['lm_time'] / max(r['calls'], 1):>9.2f} "
              f"{r['generated'] / r['wall']:>9.1f} {r['peak_rss_mb']:>11.0f} {r['mean_batch']:>10.2f} {r['reused']:>6.0%} "
              f"{successes:>3}/{r['runs']:<3} {diff_success:>9} {diff_answer:>11}")


if __name__ == "__main__":
    main()
