"""`harness export`: finished runs in another tool's format (inspect_ai eval logs, OpenTelemetry GenAI spans).

Each format's library is an optional extra, imported here only when that format is asked for, so a plain
`harness run` never imports it; without the extra the command says in one line what to install.
"""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli.app import app
from harness.cli.app import console as new_console

FORMATS = ("inspect", "otel")
INSPECT_MISSING = ("--format inspect needs inspect_ai: pip install 'harness[inspect]' "
                   "(or: pip install 'inspect-ai==0.3.285')")


@app.command()
def export(
    results: list[Path] = typer.Argument(..., help="results Parquet files or folders (their trajectories are read "
                                                   "from the .trajectories.jsonl next to each)"),
    format: str = typer.Option(..., "--format", help="inspect (inspect_ai eval logs, for `inspect view`) | otel "
                                                     "(OpenTelemetry GenAI spans over OTLP/HTTP)"),
    out: Path = typer.Option(None, "--out", help="folder for the inspect logs (one per suite, arm and model)"),
    otel_endpoint: str = typer.Option(None, "--otel-endpoint", help="OTLP/HTTP endpoint the otel format sends to"),
) -> None:
    """Write finished runs where other tools read them; the runs themselves are left as they are."""
    from harness.errors import UserError, check_writable_folder

    if format not in FORMATS:
        raise UserError(f"--format {format}: give one of {', '.join(FORMATS)}")
    if format == "otel":
        try:
            from harness.exports.otel import export_results
        except ModuleNotFoundError as exc:
            if exc.name != "harness.exports.otel":
                raise
            raise UserError("--format otel: this harness has no OpenTelemetry exporter (harness.exports.otel)") \
                from None
        export_results(results, otel_endpoint)
        return
    if out is None:
        raise UserError("--format inspect needs --out DIR: the folder to write the logs to")
    try:
        from harness.exports.inspect_log import write_inspect_logs
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "inspect_ai":
            raise
        raise UserError(INSPECT_MISSING) from None
    check_writable_folder(out, "--out")
    written = write_inspect_logs(results, out)
    console = new_console()
    for log in written:
        console.print(f"{log.path}  {log.suite}/{log.arm} on {log.model}: {log.samples} samples",
                      highlight=False, soft_wrap=True)
    console.print(f"{len(written)} inspect logs in {out}/ — open them with: inspect view start --log-dir {out}",
                  highlight=False, soft_wrap=True)
