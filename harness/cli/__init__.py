"""The `harness` command line: thin commands over the public functions, one module per command group.

User errors (`UserError`) print as one line on stderr and exit with code 2; internal bugs keep tracebacks.
"""

from __future__ import annotations

import signal
import sys

import typer

from harness.env import configure_environment
from harness.errors import UserError

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


# Each module below registers its commands on `app` when imported (one line per command module).
from harness.cli import (
    catalog,  # noqa: F401  suites, servers
    gate,  # noqa: F401  gate
    optimize,  # noqa: F401  optimize
    report,  # noqa: F401  report
    run,  # noqa: F401  run
    serve,  # noqa: F401  serve
    setup,  # noqa: F401  setup
    validate,  # noqa: F401  validate
    view,  # noqa: F401  view
)


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
