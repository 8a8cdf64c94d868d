"""`harness report` and `harness gate`: reading results files."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from harness.cli import app


@app.command()
def report(
    results: list[Path] = typer.Argument(..., help="results Parquet files or folders"),
    out: Path = typer.Option(Path("reports/latest"), "--out", help="folder for report.md, report.html, PNGs"),
    title: str = typer.Option("Direct tool calls vs code mode", "--title"),
) -> None:
    """Compare arms (and models/programs) with intervals: report.md, a self-contained report.html, figures."""
    from harness.records import read_results
    from harness.report import build_report

    paths = build_report(read_results(results), out, title)
    console = Console()
    console.print(paths.markdown.read_text().split("## Summary")[0].strip())
    console.print(f"\nreport: {paths.markdown}\nhtml:   {paths.html}\nfigures: {len(paths.figures)} in {out}")


@app.command()
def gate(
    results: list[Path] = typer.Argument(..., help="results Parquet files or folders"),
    min_success: list[str] = typer.Option([], "--min-success", help="ARM=RATE, repeatable"),
    baseline: Path = typer.Option(None, "--baseline", help="an earlier results file to compare with"),
    max_drop: float = typer.Option(0.05, "--max-drop", help="largest allowed drop in success vs the baseline"),
    junit: Path = typer.Option(None, "--junit", help="write JUnit XML here"),
) -> None:
    """Exit 1 when a success threshold or the baseline comparison fails (2 on usage errors)."""
    from harness.gate import run_gate
    from harness.records import read_results

    frame = read_results(results)
    before = read_results([baseline]) if baseline is not None else None
    checks = run_gate(frame, min_success, before, max_drop, junit)
    console = Console()
    for check in checks:
        console.print(f"{'PASS' if check.passed else 'FAIL'}  {check.message}", soft_wrap=True)
    failed = sum(not c.passed for c in checks)
    console.print(f"{len(checks) - failed} passed, {failed} failed")
    if failed:
        raise typer.Exit(1)
