"""The `harness` Typer app the command modules register on (its own module, so a command module imports it
without importing the package that imports every command)."""

from __future__ import annotations

import signal

import typer

app = typer.Typer(
    name="harness",
    help="Run agent evaluations: MCP tools called directly vs code mode in a sandbox.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def stop_on_sigterm() -> None:
    """SIGTERM (a cancelled CI job, `kill`) stops a long command the way Ctrl-C does: what finished is saved."""
    signal.signal(signal.SIGTERM, _raise_interrupt)
