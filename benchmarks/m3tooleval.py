"""M3ToolEval (CodeAct's benchmark) through direct, react and codemode, beside the paper's published figures.

    python benchmarks/m3tooleval.py ~/code-act                        # all 82 tasks, embedded model, no cache
    python benchmarks/m3tooleval.py ~/code-act --per-family 4         # a stratified subset (named in the output)
    python benchmarks/m3tooleval.py ~/code-act --model gpt-4-1106-preview   # any LiteLLM model
    python benchmarks/m3tooleval.py ~/code-act --tasks FAMILY/TASK,...   # named tasks (e.g. more of a subset)
    python benchmarks/m3tooleval.py --results RUN.parquet [RUN2.parquet ...]   # earlier runs' table, together
    python benchmarks/m3tooleval.py --smallest                        # seconds: a look-alike checkout, scripted model
    python benchmarks/m3tooleval.py ~/code-act --per-family 1 --reference-harness   # beside the benchmark's main.py
    python benchmarks/m3tooleval.py ~/code-act --reference-harness --api-base URL/v1 --api-model NAME
    python benchmarks/m3tooleval.py --smallest --reference-harness    # seconds: a look-alike main.py, scripted model

PATH is a checkout of github.com/xingyaoww/code-act (or its scripts/eval/m3tooleval folder). Every LM call is
fresh (no response cache). The paper's action modes map onto the arms: code = codemode, JSON = direct, text = react.
Both count a turn as one LM reply and stop at 10. `--scaffold m3tooleval` runs the benchmark's own rules (a wrong
answer is told so and the run goes on; success is any accepted answer within the limit); `plain` and `guided` end
at the first answer.

--reference-harness runs the checkout's own main.py, unmodified, in a venv of its own, on the same tasks and an
OpenAI-compatible endpoint (the one named, or the embedded model served by llama.cpp's server), and the harness
under the m3tooleval preset on the same model, and prints both outcomes per task and mode, the agreement and where
disagreeing runs diverge (benchmarks/_m3tooleval_reference.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness.adapters  # noqa: F401  registers the published benchmarks
from benchmarks import _m3tooleval_reference as reference
from harness.agents.scaffold import Scaffold, load_scaffold
from harness.analysis.stats import wilson
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


def choose(suite: Suite, args: argparse.Namespace) -> tuple[tuple[str, ...], str]:
    """The tasks the command line names (--tasks, --per-family, else all) and a line saying which."""
    if args.tasks:
        task_ids = tuple(args.tasks.split(","))
        return task_ids, f"{len(task_ids)} named task(s): {', '.join(task_ids)}"
    if args.per_family:
        task_ids = stratified(suite, args.per_family, args.seed)
        return task_ids, f"stratified subset, {args.per_family} per family (seed {args.seed}): {', '.join(task_ids)}"
    return tuple(t.id for t in suite.tasks), f"all {len(suite.tasks)} tasks"


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
        provider=None, scaffold: str | Scaffold = "", api_base: str | None = None) -> tuple[Path, float]:
    rules = load_scaffold(scaffold) if isinstance(scaffold, str) and scaffold else scaffold or None
    config = RunConfig(suite=suite, model=model, arms=arms, task_ids=task_ids, out_dir=out, cache="off",
                       timeout_s=3600,  # a busy 2-core machine is slow, not wrong
                       scaffold=rules, api_base=api_base)
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


def compare_with_reference(path: Path, task_ids: tuple[str, ...], modes: tuple[str, ...], out: Path,
                           endpoint: reference.Endpoint | None, harness_model: str, python: Path | None,
                           venv_dir: Path, provider=None, turn_limit: int = 0) -> tuple[str, Path]:
    """Both harnesses on the same tasks and model: the checkout's main.py in each mode, then the harness's arm for
    each mode under the m3tooleval preset (the same endpoint, unless `harness_model` names another model).
    `turn_limit` (0: the benchmark's 10) sets both sides' limit, for a check that has to fit a slow machine."""
    from harness.adapters.m3tooleval import PROTOCOL, benchmark_folder, load_checkout

    rules = load_scaffold(PROTOCOL.name)
    if turn_limit:
        rules = replace(rules, name=f"{PROTOCOL.name}-{turn_limit}turns", turn_limit=turn_limit)

    folder = benchmark_folder(path)
    suite = load_suite(f"m3tooleval:{folder}")
    task_ids = task_ids or tuple(t.id for t in suite.tasks)
    tools_of = {name: tuple(family.tools) for name, family in load_checkout(folder).families.items()}
    python = python or reference.reference_python(venv_dir)
    arms = tuple(reference.MODES[m][1] for m in modes)
    out.mkdir(parents=True, exist_ok=True)
    served = contextlib.nullcontext(endpoint) if endpoint else reference.served_embedded_model(out / "server.log")
    with served as at:
        print(f"reference harness: {folder / 'main.py'} on {at.api_base} (model {at.model}), modes "
              f"{', '.join(modes)}, {len(task_ids)} task(s)", flush=True)
        ours = {m: reference.reference_outcomes(reference.run_reference(python, folder, at, m, task_ids,
                                                                        out / "reference", rules.turn_limit),
                                                m, tools_of) for m in modes}
        if not harness_model:  # the same endpoint
            results, _ = run(suite, f"openai/{at.model}", arms, task_ids, out / "harness", provider, rules,
                             api_base=at.api_base)
    if harness_model:  # another model string for the same weights (e.g. `local`, in process), after the server
        results, _ = run(suite, harness_model, arms, task_ids, out / "harness", provider, rules)
    theirs = reference.harness_outcomes(results, tools_of)
    return reference.report(reference.pairs(task_ids, modes, ours, theirs)), results


def smallest_reference(out: Path) -> tuple[str, Path]:
    """The look-alike checkout's main.py (no model: a fixed script) beside the harness on a scripted model."""
    from tests.adapters.lookalike import solving_policy, write_ipython_stand_in, write_lookalike

    checkout = write_lookalike(out / "code-act")
    stand_in = write_ipython_stand_in(out / "ipython")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(stand_in), os.environ.get("PYTHONPATH", "")]))
    return compare_with_reference(checkout, (), ("code", "json"), out / "compare",
                                  reference.Endpoint("http://127.0.0.1:9/v1", "lookalike"), "scripted:lookalike",
                                  Path(sys.executable), out / "venv",
                                  policy_provider("scripted:lookalike", solving_policy))


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
    parser.add_argument("--scaffold", default="", help="plain | guided | m3tooleval | FILE.yaml (default: the "
                        "model's own); m3tooleval is the benchmark's own protocol (answer feedback, 10 turns)")
    parser.add_argument("--reference-harness", action="store_true",
                        help="run the checkout's own main.py beside the harness (m3tooleval preset), same tasks/model")
    parser.add_argument("--modes", default="code,json", help="with --reference-harness: code, json, text")
    parser.add_argument("--api-base", default="", help="with --reference-harness: an OpenAI-compatible endpoint "
                        "(default: serve the embedded model with llama.cpp's server)")
    parser.add_argument("--api-model", default="", help="the model name the --api-base endpoint serves")
    parser.add_argument("--harness-model", default="", help="with --reference-harness: the harness's model string "
                        "(default: the same endpoint, openai/NAME; `local` runs the same GGUF in process)")
    parser.add_argument("--turn-limit", type=int, default=0, help="with --reference-harness: both sides' turn limit "
                        "(default: the benchmark's 10; lower only to fit a slow machine, and say so)")
    parser.add_argument("--reference-python", type=Path, help="an interpreter with main.py's packages (default: a "
                        "venv created once under the harness cache)")
    args = parser.parse_args()
    configure_environment()
    wall = None
    if args.reference_harness:
        from harness.env import cache_dir

        modes = tuple(args.modes.split(","))
        if set(modes) - set(reference.MODES) or bool(args.api_base) != bool(args.api_model):
            parser.error("--modes takes code, json, text; --api-base and --api-model go together")
        with tempfile.TemporaryDirectory() as tmp:
            if args.smallest:
                compared, path = smallest_reference(Path(tmp))
                chosen = "all tasks of the look-alike checkout (its main.py scripted; the harness on a scripted model)"
            else:
                if not args.path:
                    parser.error("give the path of a code-act checkout (or --smallest)")
                suite = load_suite(f"m3tooleval:{args.path}")
                task_ids, chosen = choose(suite, args)
                endpoint = reference.Endpoint(args.api_base, args.api_model) if args.api_base else None
                compared, path = compare_with_reference(Path(args.path).expanduser(), task_ids, modes, args.out,
                                                     endpoint, args.harness_model, args.reference_python,
                                                     cache_dir() / "m3tooleval-reference-venv",
                                                     turn_limit=args.turn_limit)
            print(f"M3ToolEval: the benchmark's main.py beside the harness (scaffold m3tooleval), {chosen}")
            print(f"harness results: {path}\n")
            print(compared)
        return
    if args.smallest:
        with tempfile.TemporaryDirectory() as tmp:
            _, path, wall, chosen = smallest(Path(tmp))
            frame = read_results([path])
    elif args.results:
        path, frame = ", ".join(map(str, args.results)), read_results(args.results)
        chosen = f"the tasks of {'that run' if len(args.results) == 1 else 'those runs'}"
        # runs stopped and started again over the same tasks: a task, arm and epoch counts once (the last file's)
        unique = frame.drop_duplicates(["task_id", "arm", "epoch"], keep="last")
        if len(unique) < len(frame):
            chosen += f"; {len(frame) - len(unique)} run(s) repeated across the files counted once (the last file's)"
        frame = unique
    elif args.path:
        suite = load_suite(f"m3tooleval:{args.path}")
        task_ids, chosen = choose(suite, args)
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
