"""The Python API a team scripts: `harness.evaluate(tasks, arms=..., model=...)` runs tasks (a suite, a suite's
name, or Task values built in Python) through arms (built in, registered, or named by what runs them) on a model,
under a scaffold and limits, and returns the results frame and every run's transcript. `evaluate_async` is the same
inside a running event loop (a notebook, a service); `evaluate` runs its own loop.

It is `harness run` without the command line: the same runner, records, transcripts, checks and files, so a
report, a gate or the viewer reads what it wrote like any run's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from harness.agents.arms import DEFAULT_ARMS
from harness.agents.scaffold import Scaffold, load_scaffold
from harness.errors import UserError
from harness.limits import Limits
from harness.run.config import RunConfig
from harness.run.prepare import prepare
from harness.run.records import read_results
from harness.run.runner import Runner
from harness.tasks.registry import load_suite
from harness.tasks.task import Suite, Task
from harness.trace.trajectory import Trajectory, trajectory_from_json

IN_MEMORY = "in-memory:"  # the load spec of a suite built from Task values (nothing to load it from again)


@dataclass(frozen=True)
class Evaluation:
    """What an evaluation gives back: one row per run (`frame`, the results file's columns), each run's transcript by
    sample id (`transcripts`), and where they were written (`path`, its trajectories beside it)."""

    frame: Any  # pandas.DataFrame
    transcripts: dict[str, Trajectory]
    path: Path
    run_id: str


def in_memory_suite(tasks: Iterable[Task], name: str = "evaluate") -> Suite:
    """A suite of Task values built in Python (ids unique, each with its servers)."""
    given = tuple(tasks)
    if not given or not all(isinstance(task, Task) for task in given):
        raise UserError("harness.evaluate takes a suite, a suite's name, or a non-empty list of harness.Task values")
    seen: set[str] = set()
    for task in given:
        if task.id in seen:
            raise UserError(f"task '{task.id}': field 'id': duplicate task id (ids are unique in a suite)")
        if not task.servers:
            raise UserError(f"task '{task.id}': field 'servers': no servers (name the servers its tools come from)")
        seen.add(task.id)
    return Suite(name=name, description="tasks given to harness.evaluate", tasks=given,
                 path=Path(f"<tasks given to harness.evaluate as suite '{name}'>"), spec=f"{IN_MEMORY}{name}")


def _suite(tasks: Suite | str | Iterable[Task], name: str) -> Suite:
    if isinstance(tasks, Suite):
        return tasks
    if isinstance(tasks, str):
        return load_suite(tasks)
    return in_memory_suite(tasks, name)


def _config(suite: Suite, model: str, arms: Iterable[str], scaffold: Scaffold | str | None, limits: Limits | None,
            options: dict[str, Any]) -> RunConfig:
    rules = load_scaffold(scaffold) if isinstance(scaffold, str) else scaffold
    limit_options = {f.name: getattr(limits, f.name) for f in fields(Limits)} if limits is not None else {}
    unknown = set(options) - {f.name for f in fields(RunConfig)}
    if unknown:
        raise UserError(f"harness.evaluate: unknown option {', '.join(sorted(unknown))}")
    return RunConfig(suite=suite, model=model, arms=tuple(arms), scaffold=rules, **limit_options, **options)


def transcripts_of(path: Path) -> dict[str, Trajectory]:
    """Every run's transcript in a results file's trajectories, by sample id (the last one written for each)."""
    import json

    lines = path.with_name(path.name.replace(".parquet", ".trajectories.jsonl"))
    found: dict[str, Trajectory] = {}
    if lines.exists():
        for line in lines.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a crash
            found[str(entry.get("sample_id"))] = trajectory_from_json(entry)
    return found


async def evaluate_async(tasks: Suite | str | Iterable[Task], *, model: str, arms: Iterable[str] = DEFAULT_ARMS,
                         scaffold: Scaffold | str | None = None, limits: Limits | None = None,
                         name: str = "evaluate", **options: Any) -> Evaluation:
    """Run `tasks` through `arms` on `model` inside the running event loop and return the results and transcripts.
    `scaffold`: a preset's name, a YAML file or a Scaffold (None: the model's default); `limits`: the run's Limits
    (None: the defaults); `options`: any other RunConfig field (epochs, out_dir, run_id, max_concurrency,
    api_base, user_model, ...). An existing `run_id` goes on where that run stopped, as `--resume` does."""
    config = _config(_suite(tasks, name), model, arms, scaffold, limits, options)
    prepare(config)
    summary = await Runner(config).run()
    return Evaluation(frame=read_results([summary.path]), transcripts=transcripts_of(summary.path),
                      path=summary.path, run_id=summary.run_id)


def evaluate(tasks: Suite | str | Iterable[Task], *, model: str, arms: Iterable[str] = DEFAULT_ARMS,
             scaffold: Scaffold | str | None = None, limits: Limits | None = None, name: str = "evaluate",
             **options: Any) -> Evaluation:
    """`evaluate_async` with an event loop of its own (blocking); inside a running loop, await evaluate_async."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(evaluate_async(tasks, model=model, arms=arms, scaffold=scaffold, limits=limits, name=name,
                                          **options))
    raise UserError("harness.evaluate was called inside a running event loop: use `await harness.evaluate_async(...)`")
