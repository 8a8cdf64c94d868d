"""`harness scaffolds`: the rules a run can be under, with their values in each preset."""

from __future__ import annotations

from dataclasses import fields

import typer
from rich.table import Table

from harness.agents.scaffold import GUIDED, PLAIN, Scaffold, fields_markdown
from harness.cli.app import app, console


@app.command()
def scaffolds(markdown: bool = typer.Option(False, "--markdown", help="print the table as Markdown")) -> None:
    """List the scaffold's fields (the rules beyond the task and its tools) with their plain and guided values."""
    if markdown:
        print(fields_markdown(), end="")
        return
    table = Table("field", f"plain {PLAIN.hash}", f"guided {GUIDED.hash}", "what it does")
    for item in fields(Scaffold):
        if item.name != "name":
            table.add_row(item.name, repr(getattr(PLAIN, item.name)), repr(getattr(GUIDED, item.name)),
                          item.metadata["description"])
    console().print(table)
