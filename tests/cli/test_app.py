"""The command line's shared pieces: every numeric option has a range (checked by click, shown in --help), and
output that is not a terminal has tables of a readable width and lines of text unbroken."""

import pytest
import typer

from harness.cli import app
from harness.cli.app import PIPED_WIDTH, console
from harness.run.records import read_results
from tests.cli.helpers import harness

pytestmark = pytest.mark.cli  # runs the harness command in a subprocess, as a user would


def numeric_options():
    for name, command in typer.main.get_command(app).commands.items():
        for param in command.params:
            if param.type_descriptor.annotation in (int, float):
                yield name, param


def test_every_numeric_option_of_every_command_has_a_range():
    options = list(numeric_options())
    assert len(options) >= 15
    assert [f"{name} {param.opts[0]}" for name, param in options if param.min is None and param.max is None] == []


def test_help_shows_the_range_of_an_option():
    result = harness("run", "--help", env={"COLUMNS": "250"})
    line = next(line for line in result.stdout.splitlines() if "--timeout" in line and "per-run" in line)
    assert "[x>=0.001]" in line


def test_a_console_that_is_not_a_terminal_is_100_columns_unless_columns_says_otherwise(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert console().width == PIPED_WIDTH == 100 and console(stderr=True).width == PIPED_WIDTH
    monkeypatch.setenv("COLUMNS", "132")
    assert console().width == 132


@pytest.mark.parametrize("command", [["suites"], ["servers", "--tools"], ["scaffolds"], ["models"]])
def test_a_listing_written_to_a_file_fits_100_columns(command):
    result = harness(*command, env={"COLUMNS": ""})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) > 3 and max(len(line) for line in lines) <= PIPED_WIDTH


def test_a_long_results_path_is_printed_on_one_line_in_a_log(tmp_path):
    out = tmp_path / ("a-results-folder-with-a-long-name-" * 3)
    result = harness("run", "--suite", "smoke", "--arms", "react", "--model", "scripted:garbage", "--tasks",
                     "customer-country", "--out", str(out), env={"COLUMNS": ""})
    assert result.returncode == 0, result.stderr
    path = read_results([out]).run_id.iloc[0] + ".parquet"
    assert any(line == f"results: {out / 'smoke' / path}" for line in result.stdout.splitlines())


def test_the_stop_signal_handler_stops_the_embedded_models_decoding_then_interrupts():
    import signal

    from harness.cli.app import stop_on_signals
    from harness.models.stopping import decoding_stopped, resume_decoding

    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        stop_on_signals()
        handler = signal.getsignal(signal.SIGTERM)
        assert signal.getsignal(signal.SIGINT) is handler  # Ctrl-C and SIGTERM alike
        with pytest.raises(KeyboardInterrupt):
            handler(signal.SIGTERM, None)
        assert decoding_stopped()
    finally:
        resume_decoding()
        for sig, previous in saved.items():
            signal.signal(sig, previous)
