"""`harness rebuild` and `harness rescore`: finished runs' rows computed again from what the runs recorded, without
running any agent."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli.app import app
from harness.cli.app import console as new_console


@app.command()
def rebuild(
    results: list[Path] = typer.Argument(..., help="results Parquet files or folders"),
) -> None:
    """Recompute each results file's rows from its runs' transcript files (after an upgrade or a fixed count); rows
    of runs recorded before runs wrote transcript files are kept as they are."""
    from harness.run.rebuild import rebuild_all

    console = new_console()
    for path, rebuilt, kept in rebuild_all(results):
        console.print(f"{path}: {rebuilt} row(s) recomputed from transcripts"
                      + (f", {kept} kept as recorded (no transcript file)" if kept else ""))


@app.command()
def rescore(
    results: list[Path] = typer.Argument(..., help="results Parquet files or folders"),
    scorer: str = typer.Option(..., "--scorer", help="as a suite file names it: exact, or '{numeric: {tolerance: "
                               "0.01}}'"),
    out: Path = typer.Option(..., "--out", help="folder for the rescored results (suite/RUN_ID.parquet, with their "
                             "trajectories); the originals are left as they are"),
) -> None:
    """Judge finished runs again with another scorer, from their recorded answers, tool calls and probes; a scorer
    that needs live server state says so."""
    from harness.run.rescore import rescore_all

    console = new_console()
    for done in rescore_all(results, scorer, out):
        console.print(f"{done.path}: {done.runs} run(s) judged again, {done.changed} verdict(s) changed")
