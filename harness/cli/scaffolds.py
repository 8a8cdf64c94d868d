"""`harness scaffolds`: the rules a run can be under, with their values in each preset."""

from __future__ import annotations

from dataclasses import fields

import typer

from harness.agents.scaffold import Scaffold, all_presets, fields_markdown
from harness.cli.app import Table, app, console

# Narrower than this, a field's description would wrap to a word per line beside the presets' values: the table
# then shows the values alone (cut to fit), and says where the descriptions are.
DESCRIBED_WIDTH = 160


@app.command()
def scaffolds(markdown: bool = typer.Option(False, "--markdown", help="print the table as Markdown")) -> None:
    """List the scaffold's fields (the rules beyond the task and its tools) with their value in each preset: plain,
    guided and the benchmarks' own (m3tooleval, tau2: the rules their published harnesses run agents under)."""
    if markdown:
        print(fields_markdown(), end="")
        return
    presets = all_presets()
    out = console()
    described = out.width >= DESCRIBED_WIDTH
    hashes = ", ".join(f"{name} {preset.hash}" for name, preset in presets.items())
    table = Table("field", caption=None if described else f"hashes: {hashes}; what each field does: `harness "
                  f"scaffolds --markdown`, or a terminal of {DESCRIBED_WIDTH} columns")
    for name, preset in presets.items():
        table.add_column(f"{name} {preset.hash}" if described else name, max_width=None if described else 14,
                         no_wrap=not described)
    if described:
        table.add_column("what it does")
    for item in fields(Scaffold):
        if item.name != "name":
            table.add_row(item.name, *(repr(getattr(preset, item.name)) for preset in presets.values()),
                          *([item.metadata["description"]] if described else []))
    out.print(table)
