"""Tokens against the number of tools: the catalogue suite replayed by `scripted:reference` through the arms at
each catalogue size, so every token count is exact (cl100k_base) and the same on every machine. Prints, per arm
and size, mean tokens per run by part, success and wall time, each code-mode arm's tokens as a share of direct's,
and each arm's growth (the fitted tokens per added tool).

    python benchmarks/catalogue_sweep.py                        # 16, 47, 64, 256, 1024 tools, four arms (minutes)
    python benchmarks/catalogue_sweep.py --sizes 16,128 --arms direct,codemode-files
    python benchmarks/catalogue_sweep.py --smallest             # 16 and 24 tools, direct and codemode, one task
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from tempfile import TemporaryDirectory

import pandas as pd

from harness.analysis.tables import tokens_per_added_tool
from harness.env import configure_environment
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner, new_pool
from harness.tasks.registry import load_suite

SIZES = (16, 47, 64, 256, 1024)  # 47: the tool count of the integration guide's example
ARMS = ("direct", "codemode", "codemode-discover", "codemode-files")
PARTS = {"context_tool_definition_tokens": "definitions", "context_tool_result_tokens": "results",
         "context_task_tokens": "task", "tiktoken_completion_tokens": "output"}


async def sweep(sizes: tuple[int, ...], arms: tuple[str, ...], task_ids: tuple[str, ...], out: Path) -> pd.DataFrame:
    suite = load_suite("catalogue", sizes)
    chosen = tuple(t.id for t in suite.tasks if not task_ids or t.id.rsplit("-", 1)[0] in task_ids)
    pool = new_pool(1)
    try:
        config = RunConfig(suite=suite, model="scripted:reference", arms=arms, task_ids=chosen, out_dir=out,
                           run_id="sweep")
        summary = await Runner(config, pool=pool).run()
    finally:
        await pool.close()
    return read_results([summary.path])


def per_size(frame: pd.DataFrame) -> pd.DataFrame:
    columns = ["total_tokens", *PARTS, "latency_s"]
    table = frame.groupby(["arm", "catalogue_size"])[columns].mean().round(0)
    table["latency_s"] = frame.groupby(["arm", "catalogue_size"])["latency_s"].mean().round(2)
    table["success"] = frame.groupby(["arm", "catalogue_size"])["success"].agg(lambda s: f"{s.sum()}/{len(s)}")
    return table.rename(columns={"total_tokens": "tokens", "latency_s": "wall s", **PARTS})


def shares(frame: pd.DataFrame) -> pd.DataFrame:
    """Each arm's mean tokens per run as a share of direct's at the same size (the published ratios' form)."""
    means = frame.groupby(["catalogue_size", "arm"])["total_tokens"].mean().unstack("arm")
    return means.drop(columns="direct").div(means["direct"], axis=0).map(lambda r: f"{r:.1%} (-{1 - r:.1%})")


def growth(frame: pd.DataFrame) -> pd.Series:
    means = frame.groupby(["arm", "catalogue_size"])["total_tokens"].mean()
    return pd.Series({arm: round(tokens_per_added_tool(means[arm].index.to_series(), means[arm]), 1)
                      for arm in means.index.get_level_values(0).unique()}, name="tokens per added tool"
                     ).rename_axis("arm")


def markdown(table: pd.DataFrame | pd.Series) -> str:
    """Any table (its index as the first columns), numbers with thousands separators."""
    flat = table.reset_index()
    cells = [[f"{v:,.0f}" if isinstance(v, float) and v == round(v) else str(v) for v in row]
             for row in flat.itertuples(index=False)]
    return "\n".join(["| " + " | ".join(map(str, flat.columns)) + " |", "|" + "---|" * len(flat.columns),
                      *("| " + " | ".join(row) + " |" for row in cells)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="catalogue sizes (tools)")
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--tasks", default="", help="task ids without their size (default: all five)")
    parser.add_argument("--smallest", action="store_true", help="16 and 24 tools, direct and codemode, one task")
    args = parser.parse_args()
    configure_environment()
    sizes = (16, 24) if args.smallest else tuple(int(s) for s in args.sizes.split(","))
    arms = ("direct", "codemode") if args.smallest else tuple(args.arms.split(","))
    tasks = ("account-billing-email",) if args.smallest else tuple(t for t in args.tasks.split(",") if t)
    with TemporaryDirectory() as out:
        frame = asyncio.run(sweep(sizes, arms, tasks, Path(out)))
    print(f"catalogue sweep, scripted:reference, {frame['task_id'].str.rsplit('-', n=1).str[0].nunique()} task(s); "
          "tokens: mean per run, cl100k_base\n")
    print(markdown(per_size(frame)), "\n")
    if "direct" in arms and len(arms) > 1:
        print("tokens as a share of direct's at each size\n")
        print(markdown(shares(frame)), "\n")
    print(markdown(growth(frame)))


if __name__ == "__main__":
    main()
