"""`harness report`: results files in, report.md + self-contained report.html + PNG figures out, and a static
copy of the run viewer next to them (viewer/index.html), linked both ways."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markdown import Markdown

from harness.cli.app import app
from harness.cli.app import console as new_console


@app.command()
def report(
    results: list[Path] = typer.Argument(..., help="results Parquet files or folders"),
    out: Path = typer.Option(Path("reports/latest"), "--out", help="folder for report.md, report.html, PNGs"),
    title: str = typer.Option("Direct tool calls vs code mode", "--title"),
    viewer: bool = typer.Option(True, "--viewer/--no-viewer",
                                help="write the run viewer (every trajectory) to OUT/viewer/, linked from the report"),
) -> None:
    """Compare arms (and models/programs) with intervals: report.md, a self-contained report.html, figures."""
    from harness.analysis.report import build_report
    from harness.errors import check_writable_folder
    from harness.run.records import read_results
    from harness.viewer import export_site, load_index

    frame = read_results(results)
    check_writable_folder(out, "--out")
    paths = build_report(frame, out, title, viewer_href="viewer/index.html" if viewer else None)
    if viewer:
        export_site(load_index(results), out / "viewer", report_href="../report.html")
    console = new_console()
    console.print(Markdown(paths.answer))
    console.print(f"\nreport:  {paths.markdown}\nhtml:    {paths.html}\nfigures: {len(paths.figures)} in {out}"
                  + (f"\nviewer:  {out / 'viewer' / 'index.html'}" if viewer else ""))
