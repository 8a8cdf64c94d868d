"""`harness gate`: exit 1 when a success threshold or the baseline comparison fails (2 on usage errors)."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.agents.arms import DEFAULT_ARMS
from harness.cli.app import ALPHA, FRACTION, POWER, Table, app
from harness.cli.app import console as new_console


@app.command()
def gate(
    results: list[Path] = typer.Argument(..., help="results Parquet files or folders"),
    min_success: list[str] = typer.Option([], "--min-success", help=f"ARM=RATE, repeatable (e.g. {DEFAULT_ARMS[-1]}=0.7)"),
    baseline: Path = typer.Option(None, "--baseline", help="an earlier results file to compare with"),
    max_drop: float = typer.Option(0.05, "--max-drop", **FRACTION, help="largest allowed drop in success vs the baseline"),
    junit: Path = typer.Option(None, "--junit", help="write JUnit XML here"),
    allow_scaffold_change: bool = typer.Option(False, "--allow-scaffold-change",
                                               help="compare with a baseline run under a different scaffold"),
    alpha: float = typer.Option(0.05, "--alpha", **ALPHA, help="a drop must be significant at this level (one-sided paired "
                                "sign-flip test over tasks): an unchanged agent fails at most this share of gates"),
    power: float = typer.Option(0.8, "--power", **POWER, help="the power each comparison's detectable drop is stated at"),
    rule: str = typer.Option("significant-drop", "--rule", help="significant-drop (drop > --max-drop and "
                             "significant at --alpha) or measured-drop (the older rule: the measured drop alone)"),
    require_detectable: bool = typer.Option(False, "--require-detectable", help="fail a comparison whose tasks and "
                                            "epochs cannot detect a --max-drop drop at --power"),
    min_success_bound: str = typer.Option("estimate", "--min-success-bound", help="estimate (the measured rate) or "
                                          "lower-bound (its lower 1 - alpha confidence bound) must meet --min-success"),
) -> None:
    """Check success rates against thresholds and a baseline; print a table, one line per failure. The first lines
    say how many runs the response cache answered, and warn when it answered them all (nothing was measured)."""
    from harness.analysis.cache_use import cache_sentence, cache_use, nothing_measured_warning
    from harness.analysis.gate import run_gate
    from harness.run.records import read_results

    frame = read_results(results)
    before = read_results([baseline]) if baseline is not None else None
    checks = run_gate(frame, min_success, before, max_drop, junit, allow_scaffold_change, alpha=alpha, power=power,
                      rule=rule, require_detectable=require_detectable,  # type: ignore[arg-type]  # checked there
                      success_bound=min_success_bound)  # type: ignore[arg-type]
    console = new_console()
    console.width = max(console.width, 120)
    use = cache_use(frame)
    for line in (cache_sentence(use), nothing_measured_warning(use)):
        if line:
            console.print(line, soft_wrap=True, highlight=False, markup=False)
    table = Table("check", "measured [95% CI]", "limit", "result")
    for check in checks:
        result = "skipped" if check.skipped else "PASS" if check.passed else "[bold red]FAIL[/]"
        table.add_row(check.name, check.measured, check.limit, f"{result} ({check.note})" if check.note else result)
    console.print(table)
    failed = [c for c in checks if not c.passed]
    for check in checks:
        if not check.passed or check.note:
            console.print(f"{'FAIL' if not check.passed else 'NOTE'}  {check.message}", soft_wrap=True,
                          highlight=False)
    console.print(f"{len(checks) - len(failed)} passed, {len(failed)} failed", highlight=False)
    if failed:
        raise typer.Exit(1)
