"""What `harness run`, `harness report` and `harness gate` say when the response cache answered: in words, with the
flag that bypasses it, on their first lines; and that a server's configuration advice names runs whose server was not
asked. In process (typer's runner), against minimal OpenAI-compatible servers on loopback."""

import signal

import pytest
from typer.testing import CliRunner

from harness.cli import app
from tests.models.openai_stub import OpenAIStub
from tests.run.test_runner import SUITE_YAML

REPLAYED = ("Response cache: 1 of 1 run(s) were answered by the cache alone: 1 of 1 LM call(s) came from the cache, "
            "not from the model (--cache replay: answers stored by any earlier run). Their latency is not the model's; "
            "--no-cache asks the model for every call.")
TEXT_CALL = '```json\n{"name": "get_customer", "arguments": {"customer_id": "C-0007"}}\n```'


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """The cache in the test's folder, and the signal handlers `harness run` installs put back afterwards."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "not-used")
    monkeypatch.setenv("COLUMNS", "200")
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    yield
    for number, handler in handlers.items():
        signal.signal(number, handler)


def harness_run(server: OpenAIStub, tmp_path, run_id: str, *options: str):
    suite = tmp_path / "mini.yaml"
    suite.write_text(SUITE_YAML)
    return CliRunner().invoke(app, ["run", "--suite", str(suite), "--model", "openai/model", "--api-base", server.url,
                                    "--arms", "direct", "--tasks", "country", "--out", str(tmp_path / "results"),
                                    "--run-id", run_id, *options])


def latency_cell(stdout: str) -> str:
    (row,) = [line for line in stdout.splitlines() if line.startswith("│ direct")]
    return [cell.strip() for cell in row.split("│")[1:-1]][4]


def test_a_new_run_says_nothing_of_the_cache_and_a_replay_says_what_it_reused(tmp_path):
    with OpenAIStub("IN") as server:
        measured = harness_run(server, tmp_path, "measured")
        replayed = harness_run(server, tmp_path, "replayed", "--cache", "replay")
    assert measured.exit_code == 0 and replayed.exit_code == 0, measured.output + replayed.output
    assert "Response cache" not in measured.stdout and latency_cell(measured.stdout) != "cached"
    assert REPLAYED in replayed.stdout and latency_cell(replayed.stdout) == "cached"
    assert server.chat_requests == 1


def test_report_and_gate_say_it_first_and_the_gate_warns_it_measured_nothing(tmp_path):
    with OpenAIStub("IN") as server:
        harness_run(server, tmp_path, "measured")
        harness_run(server, tmp_path, "replayed", "--cache", "replay")
    results = tmp_path / "results" / "mini"
    report = CliRunner().invoke(app, ["report", str(results / "replayed.parquet"), "--out", str(tmp_path / "report"),
                                      "--no-viewer"])
    assert report.exit_code == 0, report.output
    assert report.stdout.lstrip().startswith("Response cache: 1 of 1 run(s) were answered by the cache alone")
    gate = CliRunner().invoke(app, ["gate", str(results / "replayed.parquet"), "--min-success", "direct=0.5"])
    assert gate.exit_code == 0, gate.output
    assert gate.stdout.splitlines()[:2] == [REPLAYED, (
        "warning: every run in these results was answered by the response cache alone: this gate measured nothing new "
        "(the model was not asked). Run again with --no-cache (or without --cache replay) to measure.")]
    both = CliRunner().invoke(app, ["gate", str(results), "--min-success", "direct=0.5"])
    assert both.stdout.startswith("Response cache: 1 of 2 run(s)") and "warning" not in both.stdout
    measured = CliRunner().invoke(app, ["gate", str(results / "measured.parquet"), "--min-success", "direct=0.5"])
    assert "cache" not in measured.stdout.lower()


def test_server_advice_on_a_replayed_run_says_the_server_was_not_asked_again(tmp_path):
    with OpenAIStub(TEXT_CALL) as server:
        first = harness_run(server, tmp_path, "first")
        server.reply = "IN"  # the server restarted with a chat format that parses calls
        replayed = harness_run(server, tmp_path, "again", "--cache", "replay")
        measured = harness_run(server, tmp_path, "measured")
    assert "Tool calls written as text: 1 answer(s) (direct 1)" in first.stdout
    assert "not asked again" not in first.stdout
    assert "Tool calls written as text" in replayed.stdout
    assert ("1 of these run(s) were answered by the response cache alone, so the server was not asked again"
            in replayed.stdout)
    assert "Tool calls written as text" not in measured.stdout and server.chat_requests == 2


@pytest.mark.cli  # the console entry point turns a UserError into one line and exit code 2
@pytest.mark.parametrize("options, message", [
    (("--cache", "sometimes"), "error: --cache 'sometimes': give one of resume, replay, off"),
    (("--cache", "replay", "--no-cache"), "error: --no-cache and --cache replay disagree: give one of them"),
])
def test_a_bad_cache_option_is_one_line_naming_it(tmp_path, options, message):
    from tests.cli.helpers import harness

    suite = tmp_path / "mini.yaml"
    suite.write_text(SUITE_YAML)
    result = harness("run", "--suite", str(suite), "--model", "openai/model", "--api-base", "http://127.0.0.1:9/v1",
                     "--arms", "direct", "--out", str(tmp_path / "results"), *options,
                     env={"HARNESS_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 2 and result.stderr.startswith(message) and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "results").exists()
