"""`harness plan`: how many tasks and epochs a comparison needs to detect a difference of D points in success."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from harness.cli.app import ALPHA, FRACTION, POWER, app
from harness.cli.app import console as new_console


@app.command()
def plan(
    results: list[Path] = typer.Argument(None, help="results Parquet files or folders whose repeats measure the noise"),
    detect: float = typer.Option(..., "--detect", **FRACTION, help="the difference in success to detect (0.1: ten points)"),
    alpha: float = typer.Option(0.05, "--alpha", **ALPHA, help="the test's alpha (as `harness gate --alpha`)"),
    power: float = typer.Option(0.8, "--power", **POWER, help="the chance of detecting a true difference of --detect"),
    two_sided: bool = typer.Option(False, "--two-sided", help="any change (as the report tests), not a drop (as the "
                                   "gate tests)"),
    tasks: int = typer.Option(None, "--tasks", min=2, help="what this many tasks detect (default: the results' tasks)"),
    max_epochs: int = typer.Option(5, "--max-epochs", min=1, help="plan up to this many epochs"),
    flip_rate: float = typer.Option(None, "--flip-rate", **FRACTION, help="state the noise: the share of tasks whose outcome "
                                    "differs between two runs"),
    mixture: str = typer.Option(None, "--mixture", help="state the noise: task success chances, e.g. 0.7 or "
                                "0.5@0.95+0.3@0.6+0.2@0.1 (shares of tasks @ chance)"),
) -> None:
    """Tasks and epochs needed to detect --detect, from measured repeats or stated noise; and what each epoch buys."""
    from harness.analysis.noise import tasks_needed
    from harness.analysis.plan import noise_from_flip_rate, noise_from_mixture, noise_from_results
    from harness.analysis.plan import plan as make_plan
    from harness.errors import UserError
    from harness.run.records import read_results

    stated = [name for name, value in (("--flip-rate", flip_rate), ("--mixture", mixture)) if value is not None]
    if len(stated) + bool(results) != 1:
        raise UserError("give the noise one way: results files with repeats, --flip-rate F or --mixture CHANCES")
    if not 0.0 < alpha < 0.5 or not 0.5 <= power < 1.0:
        raise UserError(f"--alpha {alpha} must be between 0 and 0.5 and --power {power} at least 0.5 and below 1")
    if results:
        frame = read_results(results)
        noise = noise_from_results(frame, ", ".join(map(str, results)))
        tasks = tasks or int(frame[["suite", "task_id"]].drop_duplicates().shape[0])
    else:
        noise = noise_from_flip_rate(flip_rate) if flip_rate is not None else noise_from_mixture(mixture)
    sided = "two-sided" if two_sided else "drop"
    rows = make_plan(noise, detect, alpha, power, sided, tasks, max_epochs)  # type: ignore[arg-type]
    console = new_console()
    console.print(f"noise: {noise.source}", highlight=False, soft_wrap=True)
    test = "two-sided" if two_sided else "one-sided (a drop, as the gate tests)"
    console.print(f"to detect {detect * 100:.1f} points in success with {power:.0%} power, {test} alpha {alpha:g}, "
                  "paired, tasks as the unit:", highlight=False, soft_wrap=True)
    columns = ["epochs", "tasks needed", "runs per arm"] + ([f"detectable with {tasks} tasks"] if tasks else [])
    table = Table(*columns)
    for row in rows:
        needed = f"{row.tasks_needed:,}" if row.tasks_needed else "more than 1,000,000"
        runs = f"{row.tasks_needed * row.epochs:,}" if row.tasks_needed else "-"
        cells = [str(row.epochs), needed, runs]
        if tasks:
            cells.append(f"{row.detectable_now * 100:.1f} points" if row.detectable_now < 1 else "nothing")
        table.add_row(*cells)
    console.print(table)
    first, last = rows[0], rows[-1]
    if first.tasks_needed and last.tasks_needed and len(rows) > 1:
        runs = last.tasks_needed * max_epochs
        console.print(f"what epochs buy: {max_epochs} epochs need {last.tasks_needed:,} tasks instead of "
                      f"{first.tasks_needed:,}, for {runs:,} runs per arm instead of {first.tasks_needed:,}: here a run "
                      f"that repeats a task is worth {first.tasks_needed / runs:.2f} of a run of a new task (assuming "
                      "the change moves every task alike); fewer than "
                      f"{tasks_needed(alpha, sided)} tasks can never be significant", highlight=False, soft_wrap=True)
