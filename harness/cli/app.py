"""The `harness` Typer app the command modules register on (its own module, so a command module imports it
without importing the package that imports every command)."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import typer
from rich import table as rich_table
from rich.console import Console

from harness.models.stopping import stop_decoding

app = typer.Typer(
    name="harness",
    help="Run agent evaluations: MCP tools called directly vs code mode in a sandbox.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


# Ranges of the numeric options: typer checks the option and its environment variable alike and shows the range
# in --help, so a value out of range is a usage error before anything starts. Typer has no open bound: "more
# than 0" is at least a thousandth (a millisecond of a time limit, a tenth of a cent of a cost limit).
MORE_THAN_ZERO: dict[str, Any] = {"min": 0.001}  # a time limit (s), an amount (USD)
AT_LEAST_ONE: dict[str, Any] = {"min": 1}  # a count of runs, workers, tokens
NOT_NEGATIVE: dict[str, Any] = {"min": 0}  # a seed, a count where 0 means "none" or "automatic"
FRACTION: dict[str, Any] = {"min": 0.0, "max": 1.0}  # a rate or a drop in one
ALPHA: dict[str, Any] = {"min": 0.0001, "max": 0.5}  # a test's significance level
POWER: dict[str, Any] = {"min": 0.5, "max": 0.9999}  # the chance a test detects a true difference
PORT: dict[str, Any] = {"min": 0, "max": 65535}  # 0: any free port

# Output that is not a terminal (a file, a CI log) is read in an editor or a log viewer: tables fit this width.
PIPED_WIDTH = 100


def console(stderr: bool = False) -> Console:
    """A rich console on stdout (or the stderr of now, kept even if stderr is redirected later), the one every
    command prints through: tables wrap to the terminal's width, or, when the output is not a terminal, to
    $COLUMNS or PIPED_WIDTH; there a line of text (a path, a command to run next) is never broken, so it can be
    copied whole from a log."""
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(file=stream)
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() and int(columns) > 0 else PIPED_WIDTH
    return _PipedConsole(file=stream, width=width)


class _PipedConsole(Console):
    """A console on a file or a log: a line of text printed on its own is never broken (a path, a command), while
    a table and its caption wrap to the width."""

    def print(self, *objects: Any, soft_wrap: bool | None = None, **options: Any) -> None:
        if soft_wrap is None:
            soft_wrap = all(isinstance(o, str) for o in objects)
        super().print(*objects, soft_wrap=soft_wrap, **options)


class Table(rich_table.Table):
    """The tables commands print: a rich Table whose first column (the arm, task, suite, server or field each row is
    about) is never wrapped or cut; the other columns wrap to fit the console's width."""

    def __init__(self, *headers: str, **options: Any) -> None:
        super().__init__(*headers, **options)
        if self.columns:
            self.columns[0].no_wrap = True


def _interrupt(signum: int, frame: object) -> None:
    stop_decoding()  # the embedded model's calls in flight end at their next step, so the command exits promptly
    raise KeyboardInterrupt


def stop_on_signals() -> None:
    """Ctrl-C and SIGTERM (a cancelled CI job, `kill`) stop a long command alike: what finished is saved, and the
    embedded model's calls in flight stop at their next decoding step (harness.models.stopping) instead of
    holding the exit until they finish."""
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)


CATALOGUE_SIZE_HELP = ("comma-separated tool counts a catalogue suite's tasks run at, each task once per size (e.g. "
                       "16,64,256,1024); default: the suite's own catalogue_sizes; other suites refuse it")


def catalogue_sizes(value: str | None) -> tuple[int, ...] | None:
    """`--catalogue-size 16,64`: the sizes, or None when not given; anything but whole numbers is one line."""
    from harness.errors import UserError

    parts = [v.strip() for v in (value or "").split(",") if v.strip()]
    if not all(p.isdigit() for p in parts):
        raise UserError(f"--catalogue-size {value}: give tool counts separated by commas, e.g. 16,64,256,1024")
    return tuple(int(p) for p in parts) or None


STRICT_NO_ACTION_HELP = ("exit 1 when a task can be passed without acting (the expected answer, no tool call, fresh "
                         "servers) though its scorer reads the end state or the calls; without it such a task of your "
                         "suite or a benchmark's is a warning line (a built-in suite's always fails)")
