"""`harness suites` and `harness servers`: what can be run (`harness servers --check`: and whether it starts)."""

from __future__ import annotations

import asyncio
import sys

import typer

from harness.cli.app import MORE_THAN_ZERO, Table, app, console
from harness.defaults import DEFAULT_SERVER_START_TIMEOUT_S
from harness.errors import UserError
from harness.tasks.suite import load_suite, suite_files


@app.command()
def suites() -> None:
    """List the suites (tasks/*.yaml) with their task counts and categories, then the benchmark adapters
    (`--suite NAME:PATH` reads a published benchmark from its checkout)."""
    from harness.tasks.registry import ADAPTERS

    table = Table("suite", "tasks", "categories", "servers", "description")
    table.add_column("file", overflow="fold")  # a path is shown whole, folded at the column's width
    for name, path in sorted(suite_files().items()):
        try:
            suite = load_suite(str(path))
        except UserError as exc:
            table.add_row(name, "-", "-", "-", f"[red]invalid: {exc}[/red]", str(path))
            continue
        categories = sorted({t.category for t in suite.tasks})
        table.add_row(name, str(len(suite.tasks)), ", ".join(categories), ", ".join(suite.server_names),
                      suite.description, str(path))
    console().print(table)
    adapters = Table("benchmark", "use", "description", title="benchmarks read from your checkout")
    for name, adapter in sorted(ADAPTERS.items()):
        adapters.add_row(name, f"--suite {name}:PATH", adapter.description)
    console().print(adapters)


async def _start_each(names: list[str], start_timeout_s: float) -> dict[str, tuple[list[str], str]]:
    """Each server started once on its own, within the start limit: its tool names, or why it did not start."""
    from harness.mcp.servers import ServerStartError, open_servers
    from harness.tasks.task import ServerRef

    started = {}
    for name in names:
        try:
            async with open_servers((ServerRef(name),), start_timeout_s=start_timeout_s) as session:
                started[name] = (list(session.toolbox.names), "")
        except ServerStartError as exc:
            started[name] = ([], str(exc))
    return started


@app.command()
def servers(
    show_tools: bool = typer.Option(False, "--tools", help="list every tool's name"),
    check: bool = typer.Option(False, "--check", help="exit with code 2 if any server did not start"),
    server_start_timeout: float = typer.Option(
        DEFAULT_SERVER_START_TIMEOUT_S, "--server-start-timeout", envvar="HARNESS_SERVER_START_TIMEOUT", **MORE_THAN_ZERO,
        help="limit (s) on starting each server (process start, MCP initialize, tool listing)"),
) -> None:
    """List fixture and external servers with their tool counts: each is started once, within the start limit,
    and one that does not start is named with its cause and its stderr log."""
    from harness.mcp.registry import list_servers

    infos = list_servers()
    started = asyncio.run(_start_each([i.name for i in infos], server_start_timeout))
    table = Table("server", "kind", "tools", "description")
    for info in infos:
        names, error = started[info.name]
        listed = "[red]did not start[/red]" if error else \
            f"{len(names)}" + (f": {', '.join(names)}" if show_tools else "")
        table.add_row(info.name, info.kind, listed, info.description)
    console().print(table)
    failed = [error for _, error in started.values() if error]
    for error in failed:
        print(f"error: {error}", file=sys.stderr)
    if check and failed:
        raise typer.Exit(2)
