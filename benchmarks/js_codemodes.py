"""The JavaScript code modes beside the other arms on one suite, replayed by `scripted:reference` (a printed table; no
assertions): per arm, success, mean tokens per run (and of them the tool definitions), mean latency, the programs'
own time (`sandbox_time_s`), and the median start-up of each run's runtime (workerd serving, or Node with its
packages imported: the transcripts' `js_sandbox_startup_s` info events), and the code events per run.

Usage: .venv/bin/python benchmarks/js_codemodes.py [--suite core] [--arms a,b] [--results RUN.parquet] [--smallest]
(`--results` summarizes a run already made; `--smallest`: the smoke suite's first task, the two JavaScript arms and
direct). Needs `harness setup --js-codemodes`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd

from harness.env import configure_environment
from harness.run.records import read_results, read_trajectory
from harness.run.runner import RunConfig, Runner, new_pool
from harness.tasks.registry import load_suite
from harness.trace.events import InfoEvent

ARMS = ("direct", "codemode", "codemode-fastmcp", "smolagents-code", "cloudflare-codemode", "ai-sdk-codemode")
STARTUP_INFO = "js_sandbox_startup_s"


async def replay(suite: str, arms: tuple[str, ...], task_ids: tuple[str, ...], out: Path) -> Path:
    pool = new_pool(1)
    try:
        config = RunConfig(suite=load_suite(suite), model="scripted:reference", arms=arms, task_ids=task_ids,
                           out_dir=out, run_id="js")
        return (await Runner(config, pool=pool).run()).path
    finally:
        await pool.close()


def startups(path: Path, frame: pd.DataFrame) -> pd.Series:
    """Each arm's median runtime start-up per run (seconds; NaN for an arm that reports none)."""
    found: dict[str, list[float]] = {}
    for row in frame.itertuples():
        events = read_trajectory(path, row.sample_id).events
        found.setdefault(row.arm, []).extend(e.value for e in events if isinstance(e, InfoEvent)
                                             and e.name == STARTUP_INFO)
    return pd.Series({arm: statistics.median(values) if values else float("nan") for arm, values in found.items()})


def table(path: Path) -> pd.DataFrame:
    frame = read_results([path])
    grouped = frame.groupby("arm", sort=False)
    out = pd.DataFrame({
        "success": grouped["success"].agg(lambda s: f"{s.sum()}/{len(s)}"),
        "tokens": grouped["total_tokens"].mean().round(0),
        "definitions": grouped["context_tool_definition_tokens"].mean().round(0),
        "latency s": grouped["latency_s"].mean().round(3),
        "sandbox s": grouped["sandbox_time_s"].mean().round(3),
        "tool s": grouped["tool_time_s"].mean().round(3),
        "runtime start s": startups(path, frame).round(3),
        "turns": grouped["turns"].mean().round(2),
    })
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", default="core")
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--results", type=Path, help="summarize this run's results instead of running")
    parser.add_argument("--smallest", action="store_true")
    args = parser.parse_args()
    configure_environment()
    if args.results is not None:
        print(table(args.results).to_string())
        return
    suite, arms, tasks = args.suite, tuple(args.arms.split(",")), ()
    if args.smallest:
        suite, arms, tasks = "smoke", ("direct", "cloudflare-codemode", "ai-sdk-codemode"), ("customer-country",)
    with tempfile.TemporaryDirectory() as out:
        path = asyncio.run(replay(suite, arms, tasks, Path(out)))
        print(table(path).to_string())


if __name__ == "__main__":
    main()
