"""Runs the OpenTelemetry tests export: scripted runs of a small suite through the runner on the direct arm (no
sandbox), one of them past its time limit, and a hand-made run whose code made two tool calls (code needs the
sandbox to run for real; its transcript is what matters here); and an endpoint nothing listens on."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from harness.models.scripted import ScriptedRequest, policy_provider
from harness.run.records import RunRecord, read_trajectory
from harness.run.reference import ReferenceTrace, reference_policy
from harness.run.runner import RunConfig, Runner
from harness.tasks.suite import load_suite
from harness.trace.calls import LMCall, ToolCallRecord
from harness.trace.events import CodeEvent, CodeExecution, ModelEvent, ScoreEvent, ToolEvent
from harness.trace.trajectory import Trajectory
from tests.results_factory import record as made_record
from tests.run.test_runner import (
    SUITE_YAML,  # `country` (C-0007's country, IN) and `wrong`, which is the slow one here
)

SLOW_TASK = "wrong"
# The run's time limit, and how long the task `wrong` sleeps before its first reply: a limit far above what a
# scripted run takes on a busy machine, and a sleep past it.
TIMEOUT_S, SLOW_S = 1.5, 2.0


def _policy(task, arm) -> Callable[[ScriptedRequest], object]:
    """Looks up C-0007 and answers IN; on the task `wrong` it first sleeps past the run's time limit."""
    inner = reference_policy(ReferenceTrace("IN", "IN", (("get_customer", {"customer_id": "C-0007"}),), {}), task, arm)

    def policy(request: ScriptedRequest):
        if task.id == SLOW_TASK:
            time.sleep(SLOW_S)
        return inner(request)
    return policy


def scripted_runs(tmp_path: Path, on_record: Callable[[RunRecord], None] | None = None) -> Path:
    """Runs the mini suite (`country` succeeds, `wrong` times out) and returns its results file."""
    (tmp_path / "mini.yaml").write_text(SUITE_YAML)
    config = RunConfig(suite=load_suite(str(tmp_path / "mini.yaml")), model="scripted:test", arms=("direct",),
                       out_dir=tmp_path / "out", run_id="otel", timeout_s=TIMEOUT_S)
    summary = asyncio.run(Runner(config, provider=policy_provider("scripted:test", _policy)).run(on_record=on_record))
    return summary.path


def scripted_run(results: Path, task_id: str) -> tuple[RunRecord, Trajectory]:
    from harness.run.records import read_table

    row = next(r for r in read_table(results).to_pylist() if r["task_id"] == task_id)
    return RunRecord(**row), read_trajectory(results, row["sample_id"])


STARTED = datetime(2026, 11, 20, 9, 30, 0, 250000, tzinfo=UTC)


def code_run() -> tuple[RunRecord, Trajectory]:
    """A code-mode run: an LM call (0.1-0.3 s), a code block (0.3-0.9 s) whose code called two tools, a tool call
    of the model's own after it, and a passing score. Started a week before the test exports it."""
    lm = LMCall(messages=[{"role": "user", "content": "total of order 7?"}], output="print(...)", prompt_tokens=900,
                completion_tokens=40, reused_prompt_tokens=512, reuse_source="prefix_cache", latency_s=0.2, step=0)
    first = ToolCallRecord("get_order", {"order_id": 7}, result_preview='{"total": 12}', result_chars=13,
                           duration_s=0.1, server="crm", step=0, in_code=True, batch=1)
    second = replace(first, tool="get_customer", arguments={"customer_id": "C-1"}, is_error=True,
                     result_preview="no such customer", result_chars=16)
    after = replace(first, tool="get_order", in_code=False, batch=None, step=1)
    execution = CodeExecution("o = get_order(order_id=7)\nprint(o['total'])", stdout="12\n", duration_s=0.6,
                              tool_calls=2)
    events = (ModelEvent(lm, t=0.3), ToolEvent(first, t=0.5), ToolEvent(second, t=0.7),
              CodeEvent(execution, step=0, t=0.9), ToolEvent(after, t=1.1),
              ScoreEvent(True, 1.0, "answer '12' equals expected '12'", t=1.2))
    trajectory = Trajectory(task_id="t1", arm="codemode", model="m", epoch=0, prompt="total of order 7?", answer="12",
                            events=events)
    row = replace(made_record("code", 1, "codemode", 0, True), started_at=STARTED, latency_s=1.15, cold_start_s=0.0,
                  tool_calls=3, score_reason="answer '12' equals expected '12'")
    return row, trajectory


def closed_port_url() -> str:
    """An OTLP URL on a local port nothing listens on (a connection to it is refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1/traces"
