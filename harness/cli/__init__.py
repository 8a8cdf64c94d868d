"""The `harness` command line: thin commands over the public functions, one module per command group.

User errors (`UserError`) print as one line on stderr and exit with code 2; internal bugs keep tracebacks.
"""

from __future__ import annotations

import sys

import typer

# Each command module registers its commands on `app` when imported.
from harness.cli import catalog, gate, optimize, report, run, scaffolds, serve, setup, validate, view  # noqa: F401
from harness.cli.app import app
from harness.env import configure_environment
from harness.errors import UserError


def main() -> None:
    configure_environment()
    try:
        code = app(standalone_mode=False)  # click returns the exit code of typer.Exit here
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except typer.Abort:
        print("aborted", file=sys.stderr)
        sys.exit(130)
    except typer.TyperException as exc:  # usage errors (unknown option, bad value): click's own message
        show = getattr(exc, "show", None)
        show() if show else print(f"error: {exc}", file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)
