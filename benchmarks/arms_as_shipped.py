"""The arms as shipped: core through `direct`, `codemode` and `hybrid`, with parallel tool calls allowed and not,
and tool calls delayed 0 s and 0.2 s on the host (a remote server's round trip). Prints, side by side from one
run, success, turns, tokens and wall time per arm and configuration, on all of core and on its fan-out tasks, and
whether letting direct batch its calls changes the direction of the code-vs-direct token and turn comparison.

    python benchmarks/arms_as_shipped.py                               # the embedded model (slow: an hour or more)
    python benchmarks/arms_as_shipped.py --model scripted:reference    # every configuration in a minute or two
    python benchmarks/arms_as_shipped.py --latencies 0.2 --category fan-out   # a slice
    python benchmarks/arms_as_shipped.py --results results/shipped     # the tables of an earlier (partial) run
    python benchmarks/arms_as_shipped.py --smallest                    # scripted reference, one fan-out task, seconds

`codemode` makes no native calls, so it runs once per latency (under the parallel-on scaffold). Each configuration
is one run named `core-par<on|off>-lat<seconds>` under --out, so an interrupted benchmark continues where it stopped.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from harness.agents.arms import arm_rank
from harness.agents.scaffold import Scaffold, default_scaffold
from harness.env import configure_environment
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner, new_pool
from harness.tasks.suite import load_suite

SUITE = "core"
FAN_OUT = "fan-out"
NATIVE_ARMS = ("direct", "hybrid")  # arms whose replies carry native tool calls
CODE_ARM = "codemode"


@dataclass(frozen=True)
class Configuration:
    parallel: bool
    latency_s: float

    @property
    def run_id(self) -> str:
        return f"{SUITE}-par{'on' if self.parallel else 'off'}-lat{self.latency_s:g}"

    @property
    def arms(self) -> tuple[str, ...]:
        return ("direct", CODE_ARM, "hybrid") if self.parallel else NATIVE_ARMS

    def scaffold(self, base: Scaffold) -> Scaffold:
        return replace(base, name=f"{base.name}-parallel-{'on' if self.parallel else 'off'}",
                       parallel_tool_calls=self.parallel)


def configurations(latencies: tuple[float, ...]) -> list[Configuration]:
    return [Configuration(parallel, latency) for latency in latencies for parallel in (True, False)]


async def run_all(chosen: list[Configuration], model: str, out: Path, cache: bool, category: str | None,
                  task_ids: tuple[str, ...]) -> None:
    suite = load_suite(SUITE)
    if category:
        suite = replace(suite, tasks=tuple(t for t in suite.tasks if t.category == category))
    pool = new_pool(1)
    try:
        for config in chosen:
            print(f"{config.run_id}: {len(suite.tasks)} task(s) x {', '.join(config.arms)}", flush=True)
            run = RunConfig(suite=suite, model=model, arms=config.arms, out_dir=out, run_id=config.run_id,
                            cache="replay" if cache else "off",
                            scaffold=config.scaffold(default_scaffold(model)),
                            tool_latency_s=config.latency_s, task_ids=task_ids)
            await Runner(run, pool=pool).run()
    finally:
        await pool.close()


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and arm: runs, passed, the means of turns, tokens and calls, and the median wall and LM
    time (a median: with scripted:reference, an arm's first run also traces the reference solution)."""
    frame = frame.assign(parallel=frame.parallel_tool_calls.fillna(True).astype(bool))
    grouped = frame.groupby(["tool_latency_s", "parallel", "arm"], dropna=False)
    table = pd.DataFrame({
        "runs": grouped.size(), "passed": grouped.success.sum().astype(int), "turns": grouped.turns.mean(),
        "tokens": grouped.total_tokens.mean(), "tool_calls": grouped.tool_calls.mean(),
        "parallel_turns": grouped.parallel_turns.mean(), "wall_s": grouped.latency_s.median(),
        "lm_s": grouped.lm_time_s.median()}).reset_index()
    order = table.assign(rank=table.arm.map(arm_rank)).sort_values(["tool_latency_s", "parallel", "rank"],
                                                                 ascending=[True, False, True])
    return order.drop(columns="rank")


def markdown(table: pd.DataFrame) -> str:
    lines = ["| tool latency s | parallel calls | arm | passed | turns / run | tokens / run | tool calls / run | "
             "parallel turns / run | median wall s | median LM s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for row in table.itertuples():
        parallel = "-" if row.arm == CODE_ARM else ("on" if row.parallel else "off")
        lines.append(f"| {row.tool_latency_s:g} | {parallel} | {row.arm} | {row.passed}/{row.runs} | {row.turns:.2f} | "
                     f"{row.tokens:,.0f} | {row.tool_calls:.2f} | {row.parallel_turns:.2f} | {row.wall_s:.2f} | "
                     f"{row.lm_s:.2f} |")
    return "\n".join(lines)


def ratios(frame: pd.DataFrame) -> str:
    """codemode / direct for mean tokens, mean turns and median wall time, with direct's parallel calls on and off,
    per latency: the direction of the comparison is whether each ratio is below 1."""
    lines = ["| tool latency s | direct's parallel calls | codemode/direct tokens | turns | wall time |",
             "|---|---|---|---|---|"]
    for latency, rows in frame.groupby("tool_latency_s", sort=True):
        code = rows[rows.arm == CODE_ARM]
        for parallel in (True, False):
            direct = rows[(rows.arm == "direct") & (rows.parallel_tool_calls == parallel)]
            if code.empty or direct.empty:
                continue
            cells = [code.total_tokens.mean() / direct.total_tokens.mean(), code.turns.mean() / direct.turns.mean(),
                     code.latency_s.median() / direct.latency_s.median()]
            lines.append(f"| {latency:g} | {'on' if parallel else 'off'} | " + " | ".join(f"{x:.2f}" for x in cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="local")
    parser.add_argument("--out", type=Path, default=Path("results/shipped"))
    parser.add_argument("--latencies", default="0,0.2", help="comma-separated tool latencies in seconds")
    parser.add_argument("--category", help="only core's tasks of this category (e.g. fan-out)")
    parser.add_argument("--tasks", default="", help="comma-separated task ids")
    parser.add_argument("--no-cache", action="store_true", help="bypass the LM response cache")
    parser.add_argument("--results", type=Path, help="print the tables of earlier results instead of running")
    parser.add_argument("--smallest", action="store_true", help="scripted reference model, one fan-out task")
    args = parser.parse_args()
    if args.smallest:
        args.model, args.category, args.tasks = "scripted:reference", FAN_OUT, "fanout-customer-countries"
        args.out = args.out / "smallest"
    latencies = tuple(float(x) for x in args.latencies.split(",") if x)
    configure_environment()
    out = args.results or args.out
    if args.results is None:
        asyncio.run(run_all(configurations(latencies), args.model, out, not args.no_cache, args.category,
                            tuple(t for t in args.tasks.split(",") if t)))
    frame = read_results([out])
    for title, rows in (("all tasks", frame), (f"{FAN_OUT} tasks", frame[frame.category == FAN_OUT])):
        if rows.empty:
            continue
        print(f"\n## {title} ({rows.task_id.nunique()} tasks)\n\n{markdown(summary(rows))}\n\n{ratios(rows)}")


if __name__ == "__main__":
    main()
