"""`harness scaffolds`: the rules a run can be under, with their values in each preset."""

from __future__ import annotations

from dataclasses import fields

import typer

from harness.agents.scaffold import Scaffold, all_presets, fields_markdown
from harness.cli.app import Table, app, console


@app.command()
def scaffolds(markdown: bool = typer.Option(False, "--markdown", help="print the table as Markdown")) -> None:
    """List the scaffold's fields (the rules beyond the task and its tools) with their value in each preset: plain,
    guided and the benchmarks' own (m3tooleval, tau2: the rules their published harnesses run agents under)."""
    if markdown:
        print(fields_markdown(), end="")
        return
    presets = all_presets()
    table = Table("field", *(f"{name} {preset.hash}" for name, preset in presets.items()), "what it does")
    for item in fields(Scaffold):
        if item.name != "name":
            table.add_row(item.name, *(repr(getattr(preset, item.name)) for preset in presets.values()),
                          item.metadata["description"])
    console().print(table)
