"""Tokens against the number of tools: the catalogue suite replayed by `scripted:reference` through the arms at
each catalogue size, so every token count is exact (cl100k_base) and the same on every machine. Prints, per arm
and size, mean tokens per run by part, success and wall time, each other arm's tokens as a share of direct's, and
each arm's growth (the fitted tokens per added tool). With a stated context window, the runs whose prompt did not
fit it (context_overflow: ended before that call, their tokens what they spent until then) are counted per size.

    python benchmarks/catalogue_sweep.py                        # 16, 47, 64, 256, 1024 tools, five arms (minutes)
    python benchmarks/catalogue_sweep.py --sizes 16,128 --arms direct,direct-search,codemode-files
    python benchmarks/catalogue_sweep.py --context-window 16384 # where each arm stops fitting a 16k window
    python benchmarks/catalogue_sweep.py --smallest             # 16 and 24 tools, direct, direct-search, codemode
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
ARMS = ("direct", "direct-search", "codemode", "codemode-discover", "codemode-files")
PARTS = {"context_tool_definition_tokens": "definitions", "context_tool_result_tokens": "results",
         "context_task_tokens": "task", "tiktoken_completion_tokens": "output"}


async def sweep(sizes: tuple[int, ...], arms: tuple[str, ...], task_ids: tuple[str, ...], out: Path,
                window: int | None = None) -> pd.DataFrame:
    suite = load_suite("catalogue", sizes)
    chosen = tuple(t.id for t in suite.tasks if not task_ids or t.id.rsplit("-", 1)[0] in task_ids)
    pool = new_pool(1)
    try:
        config = RunConfig(suite=suite, model="scripted:reference", arms=arms, task_ids=chosen, out_dir=out,
                           run_id="sweep", context_window=window)
        summary = await Runner(config, pool=pool).run()
    finally:
        await pool.close()
    return read_results([summary.path])


def per_size(frame: pd.DataFrame) -> pd.DataFrame:
    columns = ["total_tokens", *PARTS, "latency_s"]
    table = frame.groupby(["arm", "catalogue_size"])[columns].mean().round(0)
    table["latency_s"] = frame.groupby(["arm", "catalogue_size"])["latency_s"].mean().round(2)
    table["success"] = frame.groupby(["arm", "catalogue_size"])["success"].agg(lambda s: f"{s.sum()}/{len(s)}")
    if frame["context_window"].notna().any():
        table["overflowed"] = (frame["error_type"] == "context_overflow").groupby(
            [frame["arm"], frame["catalogue_size"]]).sum()
    return table.rename(columns={"total_tokens": "tokens", "latency_s": "wall s", **PARTS})


def fitting(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs of the (arm, size) cells where no run overflowed the context window: the ones shares and growth
    compare (an overflowed run sent nothing past its window)."""
    overflowed = (frame["error_type"] == "context_overflow").groupby([frame["arm"], frame["catalogue_size"]]
                                                                     ).transform("any")
    return frame[~overflowed]


def shares(frame: pd.DataFrame) -> pd.DataFrame:
    """Each arm's mean tokens per run as a share of direct's at the same size (the published ratios' form); "-" where
    either overflowed."""
    means = fitting(frame).groupby(["catalogue_size", "arm"])["total_tokens"].mean().unstack("arm")
    ratios = means.drop(columns="direct").div(means["direct"], axis=0)
    return ratios.map(lambda r: "-" if pd.isna(r) else f"{r:.1%} (-{1 - r:.1%})")


def growth(frame: pd.DataFrame) -> pd.Series:
    """Each arm's fitted tokens per added tool, over the sizes where it fits ("-" with fewer than two)."""
    means = fitting(frame).groupby(["arm", "catalogue_size"])["total_tokens"].mean()
    return pd.Series({arm: round(tokens_per_added_tool(means[arm].index.to_series(), means[arm]), 1)
                      if len(means[arm]) >= 2 else "-"
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
    parser.add_argument("--context-window", type=int, default=None,
                        help="the model's window in tokens: a run whose prompt does not fit ends as context_overflow")
    parser.add_argument("--smallest", action="store_true",
                        help="16 and 24 tools, direct, direct-search and codemode, one task")
    args = parser.parse_args()
    configure_environment()
    sizes = (16, 24) if args.smallest else tuple(int(s) for s in args.sizes.split(","))
    arms = ("direct", "direct-search", "codemode") if args.smallest else tuple(args.arms.split(","))
    tasks = ("account-billing-email",) if args.smallest else tuple(t for t in args.tasks.split(",") if t)
    with TemporaryDirectory() as out:
        frame = asyncio.run(sweep(sizes, arms, tasks, Path(out), args.context_window))
    window = f"; a {args.context_window:,}-token context window" if args.context_window else ""
    print(f"catalogue sweep, scripted:reference, {frame['task_id'].str.rsplit('-', n=1).str[0].nunique()} task(s); "
          f"tokens: mean per run, cl100k_base{window}\n")
    print(markdown(per_size(frame)), "\n")
    if "direct" in arms and len(arms) > 1:
        print("tokens as a share of direct's at each size\n")
        print(markdown(shares(frame)), "\n")
    print(markdown(growth(frame)))


if __name__ == "__main__":
    main()
