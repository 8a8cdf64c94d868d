"""`harness validate`: every task's reference passes its scorer and a wrong answer fails it."""

from __future__ import annotations

import asyncio

import typer
from rich.console import Console
from rich.table import Table

from harness.cli.app import app


@app.command()
def validate(suite: str = typer.Option(..., "--suite", envvar="HARNESS_SUITE", help="suite name or path"),
             scaffold: str = typer.Option("guided", "--scaffold", envvar="HARNESS_SCAFFOLD",
                                          help="the references run under this scaffold's id guard: guided (on) | "
                                               "plain (off) | FILE.yaml")) -> None:
    """Run each reference in the sandbox against fresh servers; exit 1 if any scorer or reference is wrong."""
    from harness.agents.scaffold import load_scaffold
    from harness.mcp.servers import check_servers
    from harness.run.validate import validate_suite
    from harness.tasks.suite import load_suite

    rules = load_scaffold(scaffold)
    loaded = load_suite(suite)
    check_servers(loaded)
    console = Console()
    with console.status(f"validating {loaded.name} ({len(loaded.tasks)} tasks)") as status:
        checks = asyncio.run(validate_suite(
            loaded, on_check=lambda c: status.update(f"validated {c.task_id}"), scaffold=rules))
    table = Table("task", "category", "reference answer", "passes", "wrong fails", "tools", "s", "problem",
                  title=f"suite {loaded.name}")
    for c in checks:
        problem = (c.reference_error or ("" if c.passes_on_reference else c.reference_reason)
                   or ("" if c.fails_on_wrong else f"scorer cannot fail: {c.wrong_reason}"))
        table.add_row(c.task_id, c.category, c.reference_answer[:40], "yes" if c.passes_on_reference else "[red]no[/]",
                      "yes" if c.fails_on_wrong else "[red]no[/]", str(c.tool_calls), f"{c.seconds:.2f}",
                      problem[:80])
    console.print(table)
    bad = [c for c in checks if not c.ok]
    console.print(f"{len(checks) - len(bad)} passed, {len(bad)} failed")
    if bad:
        raise typer.Exit(1)
