"""`harness optimize`: tune an arm's prompt on a suite's train split, score it on the held-out dev split, save it.

The optimizers' own chatter (tqdm bars, logs) goes to PATH.log next to the program; the terminal shows one
progress bar with an ETA. Ctrl-C keeps the best program found so far and saves it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any, TextIO

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from harness.agents.arms import ARM_NAMES, OPTIMIZED_ARM
from harness.cli.app import MORE_THAN_ZERO, NOT_NEGATIVE, Table, app, stop_on_signals
from harness.cli.app import console as new_console
from harness.cli.run import SCAFFOLD_HELP
from harness.defaults import DEFAULT_TIMEOUT_S, DEFAULT_TOOL_TIMEOUT_S


class _Bar:
    """The optimizer's ProgressHook as one rich bar: episodes done of the estimate, and the current phase."""

    def __init__(self, progress: Progress):
        self.progress, self.id = progress, None
        self.done = {"dev before": [], "optimize": [], "dev after": []}

    def planned(self, episodes: int) -> None:
        self.id = self.progress.add_task("dev before", total=episodes, best="")

    def episode(self, phase: str, task_id: str, score: float) -> None:
        self.done[phase].append(score)
        total = self.progress.tasks[0].total or 0
        completed = sum(len(v) for v in self.done.values())
        if phase == "dev after" and len(self.done["dev after"]) == 1:
            total = completed + len(self.done["dev before"]) - 1  # the optimizer is done: only dev is left
        scores = self.done[phase]
        self.progress.update(self.id, completed=completed, total=max(total, completed), description=phase,
                             best=f"mean score {sum(scores) / len(scores):.2f}")


@contextmanager
def _quiet_into(log: TextIO) -> Iterator[None]:
    """DSPy's and GEPA's prints, progress bars and logs go to the log file for the duration."""
    loggers = [logging.getLogger(name) for name in ("dspy", "gepa", "optuna")]
    saved = [(lg, lg.handlers[:], lg.propagate) for lg in loggers]
    handler = logging.StreamHandler(log)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    for lg in loggers:
        lg.handlers, lg.propagate = [handler], False
    try:
        with redirect_stdout(log), redirect_stderr(log):
            yield
    finally:
        for lg, handlers, propagate in saved:
            lg.handlers, lg.propagate = handlers, propagate


class _SharedEngine:
    """One engine for every LM copy an optimizer makes: DSPy deep-copies candidate programs, and with them any
    LM bound to their predictors (SIMBA binds one); an in-process model must not be copied."""

    def __init__(self, inner: Any):
        self.inner = inner

    def complete(self, request: Any) -> Any:
        return self.inner.complete(request)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close:
            close()

    def __deepcopy__(self, memo: dict) -> _SharedEngine:
        return self


def optimizer_lm(model: str, api_base: str | None, cache: bool, temperature: float = 0.0) -> Any:
    """A dspy.LM for any task of the suite: an engine-backed model (scripted replays are per task)."""
    from harness.errors import UserError
    from harness.models import check_model, resolve_model
    from harness.models.engine import make_lm
    from harness.models.families import family_of

    check_model(model)
    # an optimizer evaluates the same candidate on the same example again and again: it reuses any stored answer
    provider = (resolve_model(model, api_base=api_base, cache="replay" if cache else "off")
                if family_of(model).optimizable else None)
    engine = getattr(provider, "engine", None)
    if engine is None:
        raise UserError(f"model '{model}' replays fixed answers and cannot be optimized: use 'local', "
                        "'local:PATH.gguf' or a LiteLLM model string")
    return make_lm(model, _SharedEngine(engine), max_tokens=getattr(provider, "max_tokens", 1024),
                   temperature=temperature)


def _score(score: Any) -> str:
    return "not measured" if score is None else f"{score.success_rate:.0%} ({len(score.passed)} passed)"


@app.command()
def optimize(
    suite: str = typer.Option(..., "--suite", help="suite name (tasks/NAME.yaml), YAML path, or m3tooleval:PATH"),
    arm: str = typer.Option(OPTIMIZED_ARM, "--arm", help=" | ".join(ARM_NAMES)),
    optimizer: str = typer.Option(..., "--optimizer", help="bootstrap | mipro | gepa | simba"),
    train: str = typer.Option(None, "--train", help="train task ids (a,b) or a fraction of the suite [0.5]"),
    dev: str = typer.Option(None, "--dev", help="held-out dev task ids or a fraction (default: every task not in train)"),
    seed: int = typer.Option(0, "--seed", **NOT_NEGATIVE, help="seed for fraction splits and the optimizer"),
    budget: int = typer.Option(None, "--budget", min=1,
                               help="episodes (task runs) the optimizer may spend on train [4 per train task]"),
    max_demos: int = typer.Option(2, "--max-demos", min=0, help="demonstrations per predictor at most"),
    model: str = typer.Option("local", "--model", envvar="HARNESS_MODEL", help="model whose prompt is tuned"),
    api_base: str = typer.Option(None, "--api-base", envvar="HARNESS_API_BASE"),
    reflection_model: str = typer.Option(None, "--reflection-model",
                                         help="proposes instructions (gepa, mipro, simba) [--model]"),
    reflection_api_base: str = typer.Option(None, "--reflection-api-base"),
    no_cache: bool = typer.Option(False, "--no-cache", help="bypass the LM response cache"),
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout", **MORE_THAN_ZERO, help="per-episode timeout (s)"),
    tool_timeout: float = typer.Option(DEFAULT_TOOL_TIMEOUT_S, "--tool-timeout", **MORE_THAN_ZERO,
                                       help="per-tool-call limit (s)"),
    out: Path = typer.Option(..., "--out", help="where to save the program (JSON)"),
    scaffold: str = typer.Option(None, "--scaffold", envvar="HARNESS_SCAFFOLD", help=SCAFFOLD_HELP),
) -> None:
    """Tune the arm's instructions and demos with a DSPy optimizer; save the program for `harness run --program`."""
    from harness.agents.programs import TUNABLE_ARMS, new_program, program_hash, save_program, tuned_state
    from harness.agents.scaffold import describe, resolve_scaffold
    from harness.errors import UserError
    from harness.mcp.registry import check_servers
    from harness.optimize.optimizer import (
        DEFAULT_EPISODES_PER_TRAIN_TASK,
        OPTIMIZERS,
        OptimizeConfig,
        split_tasks,
    )
    from harness.optimize.optimizer import optimize as run_optimizer
    from harness.tasks.registry import load_suite

    if optimizer not in OPTIMIZERS:
        raise UserError(f"unknown optimizer '{optimizer}' (known: {', '.join(OPTIMIZERS)})")
    if arm not in TUNABLE_ARMS:
        raise UserError(f"cannot optimize arm '{arm}' (known: {', '.join(TUNABLE_ARMS)})")
    if out.suffix != ".json":
        raise UserError(f"--out {out}: a program is saved as JSON (PATH.json)")
    loaded = load_suite(suite)
    check_servers(loaded)
    train_ids, dev_ids = split_tasks(loaded, train, dev, seed)
    reflection_model = reflection_model or model
    config = OptimizeConfig(suite=loaded, arm=arm, optimizer=optimizer, model=model, train_ids=train_ids,
                            dev_ids=dev_ids, budget=budget or DEFAULT_EPISODES_PER_TRAIN_TASK * len(train_ids),
                            seed=seed, max_demos=max_demos, reflection_model=reflection_model, timeout_s=timeout,
                            tool_timeout_s=tool_timeout, scaffold=resolve_scaffold(scaffold, model))
    lm = optimizer_lm(model, api_base, not no_cache)
    reflection = None
    if optimizer != "bootstrap":
        reflection = lm if (reflection_model, reflection_api_base) == (model, None) else \
            optimizer_lm(reflection_model, reflection_api_base or None, not no_cache, temperature=1.0)

    console = new_console(stderr=True)
    log_path = out.with_suffix(".log")
    console.print(f"optimize {arm} on {loaded.name} with {optimizer}, model {model}: "
                  f"{len(train_ids)} train task(s), {len(dev_ids)} held-out dev task(s), budget {config.budget} "
                  f"episode(s); {describe(config.rules)} (saved with the program); optimizer log: {log_path}",
                  soft_wrap=True)
    progress = Progress(TextColumn("{task.description:<10}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[best]}"), TimeElapsedColumn(), TextColumn("eta"),
                        TimeRemainingColumn(), console=console)
    stop_on_signals()  # Ctrl-C or SIGTERM: the best program so far is saved
    log_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(log_path, "w", encoding="utf-8") as log, progress, _quiet_into(log):
            program = run_optimizer(config, lm, reflection, progress=_Bar(progress))
    except KeyboardInterrupt:
        console.print("interrupted before optimizing started: nothing to save")
        raise typer.Exit(130) from None
    save_program(program, out)

    table = Table("", "held-out dev tasks", title=f"program {program.hash}")
    table.add_row("built-in prompt", _score(program.dev_before))
    table.add_row(f"{optimizer} program", _score(program.dev_after))
    new_console().print(table)
    if program.hash == program_hash(tuned_state(new_program(arm, config.rules))):
        console.print("note: the optimizer found nothing to change: the saved program is the built-in prompt")
    if program.interrupted:
        console.print(f"interrupted: saved the best program found in {program.episodes} episode(s) to {out}")
    print(f"program: {out} (hash {program.hash}, {program.episodes} optimizer episode(s))")
    tasks = ",".join(dev_ids)
    if tasks:
        api = f" --api-base {api_base}" if api_base else ""
        base = f"harness run --suite {suite} --arms {arm} --model {model}{api} --tasks {tasks} --out results"
        print("compare on the held-out tasks:")
        print(f"  {base}")
        print(f"  {base} --program {out}")
        print(f"  harness report results/{loaded.name}")
    if program.interrupted:
        raise typer.Exit(130)
