"""`harness validate`: every task's reference passes its scorer, and a wrong answer (or wrong tool calls) fails it."""

from __future__ import annotations

import asyncio

import typer
from rich.table import Table

from harness.cli.app import CATALOGUE_SIZE_HELP, app, catalogue_sizes
from harness.cli.app import console as new_console


@app.command()
def validate(suite: str = typer.Option(..., "--suite", envvar="HARNESS_SUITE",
                                      help="suite name, YAML path, or a benchmark: m3tooleval:PATH"),
             scaffold: str = typer.Option("guided", "--scaffold", envvar="HARNESS_SCAFFOLD",
                                          help="the references run under this scaffold's id guard: guided (on) | "
                                               "plain (off) | FILE.yaml"),
             catalogue_size: str = typer.Option(None, "--catalogue-size", envvar="HARNESS_CATALOGUE_SIZE",
                                                help=CATALOGUE_SIZE_HELP),
             judge_model: str = typer.Option("", "--judge-model", envvar="HARNESS_JUDGE_MODEL",
                                             help="the judge of tasks scored by one (rubric, claims); "
                                                  "scripted:judge checks the pipeline offline")) -> None:
    """Run each reference in the sandbox against fresh servers; exit 1 if any scorer or reference is wrong. A task
    without a reference is checked by its scorer alone (its expected answer passes, wrong answers fail)."""
    from harness.agents.scaffold import load_scaffold
    from harness.errors import UserError
    from harness.mcp.registry import check_servers
    from harness.mcp.servers import ServerStartError
    from harness.run.validate import NO_REFERENCE, validate_suite
    from harness.tasks.registry import load_suite

    rules = load_scaffold(scaffold)
    loaded = load_suite(suite, catalogue_sizes(catalogue_size))
    check_servers(loaded)
    judge = None
    if judge_model:
        from harness.run.judge import judge_for
        judge = judge_for(judge_model)
    else:
        from harness.run.prepare import check_judged
        check_judged(loaded.tasks)
    console = new_console()
    try:
        with console.status(f"validating {loaded.name} ({len(loaded.tasks)} tasks)") as status:
            checks = asyncio.run(validate_suite(
                loaded, on_check=lambda c: status.update(f"validated {c.task_id}"), scaffold=rules, judge=judge,
                judge_model=judge_model))
    except ServerStartError as exc:  # a task's server cannot start: nothing about its scorer can be shown
        raise UserError(str(exc)) from None
    table = Table("task", "category", "reference answer", "passes", "wrong fails", "wrong calls fail", "tools",
                  "s", "problem", title=f"suite {loaded.name}")
    for c in checks:
        problem = (c.reference_error or ("" if c.passes_on_reference else c.reference_reason)
                   or ("" if c.fails_on_wrong else f"scorer cannot fail: {c.wrong_reason}")
                   or ("" if c.fails_on_wrong_trajectory else f"wrong calls pass: {c.wrong_trajectory_reason}"))
        calls_fail = "-" if not c.wrong_trajectories else "yes" if c.fails_on_wrong_trajectory else "[red]no[/]"
        answer = c.reference_answer[:40] if c.has_reference else f"{NO_REFERENCE} (expected {c.reference_answer[:24]})"
        table.add_row(c.task_id, c.category, answer, "yes" if c.passes_on_reference else "[red]no[/]",
                      "yes" if c.fails_on_wrong else "[red]no[/]", calls_fail,
                      str(c.tool_calls) if c.has_reference else "-",
                      f"{c.seconds:.2f}", problem[:80])
    console.print(table)
    bad = [c for c in checks if not c.ok]
    unreferenced = sum(not c.has_reference for c in checks)
    note = f" ({unreferenced} with {NO_REFERENCE}: scorer checked with the expected answer only)" \
        if unreferenced else ""
    console.print(f"{len(checks) - len(bad)} passed, {len(bad)} failed{note}")
    idle = [c.task_id for c in checks if c.passes_doing_nothing]
    if idle:
        named = ", ".join(idle[:12]) + (f" and {len(idle) - 12} more" if len(idle) > 12 else "")
        console.print(f"{len(idle)} of {len(checks)} task(s) pass doing nothing (no answer, the servers untouched): "
                      f"{named}; a model that does nothing scores {len(idle) / len(checks):.0%} here")
    if bad:
        raise typer.Exit(1)
