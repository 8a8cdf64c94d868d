"""A real OpenTelemetry backend receives runs: Arize Phoenix, started here from its own venv (.ci/phoenix makes
it) on free local ports with no internet, gets a scripted suite's runs as the runner finishes them and a code
run, and is asked through its REST API what it stored: span names, parent links, token attributes, the score."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from harness.env import cache_dir
from harness.exports.otel import RunStreamer, SpanSender
from tests.exports.otel_runs import SLOW_TASK, code_run, scripted_run, scripted_runs

pytestmark = pytest.mark.integration  # starts Phoenix in a subprocess (~15 s)

PROJECT = "harness-otel-test"
VENV = Path(os.environ.get("HARNESS_PHOENIX_VENV") or cache_dir() / "phoenix-venv")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(url: str):
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    if not (VENV / "bin" / "phoenix").exists():
        pytest.skip(f"no Phoenix venv at {VENV}: .ci/phoenix creates it (arize-phoenix from PyPI, ~50 s)")
    work, port = tmp_path_factory.mktemp("phoenix"), free_port()
    env = {**os.environ, "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(free_port()),
           "PHOENIX_HOST": "127.0.0.1", "PHOENIX_WORKING_DIR": str(work), "PHOENIX_TELEMETRY_ENABLED": "false",
           "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false"}
    with open(work / "phoenix.log", "wb") as log:
        server = subprocess.Popen([str(VENV / "bin" / "phoenix"), "serve"], cwd=work, env=env, stdout=log,
                                  stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=2).close()
                break
            except OSError:
                assert server.poll() is None, (work / "phoenix.log").read_text()[-2000:]
                assert time.monotonic() < deadline, "Phoenix did not answer within 120 s"
                time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def stored(phoenix, tmp_path_factory):
    """Phoenix's spans of a streamed scripted suite (a run that succeeds, one that times out) and of a code run,
    by trace, once all have arrived; and what was sent."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={PROJECT}")
        work = tmp_path_factory.mktemp("runs")
        stream = RunStreamer(phoenix, work / "out" / "mini" / "otel.parquet", pytest.fail)
        results = scripted_runs(work, on_record=stream)
        sender = SpanSender(phoenix)
        coded = code_run()
        assert sender.send(*coded) is None
    assert stream.sent == 2
    runs = {"country": scripted_run(results, "country"), "slow": scripted_run(results, SLOW_TASK), "code": coded}
    expected = sum(1 + len(t.lm_calls) + len(t.tool_calls) + len(t.code_runs) for _, t in runs.values())
    deadline = time.monotonic() + 30
    while True:  # Phoenix writes what it receives in batches
        spans = get(f"{phoenix}/v1/projects/{PROJECT}/spans?limit=1000")["data"] if any(
            p["name"] == PROJECT for p in get(f"{phoenix}/v1/projects")["data"]) else []
        if len(spans) >= expected or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert len(spans) == expected
    traces: dict[str, list[dict]] = {}
    for span in spans:
        traces.setdefault(span["context"]["trace_id"], []).append(span)
    by_task = {}
    for members in traces.values():
        (root,) = [s for s in members if s["parent_id"] is None]
        task = root["attributes"]["harness.task.id"]
        by_task[{"t1": "code", SLOW_TASK: "slow"}.get(task, task)] = (root, [s for s in members if s is not root])
    return by_task, runs


def test_each_run_is_a_trace_with_its_lm_and_tool_calls_under_its_agent_span(stored):
    by_task, _ = stored
    root, children = by_task["country"]
    assert root["name"] == "invoke_agent direct"
    assert sorted(s["name"] for s in children) == ["chat scripted:test", "chat scripted:test",
                                                  "execute_tool get_customer"]
    assert {s["parent_id"] for s in children} == {root["context"]["span_id"]}


def test_code_spans_hold_the_tool_calls_their_code_made(stored):
    by_task, _ = stored
    root, children = by_task["code"]
    (code,) = [s for s in children if s["name"] == "execute_code"]
    in_code = [s for s in children if s["attributes"].get("harness.tool.in_code")]
    assert len(in_code) == 2 and {s["parent_id"] for s in in_code} == {code["context"]["span_id"]}
    assert code["parent_id"] == root["context"]["span_id"]


def test_token_counts_arrive_as_sent(stored):
    by_task, runs = stored
    _, children = by_task["country"]
    _, trajectory = runs["country"]
    chats = sorted((s for s in children if s["name"].startswith("chat ")), key=lambda s: s["start_time"])
    assert [s["attributes"]["gen_ai.usage.input_tokens"] for s in chats] == \
        [c.prompt_tokens for c in trajectory.lm_calls]
    assert [s["attributes"]["gen_ai.usage.output_tokens"] for s in chats] == \
        [c.completion_tokens for c in trajectory.lm_calls]


def test_the_score_arrives_as_an_evaluation_result_event(stored):
    by_task, runs = stored
    for task, (label, value) in {"country": ("pass", 1.0), "slow": ("fail", 0.0)}.items():
        root, _ = by_task[task]
        (event,) = root["events"]
        assert event["name"] == "gen_ai.evaluation.result"
        assert event["attributes"]["gen_ai.evaluation.score.label"] == label
        assert event["attributes"]["gen_ai.evaluation.score.value"] == value
        assert event["attributes"]["gen_ai.evaluation.explanation"] == runs[task][0].score_reason


def test_a_timed_out_run_arrives_as_an_error(stored):
    by_task, _ = stored
    root, _ = by_task["slow"]
    assert root["status_code"] == "ERROR"
    assert root["attributes"]["error.type"] == "timeout"
