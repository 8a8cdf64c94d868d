"""`harness view`: the runs of results files in the browser (a local server, or a static copy with --out)."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from harness.cli.app import PORT, app
from harness.cli.app import console as new_console


@app.command()
def view(
    results: list[Path] = typer.Argument(..., help="results Parquet files or folders (their trajectories are read "
                                                   "from the .trajectories.jsonl next to each)"),
    port: int = typer.Option(8700, "--port", **PORT, help="port on 127.0.0.1 (0: any free port)"),
    out: Path = typer.Option(None, "--out", help="write a static copy to this folder instead of serving"),
    report: Path = typer.Option(None, "--report", help="a report.html to link to (and serve at /report.html)"),
) -> None:
    """Browse runs: a table with filters, each run's LM calls, code and tool calls, a task's runs side by side."""
    from harness.errors import UserError, check_writable_folder
    from harness.viewer import export_site, live_index, load_index, make_server

    if report is not None and not report.is_file():
        raise UserError(f"{report}: no such report file")
    if out is not None:
        check_writable_folder(out, "--out")
    # served: a suite still running may have no row yet (its runs in flight show as they go); a copy needs rows
    index = load_index(results) if out is not None else live_index(results)
    console = new_console()
    if out is not None:
        href = None
        if report is not None:
            href = Path(os.path.relpath(report.resolve(), out.resolve())).as_posix()
        page = export_site(index, out, href)
        console.print(f"{len(index.rows)} runs written to {out}/ — open {page}")
        return
    server = make_server(index, port, report, paths=results)
    console.print(f"{len(index.rows)} runs from {len(index.sources)} file(s), followed live: "
                  f"http://127.0.0.1:{server.server_address[1]}/viewer/   (Ctrl-C stops)", soft_wrap=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print("stopped")
    finally:
        server.server_close()
