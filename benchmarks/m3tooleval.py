"""M3ToolEval (CodeAct's benchmark) through direct, react and codemode, beside the paper's published figures.

    python benchmarks/m3tooleval.py ~/code-act                        # all 82 tasks, embedded model, no cache
    python benchmarks/m3tooleval.py ~/code-act --per-family 4         # a stratified subset (named in the output)
    python benchmarks/m3tooleval.py ~/code-act --model gpt-4-1106-preview   # any LiteLLM model
    python benchmarks/m3tooleval.py ~/code-act --tasks FAMILY/TASK,...   # named tasks (e.g. more of a subset)
    python benchmarks/m3tooleval.py --results RUN.parquet [RUN2.parquet ...]   # earlier runs' table, together
    python benchmarks/m3tooleval.py --smallest                        # seconds: a look-alike checkout, scripted model

PATH is a checkout of github.com/xingyaoww/code-act (or its scripts/eval/m3tooleval folder). Every LM call is
fresh (no response cache). The paper's action modes map onto the arms: code = codemode, JSON = direct, text = react.
Turns are counted differently: the paper counts the environment's replies (the final answer included), the
harness counts the agent's LM turns; both end at the benchmark's limit of 10.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.agents.scaffold import load_scaffold
from harness.analysis.stats import wilson
import harness.adapters  # noqa: F401  registers the published benchmarks
from harness.env import configure_environment
from harness.models.scripted import policy_provider
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner, prepare
from harness.tasks.registry import load_suite
from harness.tasks.task import Suite

ARMS = ("direct", "react", "codemode")
ACTION_MODE = {"codemode": "code", "direct": "JSON", "react": "text"}
# gpt-4-1106-preview on all 82 tasks, from the output of scripts/eval/m3tooleval/m3tooleval_analysis.ipynb in the
# code-act repository (its LaTeX table: "Correct %" and "Avg. Turns" per action mode).
PAPER_MODEL = "gpt-4-1106-preview"
PAPER = {"code": (74.4, 5.5), "JSON": (52.4, 7.6), "text": (53.7, 7.7)}


def stratified(suite: Suite, per_family: int, seed: int) -> tuple[str, ...]:
    """At least `per_family` tasks of every family (all of a smaller one), drawn with `seed`, in suite order: the
    same tasks for every arm."""
    rng = random.Random(seed)
    chosen: set[str] = set()
    for family in sorted({t.category for t in suite.tasks}):
        ids = [t.id for t in suite.tasks if t.category == family]
        chosen.update(rng.sample(ids, min(per_family, len(ids))))
    return tuple(t.id for t in suite.tasks if t.id in chosen)


def table(frame: pd.DataFrame) -> str:
    lines = ["| arm (paper's mode) | success [95% CI] | mean turns | mean tokens | wall (min) | errors | "
             f"paper {PAPER_MODEL}: success | paper: turns |", "|---|---|---|---|---|---|---|---|"]
    for arm in [a for a in ARMS if a in set(frame.arm)] + sorted(set(frame.arm) - set(ARMS)):
        rows = frame[frame.arm == arm]
        rate = wilson(int(rows.success.sum()), len(rows))
        mode = ACTION_MODE.get(arm, "-")
        paper_success, paper_turns = ("-", "-") if mode not in PAPER else \
            (f"{PAPER[mode][0]:.1f}%", f"{PAPER[mode][1]:.1f}")
        errors = ", ".join(f"{k} {v}" for k, v in rows.error_type[rows.error_type != ""].value_counts().items())
        lines.append(f"| {arm} ({mode}) | {rate.value:.1%} [{rate.low:.1%}, {rate.high:.1%}] ({rate.successes}/"
                     f"{rate.n}) | {rows.turns.mean():.1f} | {rows.total_tokens.mean():,.0f} | "
                     f"{rows.latency_s.sum() / 60:.1f} | {errors or '-'} | {paper_success} | {paper_turns} |")
    return "\n".join(lines)


def by_family(frame: pd.DataFrame) -> str:
    counts = frame.groupby(["category", "arm"]).success.agg(["sum", "count"])
    arms = [a for a in ARMS if a in set(frame.arm)]
    lines = ["| family | " + " | ".join(arms) + " |", "|---|" + "---|" * len(arms)]
    for family in sorted(set(frame.category)):
        cells = [f"{int(counts.loc[(family, a), 'sum'])}/{int(counts.loc[(family, a), 'count'])}"
                 if (family, a) in counts.index else "-" for a in arms]
        lines.append(f"| {family} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(suite: Suite, model: str, arms: tuple[str, ...], task_ids: tuple[str, ...], out: Path,
        provider=None, scaffold: str = "") -> tuple[Path, float]:
    config = RunConfig(suite=suite, model=model, arms=arms, task_ids=task_ids, out_dir=out, cache=False,
                       timeout_s=3600,  # a busy 2-core machine is slow, not wrong
                       scaffold=load_scaffold(scaffold) if scaffold else None)
    if provider is None:
        prepare(config)
    started = time.perf_counter()
    summary = asyncio.run(Runner(config, provider=provider).run())
    return summary.path, time.perf_counter() - started


def smallest(out: Path) -> tuple[Suite, Path, float, str]:
    """The tests' look-alike checkout on a scripted model that solves its tasks: the pipeline, in seconds."""
    from tests.adapters.lookalike import solving_policy, write_lookalike

    suite = load_suite(f"m3tooleval:{write_lookalike(out / 'code-act')}")
    path, wall = run(suite, "scripted:lookalike", ARMS, (), out / "results",
                     policy_provider("scripted:lookalike", solving_policy))
    return suite, path, wall, "all tasks of the look-alike checkout (scripted model)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", nargs="?", help="a code-act checkout (or its scripts/eval/m3tooleval folder)")
    parser.add_argument("--model", default="local")
    parser.add_argument("--arms", default=",".join(ARMS))
    subset = parser.add_mutually_exclusive_group()
    subset.add_argument("--per-family", type=int, default=0,
                        help="a stratified subset: this many tasks of every family (0: all 82 tasks)")
    subset.add_argument("--tasks", default="", help="comma-separated task names (family/task) instead of a draw")
    parser.add_argument("--seed", type=int, default=0, help="which tasks --per-family draws")
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks"))
    parser.add_argument("--results", type=Path, nargs="+",
                        help="print the table of earlier results files instead (several: their runs together)")
    parser.add_argument("--smallest", action="store_true", help="the look-alike checkout on a scripted model")
    parser.add_argument("--scaffold", default="", help="plain | guided | FILE.yaml (default: the model's own); the "
                        "paper's agents had no extra rules, which is plain")
    args = parser.parse_args()
    configure_environment()
    wall = None
    if args.smallest:
        with tempfile.TemporaryDirectory() as tmp:
            _, path, wall, chosen = smallest(Path(tmp))
            frame = read_results([path])
    elif args.results:
        path, frame = ", ".join(map(str, args.results)), read_results(args.results)
        chosen = f"the tasks of {'that run' if len(args.results) == 1 else 'those runs'}"
    elif args.path:
        suite = load_suite(f"m3tooleval:{args.path}")
        if args.tasks:
            task_ids = tuple(args.tasks.split(","))
            chosen = f"{len(task_ids)} named task(s): {', '.join(task_ids)}"
        elif args.per_family:
            task_ids = stratified(suite, args.per_family, args.seed)
            chosen = f"stratified subset, {args.per_family} per family (seed {args.seed}): {', '.join(task_ids)}"
        else:
            task_ids, chosen = (), f"all {len(suite.tasks)} tasks"
        path, wall = run(suite, args.model, tuple(args.arms.split(",")), task_ids, args.out, scaffold=args.scaffold)
        frame = read_results([path])
    else:
        parser.error("give the path of a code-act checkout, --results FILE or --smallest")
    print(f"M3ToolEval on {frame.model.iloc[0]} (scaffold {', '.join(sorted(frame.scaffold.unique()))}), "
          f"{frame.task_id.nunique()} task(s): {chosen}")
    print(f"results: {path}\n")
    print(table(frame))
    print()
    print(by_family(frame))
    if wall is not None:
        print(f"\nwhole run: {wall / 60:.1f} min of wall time")
    print(json.dumps({"results": str(path), "wall_s": wall}))


if __name__ == "__main__":
    main()
