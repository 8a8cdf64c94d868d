"""The embedded model on a suite, measured per arm: success, completion tokens per LM call, grammar use, wall time.

    python benchmarks/smoke_local.py                       # run smoke on the embedded model (--no-cache)
    python benchmarks/smoke_local.py --suite core --arms direct,codemode,react
    python benchmarks/smoke_local.py --results results/smoke/RUN.parquet   # print the table of an earlier run

Every LM call is fresh (no response cache), so wall times are the model's real cost on this machine. The
table is what the README's "fair comparison" section quotes; the issue's targets for smoke on 2 cores: at
least 5 of 8 runs pass and the whole suite in at most 12 minutes.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

from harness.agents.arms import DEFAULT_ARMS
from harness.env import configure_environment
from harness.run.executors import run_suite
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig
from harness.tasks.suite import load_suite


def grammar_share(frame: pd.DataFrame, path: Path) -> dict[str, float]:
    """Per arm: the share of LM calls the engine decoded under a grammar (from the trajectories)."""
    shares = {}
    for arm, rows in frame.groupby("arm"):
        calls = [c for sid in rows.sample_id for c in read_trajectory(path, sid).lm_calls]
        shares[arm] = sum(c.grammar for c in calls) / len(calls) if calls else 0.0
    return shares


def table(frame: pd.DataFrame, path: Path, wall_s: float | None) -> str:
    shares = grammar_share(frame, path)
    lines = ["| arm | passed | completion tokens / LM call | LM calls / run | turns / run | mean run (s) | "
             "grammar calls | errors |", "|---|---|---|---|---|---|---|---|"]
    for arm, rows in frame.groupby("arm", sort=False):
        errors = ", ".join(f"{k} {v}" for k, v in rows.error_type[rows.error_type != ""].value_counts().items())
        lines.append(f"| {arm} | {int(rows.success.sum())}/{len(rows)} | "
                     f"{rows.completion_tokens.sum() / max(1, rows.llm_calls.sum()):.0f} | "
                     f"{rows.llm_calls.mean():.1f} | {rows.turns.mean():.1f} | {rows.latency_s.mean():.0f} | "
                     f"{shares.get(arm, 0):.0%} | {errors or '-'} |")
    total = f"{int(frame.success.sum())}/{len(frame)} runs passed"
    if wall_s is not None:
        total += f"; the whole suite took {wall_s / 60:.1f} min of wall time"
    return "\n".join(lines + ["", total])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="smoke")
    parser.add_argument("--arms", default=",".join(DEFAULT_ARMS))
    parser.add_argument("--model", default="local")
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks"))
    parser.add_argument("--results", type=Path, help="print the table of an earlier results file instead")
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    parser.add_argument("--smallest", action="store_true", help="one task on the scripted model (seconds)")
    args = parser.parse_args()
    if args.smallest:
        args.model, args.tasks = "scripted:reference", "customer-country"
    configure_environment()
    wall = None
    path = args.results
    if path is None:
        config = RunConfig(suite=load_suite(args.suite), model=args.model, arms=tuple(args.arms.split(",")),
                           task_ids=tuple(args.tasks.split(",")) if args.tasks else (), out_dir=args.out,
                           cache="off")
        started = time.perf_counter()
        path = run_suite(config).path
        wall = time.perf_counter() - started
    frame = read_results([path])
    print(f"{frame.suite.iloc[0]} on {frame.model.iloc[0]} ({path})")
    print(table(frame, path, wall))
    print(json.dumps({"results": str(path), "wall_s": wall}))


if __name__ == "__main__":
    main()
