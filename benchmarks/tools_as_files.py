"""Tools as files explored on demand: core's sprawl tasks (the 64-tool server, category `tool-search`) through
`codemode` (every stub up front), `codemode-discover` (an index, schemas looked up with search_tools /
get_tool_schema) and `codemode-files` (a `servers/` package the code lists, reads and imports). Prints per arm,
side by side: success, turns, total tokens and tool-documentation tokens per run (`context_tool_definition_tokens`:
the prompt's tool text plus the documentation the code printed), the tool files read per run and the tool calls.

    python benchmarks/tools_as_files.py --model scripted:reference        # seconds
    python benchmarks/tools_as_files.py --model local --tasks sprawl-flag-status \
        --arms codemode-files,codemode,codemode-discover                   # the embedded model (slow), files first
    python benchmarks/tools_as_files.py --results results/tools-as-files  # the table of an earlier run
    python benchmarks/tools_as_files.py --smallest                        # scripted reference, one task

One run per model, named after it under --out, so an interrupted benchmark resumes where it stopped.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import replace
from pathlib import Path

import pandas as pd

from harness.agents.arms import arm_rank
from harness.env import configure_environment
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner, new_pool
from harness.tasks.suite import load_suite

SUITE, CATEGORY = "core", "tool-search"
ARMS = ("codemode", "codemode-discover", "codemode-files")


def run_id(model: str) -> str:
    return "sprawl-" + "".join(c if c.isalnum() else "-" for c in model)


async def run_arms(model: str, arms: tuple[str, ...], out: Path, cache: bool, task_ids: tuple[str, ...],
                   epochs: int) -> None:
    suite = load_suite(SUITE)
    suite = replace(suite, tasks=tuple(t for t in suite.tasks if t.category == CATEGORY))
    pool = new_pool(1)
    try:
        config = RunConfig(suite=suite, model=model, arms=arms, out_dir=out, run_id=run_id(model),
                           cache="replay" if cache else "off",
                           task_ids=task_ids, epochs=epochs)
        await Runner(config, pool=pool).run()
    finally:
        await pool.close()


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per model and arm: runs, passed, and per-run means of turns, tokens, tool-documentation tokens, tool files
    read and tool calls."""
    grouped = frame.groupby(["model", "arm"])
    table = pd.DataFrame({
        "runs": grouped.size(), "passed": grouped.success.sum().astype(int), "turns": grouped.turns.mean(),
        "tokens": grouped.total_tokens.mean(), "doc_tokens": grouped.context_tool_definition_tokens.mean(),
        "files_read": grouped.tool_files_read.mean(), "tool_calls": grouped.tool_calls.mean()}).reset_index()
    return table.assign(rank=table.arm.map(arm_rank)).sort_values(["model", "rank"]).drop(columns="rank")


def markdown(table: pd.DataFrame) -> str:
    lines = [("| model | arm | passed | turns / run | tokens / run | tool-doc tokens / run | tool files read / run | "
              "tool calls / run |"), "|---|---|---|---|---|---|---|---|"]
    for row in table.itertuples():
        files = "-" if pd.isna(row.files_read) else f"{row.files_read:.2f}"
        lines.append(f"| {row.model} | {row.arm} | {row.passed}/{row.runs} | {row.turns:.2f} | {row.tokens:,.0f} | "
                     f"{row.doc_tokens:,.0f} | {files} | {row.tool_calls:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="scripted:reference")
    parser.add_argument("--out", type=Path, default=Path("results/tools-as-files"))
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: every sprawl task)")
    parser.add_argument("--arms", default=",".join(ARMS), help="comma-separated, in the order they run")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--no-cache", action="store_true", help="bypass the LM response cache")
    parser.add_argument("--results", type=Path, help="print the table of earlier results instead of running")
    parser.add_argument("--smallest", action="store_true", help="scripted reference model, one task")
    args = parser.parse_args()
    if args.smallest:
        args.model, args.tasks, args.out = "scripted:reference", "sprawl-flag-status", args.out / "smallest"
    configure_environment()
    out = args.results or args.out
    if args.results is None:
        asyncio.run(run_arms(args.model, tuple(a for a in args.arms.split(",") if a), out, not args.no_cache,
                             tuple(t for t in args.tasks.split(",") if t), args.epochs))
    frame = read_results([out])
    frame = frame[frame.arm.isin(ARMS)]
    print(f"\n## core's sprawl tasks ({frame.task_id.nunique()} tasks, 64 tools)\n\n{markdown(summary(frame))}")


if __name__ == "__main__":
    main()
