"""`harness validate`: every task's reference passes its scorer, a wrong answer (or wrong tool calls) fails it, and
guessing the expected answer without acting fails it unless the task is a lookup."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import typer

from harness.cli.app import CATALOGUE_SIZE_HELP, STRICT_NO_ACTION_HELP, Table, app, catalogue_sizes
from harness.cli.app import console as new_console

if TYPE_CHECKING:
    from harness.run.no_action import NoActionCheck


@app.command()
def validate(suite: str = typer.Option(..., "--suite", envvar="HARNESS_SUITE",
                                      help="suite name, YAML path, or a benchmark: m3tooleval:PATH"),
             scaffold: str = typer.Option("guided", "--scaffold", envvar="HARNESS_SCAFFOLD",
                                          help="the references run under this scaffold's id guard: guided (on) | "
                                               "plain (off) | FILE.yaml"),
             catalogue_size: str = typer.Option(None, "--catalogue-size", envvar="HARNESS_CATALOGUE_SIZE",
                                                help=CATALOGUE_SIZE_HELP),
             strict_no_action: bool = typer.Option(False, "--strict-no-action", envvar="HARNESS_STRICT_NO_ACTION",
                                                   help=STRICT_NO_ACTION_HELP),
             judge_model: str = typer.Option("", "--judge-model", envvar="HARNESS_JUDGE_MODEL",
                                             help="the judge of tasks scored by one (rubric, claims); "
                                                  "scripted:judge checks the pipeline offline")) -> None:
    """Run each reference in the sandbox against fresh servers; exit 1 if any scorer or reference is wrong. A task
    without a reference is checked by its scorer alone (its expected answer passes, wrong answers fail). A task
    that the expected answer passes with no tool call on fresh servers, though its scorer reads the end state or the
    calls, fails a built-in suite and is a warning line in any other (exit 1 with --strict-no-action)."""
    from harness.agents.scaffold import load_scaffold
    from harness.errors import UserError
    from harness.mcp.registry import check_servers
    from harness.mcp.servers import ServerStartError
    from harness.run.no_action import answer_only_line, is_builtin, warning_line
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
    builtin = is_builtin(loaded)
    table = Table("task", "category", "reference answer", "passes", "wrong fails", "wrong calls fail", "no action",
                  "tools", "s", "problem", title=f"suite {loaded.name}")
    for c in checks:
        problem = (c.reference_error or ("" if c.passes_on_reference else c.reference_reason)
                   or ("" if c.fails_on_wrong else f"scorer cannot fail: {c.wrong_reason}")
                   or ("" if c.fails_on_wrong_trajectory else f"wrong calls pass: {c.wrong_trajectory_reason}")
                   or (f"passes without acting: {c.no_action.problem}" if c.no_action and c.no_action.problem else ""))
        calls_fail = "-" if not c.wrong_trajectories else "yes" if c.fails_on_wrong_trajectory else "[red]no[/]"
        answer = c.reference_answer[:40] if c.has_reference else f"{NO_REFERENCE} (expected {c.reference_answer[:24]})"
        table.add_row(c.task_id, c.category, answer, "yes" if c.passes_on_reference else "[red]no[/]",
                      "yes" if c.fails_on_wrong else "[red]no[/]", calls_fail, _no_action_cell(c.no_action),
                      str(c.tool_calls) if c.has_reference else "-",
                      f"{c.seconds:.2f}", problem[:80])
    console.print(table)
    flagged = [c.no_action for c in checks if c.no_action and c.no_action.problem]
    bad = [c for c in checks if not c.ok or (builtin and c.no_action and c.no_action.problem)]  # built-in: a defect
    unreferenced = sum(not c.has_reference for c in checks)
    note = f" ({unreferenced} with {NO_REFERENCE}: scorer checked with the expected answer only)" \
        if unreferenced else ""
    console.print(f"{len(checks) - len(bad)} passed, {len(bad)} failed{note}")
    idle = [c.task_id for c in checks if c.passes_doing_nothing]
    if idle:
        named = ", ".join(idle[:12]) + (f" and {len(idle) - 12} more" if len(idle) > 12 else "")
        console.print(f"{len(idle)} of {len(checks)} task(s) pass doing nothing (no answer, the servers untouched): "
                      f"{named}; a model that does nothing scores {len(idle) / len(checks):.0%} here")
    for check in flagged:
        console.print(warning_line(check), soft_wrap=True, markup=False)
    console.print(answer_only_line([c.no_action for c in checks if c.no_action]), soft_wrap=True, markup=False)
    if bad or (strict_no_action and flagged):
        raise typer.Exit(1)


def _no_action_cell(check: NoActionCheck | None) -> str:
    """What the expected answer with no tool call gets: a lookup passes by design; otherwise it must fail."""
    if check is None:
        return "-"
    if check.problem:
        return "[red]passes[/]" if check.passes else "[red]state holds[/]" if check.state_held \
            else "[red]declared[/]"
    if check.answer_only:
        return "lookup"
    return f"fails ({check.declared})" if check.declared else "fails"
