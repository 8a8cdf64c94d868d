"""What a session's skills and workspace buy: the `sessions` suite with both parts on (the model's default scaffold)
and both off (the same scaffold with `skills` and `workspace` false), per position in the session: success,
tokens, turns and latency. Does the fourth task cost less than the first, and does success hold?

    python benchmarks/sessions.py                                # the embedded model, code mode (slow: ~30 min)
    python benchmarks/sessions.py --model scripted:reference --arms codemode,codemode-discover,direct
    python benchmarks/sessions.py --results results/sessions-bench   # the table of an earlier (partial) run
    python benchmarks/sessions.py --smallest                     # scripted reference model, two tasks, seconds

Each configuration is one run named `<model>-<on|off>` under --out, so an interrupted measurement continues where
it stopped when run again (finished runs are kept; a session resumes from the state on disk).
"""

from __future__ import annotations

import argparse
import asyncio
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd

from harness.agents.arms import get_arm
from harness.agents.scaffold import Scaffold, default_scaffold
from harness.env import configure_environment
from harness.run.records import read_results
from harness.run.runner import RunConfig, Runner, new_pool
from harness.tasks.suite import load_suite


def scaffolds(model: str) -> dict[str, Scaffold]:
    """The model's default scaffold with the session's parts on, and the same with both off."""
    base = default_scaffold(model)
    return {"on": base, "off": replace(base, name=f"{base.name}-no-session-parts", skills=False, workspace=False)}


def run_id(model: str, parts: str) -> str:
    return f"{re.sub(r'[^A-Za-z0-9]+', '-', model).strip('-')}-{parts}"


async def run_all(model: str, arms: tuple[str, ...], out: Path, task_ids: tuple[str, ...], cache: bool,
                  parts: tuple[str, ...] = ("on", "off")) -> list[Path]:
    """The configurations named in `parts` in turn, sharing one sandbox pool."""
    pool = new_pool(1) if any(get_arm(a).needs_sandbox for a in arms) or model == "scripted:reference" else None
    paths = []
    try:
        if pool is not None:
            await pool.start(1)  # warm, so the first run's latency is the task's own
        for which, scaffold in scaffolds(model).items():
            if which not in parts:
                continue
            config = RunConfig(suite=load_suite("sessions"), model=model, arms=arms, task_ids=task_ids, out_dir=out,
                               run_id=run_id(model, which), cache="replay" if cache else "off", scaffold=scaffold,
                               timeout_s=3600)
            print(f"{config.run_id}: {len(task_ids) or 'every'} task(s) x {len(arms)} arm(s), scaffold "
                  f"{scaffold.name}", flush=True)
            paths.append((await Runner(config, pool=pool).run()).path)
    finally:
        if pool is not None:
            await pool.close()
    return paths


def parts_of(frame: pd.DataFrame) -> pd.Series:
    return frame.run_id.str.rsplit("-", n=1).str[-1]


def table(frame: pd.DataFrame) -> str:
    """One line per arm, session parts (on/off) and position: runs passed, mean tokens, turns, latency, and
    (parts on) the skills reused; then each arm's last position against its first."""
    frame = frame.assign(parts=parts_of(frame))
    lines = [("| arm | skills + workspace | position | passed | tokens / run | turns / run | latency (s) | "
              "runs reusing a skill |"), "|---|---|---|---|---|---|---|---|"]
    for (arm, parts, position), runs in frame.groupby(["arm", "parts", "session_position"], sort=True):
        reused = int((runs.skills_used.fillna("") != "").sum())
        lines.append(f"| {arm} | {parts} | {int(position) + 1} | {int(runs.success.sum())}/{len(runs)} | "
                     f"{runs.total_tokens.mean():,.0f} | {runs.turns.mean():.1f} | {runs.latency_s.mean():.1f} | "
                     f"{reused if parts == 'on' else '-'} |")
    notes = []
    for (arm, parts), runs in frame.groupby(["arm", "parts"], sort=True):
        first, last = runs.session_position.min(), runs.session_position.max()
        if first == last:
            continue
        head, tail = runs[runs.session_position == first], runs[runs.session_position == last]
        notes.append(f"{arm}, parts {parts}: position {int(last) + 1} costs "
                     f"{tail.total_tokens.mean() / max(head.total_tokens.mean(), 1):.2f}x the tokens of position "
                     f"{int(first) + 1}, success {int(tail.success.sum())}/{len(tail)} vs "
                     f"{int(head.success.sum())}/{len(head)}")
    return "\n".join([*lines, "", *notes])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="local")
    parser.add_argument("--arms", default="codemode", help="comma-separated arms (default: codemode)")
    parser.add_argument("--tasks", default="", help="comma-separated task ids (default: the whole suite)")
    parser.add_argument("--parts", default="on,off", help="which configurations to run: on, off, or on,off (default)")
    parser.add_argument("--out", type=Path, default=Path("results/sessions-bench"))
    parser.add_argument("--no-cache", action="store_true", help="bypass the LM response cache")
    parser.add_argument("--results", type=Path, help="print the table of earlier results instead of running")
    parser.add_argument("--smallest", action="store_true", help="scripted reference model, two tasks of a session")
    args = parser.parse_args()
    configure_environment()
    if args.results:
        print(table(read_results([args.results])))
        return
    model, tasks = args.model, tuple(t for t in args.tasks.split(",") if t)
    if args.smallest:
        model, tasks = "scripted:reference", ("net-revenue-goran-tanaka", "net-revenue-emeka-ito")
    arms = tuple(a for a in args.arms.split(",") if a)
    parts = tuple(p for p in args.parts.split(",") if p)
    paths = asyncio.run(run_all(model, arms, args.out, tasks, cache=not args.no_cache, parts=parts))
    print(table(read_results(paths)))


if __name__ == "__main__":
    main()
