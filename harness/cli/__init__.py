"""The `harness` command line: thin commands over the public functions, one module per command group.

The installed plugins (harness.plugins) load before the command runs. User errors (`UserError`, a plugin that
fails to load among them) and bad command lines (typer's usage errors, e.g. a value out of its range) print as one
line on stderr and exit with code 2; internal bugs keep tracebacks.
"""

from __future__ import annotations

import sys

import typer

import harness.adapters  # noqa: F401  registers the built-in benchmarks: `--suite ADAPTER:PATH`, servers, presets

# Each command module registers its commands on `app` when imported.
from harness.cli import (  # noqa: F401
    catalog,
    export,
    gate,
    judge_check,
    models,
    optimize,
    plan,
    records,
    report,
    run,
    scaffolds,
    serve,
    setup,
    validate,
    view,
)
from harness.cli.app import app
from harness.env import configure_environment
from harness.errors import UserError
from harness.plugins import load_plugins


def usage_error(exc: typer.TyperException) -> str:
    """Typer's message for a bad command line, with where the command's options are listed."""
    context = getattr(exc, "ctx", None)
    where = f" (see `{context.command_path} --help`)" if context is not None else ""
    return exc.format_message().replace("\n", " ") + where


def main() -> None:
    configure_environment()
    try:
        load_plugins()  # before any command reads a registry (a plugin that fails is one line, like any user error)
        code = app(standalone_mode=False, prog_name="harness")  # click returns the exit code of typer.Exit here
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except typer.Abort:
        print("aborted", file=sys.stderr)
        sys.exit(130)
    except typer.TyperException as exc:  # usage errors (unknown option, a value out of range): one line too
        print(f"error: {usage_error(exc)}", file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)
