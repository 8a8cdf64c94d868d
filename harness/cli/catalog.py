"""`harness suites` and `harness servers`: what can be run."""

from __future__ import annotations

import asyncio

import typer
from rich.console import Console
from rich.table import Table

from harness.cli.app import app
from harness.errors import UserError
from harness.tasks.suite import load_suite, suite_files


@app.command()
def suites() -> None:
    """List the suites (tasks/*.yaml) with their task counts and categories, then the benchmark adapters
    (`--suite NAME:PATH` reads a published benchmark from its checkout)."""
    from harness.benchmarks.registry import ADAPTERS

    table = Table("suite", "tasks", "categories", "servers", "description", "file")
    for name, path in sorted(suite_files().items()):
        try:
            suite = load_suite(str(path))
        except UserError as exc:
            table.add_row(name, "-", "-", "-", f"[red]invalid: {exc}[/red]", str(path))
            continue
        categories = sorted({t.category for t in suite.tasks})
        table.add_row(name, str(len(suite.tasks)), ", ".join(categories), ", ".join(suite.server_names),
                      suite.description, str(path))
    Console().print(table)
    adapters = Table("benchmark", "use", "description", title="benchmarks read from your checkout")
    for name, adapter in sorted(ADAPTERS.items()):
        adapters.add_row(name, f"--suite {name}:PATH", adapter.description)
    Console().print(adapters)


async def _tool_counts(names: list[str]) -> dict[str, list[str]]:
    from harness.mcp.servers import open_servers
    from harness.tasks.task import ServerRef

    tools = {}
    for name in names:
        async with open_servers((ServerRef(name),)) as session:
            tools[name] = list(session.toolbox.names)
    return tools


@app.command()
def servers(show_tools: bool = typer.Option(False, "--tools", help="list every tool's name")) -> None:
    """List fixture and external servers with their tool counts."""
    from harness.mcp.servers import list_servers

    infos = list_servers()
    tools = asyncio.run(_tool_counts([i.name for i in infos]))
    table = Table("server", "kind", "tools", "description")
    for info in infos:
        names = tools[info.name]
        listed = f"{len(names)}" + (f": {', '.join(names)}" if show_tools else "")
        table.add_row(info.name, info.kind, listed, info.description)
    Console().print(table)
