"""`harness models` and a run against a real OpenAI-compatible server: llama.cpp's own server (`python -m
llama_cpp.server`, the `local` extra's `server` part) serving the embedded model, reached with --api-base and no
API key in the environment."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import pandas as pd
import pytest

from harness.models.tool_call_text import looks_like_text_tool_call
from tests.cli.helpers import harness

SERVER_START_S = 180  # loading 1.1 GB on a busy machine


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """The embedded model behind llama.cpp's server with the GGUF's own chat template (what a user gets by
    default), a small context; its base URL once /v1/models answers. Its output goes to a file: llama.cpp logs
    enough to fill a pipe nobody reads, which would stop the server."""
    from harness.env import configure_environment
    from harness.models.model_file import resolve_local_model

    configure_environment()
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with log.open("w") as output:
        process = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model",
                                    str(resolve_local_model(None)), "--model_alias", "qwen", "--n_ctx", "4096",
                                    "--host", "127.0.0.1", "--port", str(port)], stdout=output, stderr=output)
        base = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + SERVER_START_S
        try:
            while True:
                try:
                    urllib.request.urlopen(f"{base}/models", timeout=5).read()
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        process.kill()
                        pytest.fail(f"llama_cpp.server did not start: {log.read_text()[-2000:]}")
                    time.sleep(1)
            yield base
        finally:
            process.terminate()
            process.wait(timeout=30)


def run_harness(*args: str, timeout: float) -> subprocess.CompletedProcess:
    """`harness` with no OPENAI_API_KEY in its environment (helpers.harness starts from os.environ)."""
    saved = os.environ.pop("OPENAI_API_KEY", None)
    try:
        return harness(*args, timeout=timeout)
    finally:
        if saved is not None:
            os.environ["OPENAI_API_KEY"] = saved


@pytest.mark.local_model
@pytest.mark.cli
def test_the_check_says_the_endpoint_answers_and_how_it_returns_tool_calls(llama_server):
    done = run_harness("models", "--check", "--model", "openai/qwen", "--api-base", llama_server, "--timeout", "300",
                       timeout=700)
    assert done.returncode == 0, done.stderr
    assert f"endpoint {llama_server}: answers" in done.stdout
    assert "native tool calls: " in done.stdout


@pytest.mark.local_model
@pytest.mark.cli
def test_a_smoke_task_runs_end_to_end_without_an_api_key(llama_server, tmp_path):
    done = run_harness("run", "--suite", "smoke", "--tasks", "customer-country", "--arms", "direct", "--model",
                       "openai/qwen", "--api-base", llama_server, "--out", str(tmp_path), "--no-cache",
                       "--timeout", "900", timeout=1000)
    assert done.returncode == 0, done.stderr
    (path,) = (tmp_path / "smoke").glob("*.parquet")
    (row,) = pd.read_parquet(path).to_dict("records")
    assert "api_key" not in row["error_message"].lower() and "credentials" not in row["error_message"].lower()
    assert row["error_type"] != "lm_error"  # every LM call was answered: the server took the placeholder key
    assert ("Tool calls written as text" in done.stdout) == looks_like_text_tool_call(row["answer"])


@pytest.mark.cli
def test_an_unreachable_endpoint_is_one_line_naming_the_url():
    url = f"http://127.0.0.1:{free_port()}/v1"
    done = run_harness("models", "--check", "--model", "openai/qwen", "--api-base", url, timeout=120)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: the model endpoint {url} did not answer")


def test_models_lists_every_family_with_its_model_strings():
    from typer.testing import CliRunner

    from harness.cli import app
    from harness.models.families import model_families

    result = CliRunner().invoke(app, ["models"], env={"COLUMNS": "300"})
    assert result.exit_code == 0
    rows = [line.split("│")[1].strip() for line in result.stdout.splitlines() if line.startswith("│")]
    assert rows == [family.name for family in model_families()]


def test_the_check_needs_a_model_and_an_api_base():
    from typer.testing import CliRunner

    from harness.cli import app
    from harness.errors import UserError

    result = CliRunner().invoke(app, ["models", "--check", "--model", "openai/qwen"], env={"HARNESS_API_BASE": ""})
    assert isinstance(result.exception, UserError) and "--api-base URL" in str(result.exception)
