"""One run as OpenTelemetry spans under the GenAI semantic conventions, built with the SDK's own tracer.

Each run is one trace: an `invoke_agent {arm}` span (INTERNAL: the agent runs in the harness's process) for the
whole run, and under it, from the run's transcript, a `chat {model}` span (CLIENT) per LM call, an
`execute_tool {tool}` span (INTERNAL) per MCP tool call and an `execute_code` span (INTERNAL; the conventions
name no operation for it, and allow a custom one) per block of code run in a sandbox; a tool call made by that
code is the code span's child, as the transcript's event names its parent. The score is a `gen_ai.evaluation.result` event on the run's span, the span it
evaluates. The conventions' attributes carry what they name; the rest of a row travels as `harness.*`.

Times are the run's own: each event is stamped when it ended (`t`, seconds after the run started), so a span
ends at `started_at + t` and starts its duration (an LM call's latency, a tool call's or code block's) before
that. A run exported days later keeps its timeline.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, set_span_in_context

from harness.exports.otel_messages import input_messages, output_messages
from harness.models.families import family_of
from harness.run.records import RunRecord
from harness.trace.calls import LMCall, ToolCallRecord
from harness.trace.events import CodeEvent, CodeExecution, ModelEvent, ScoreEvent, ToolEvent
from harness.trace.trajectory import Trajectory, with_ids
from harness.version import __version__

EVALUATION_EVENT = "gen_ai.evaluation.result"
# The scorer's verdict on whether the run did its task; the trajectory does not name the scorer (the suite does).
EVALUATION_NAME = "task_success"


def _ns(started_at: datetime, t: float) -> int:
    """Nanoseconds since the epoch of the moment `t` seconds after `started_at` (whole microseconds first, so a
    start time does not lose precision to a float of nanoseconds)."""
    return round(started_at.timestamp() * 1e6) * 1000 + round(max(t, 0.0) * 1e9)


def _present(attributes: dict[str, Any]) -> dict[str, Any]:
    """Attributes without the unrecorded ones (None): OpenTelemetry has no null value."""
    return {key: value for key, value in attributes.items() if value is not None}


@dataclass(frozen=True)
class _OpenCode:
    """A code block's span, open until the tool calls it made have theirs; `start` in seconds after the run's."""

    span: Span
    start: float
    event: CodeEvent


class SpanBuilder:
    """Builds runs' spans through one SDK tracer into memory (its own provider, never the process's global one,
    which the MCP SDK reports its own spans to); whoever holds the spans decides where they go."""

    def __init__(self) -> None:
        self._finished = InMemorySpanExporter()
        provider = TracerProvider(resource=_resource(), sampler=ALWAYS_ON)
        provider.add_span_processor(SimpleSpanProcessor(self._finished))
        self._tracer = provider.get_tracer("harness.exports.otel", __version__)

    def run_spans(self, record: RunRecord, trajectory: Trajectory) -> tuple[ReadableSpan, ...]:
        """The spans of one run: its invoke_agent span and every span under it, in the order they ended."""
        self._finished.clear()
        _emit_run(self._tracer, record, trajectory)
        spans = self._finished.get_finished_spans()
        self._finished.clear()
        return spans


def _resource() -> Resource:
    """The resource every span names: the harness and its version, unless OTEL_SERVICE_NAME or
    OTEL_RESOURCE_ATTRIBUTES (which the SDK reads) say otherwise, e.g. Phoenix's `openinference.project.name`."""
    detected = Resource.create({"service.version": __version__})
    if str(detected.attributes.get("service.name", "")).startswith("unknown_service"):
        return detected.merge(Resource({"service.name": "harness"}))
    return detected


def _run_end_s(record: RunRecord, trajectory: Trajectory) -> float:
    """When the run ended, in seconds after it started: its wall time (start-up included), or its last event."""
    wall = record.latency_s + (record.cold_start_s or 0.0)
    return max([wall, *(event.t for event in trajectory.events)])


def _run_attributes(record: RunRecord, provider: str) -> dict[str, Any]:
    return _present({
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": record.arm, "gen_ai.provider.name": provider,
        "gen_ai.request.model": record.model, "gen_ai.usage.input_tokens": record.prompt_tokens,
        "gen_ai.usage.output_tokens": record.completion_tokens, "error.type": record.error_type or None,
        "harness.run.id": record.run_id, "harness.sample.id": record.sample_id, "harness.suite": record.suite,
        "harness.task.id": record.task_id, "harness.task.category": record.category,
        "harness.task.hash": record.task_hash, "harness.epoch": record.epoch, "harness.scaffold": record.scaffold,
        "harness.scaffold.hash": record.scaffold_hash, "harness.program.hash": record.program_hash or None,
        "harness.success": record.success, "harness.score": record.score, "harness.answer": record.answer,
        "harness.error.message": record.error_message or None, "harness.turns": record.turns,
        "harness.llm_calls": record.llm_calls, "harness.tool_calls": record.tool_calls,
        "harness.token_source": record.token_source, "harness.cost_usd": record.cost_usd,
        "harness.latency_s": record.latency_s, "harness.lm_time_s": record.lm_time_s,
        "harness.tool_time_s": record.tool_time_s, "harness.sandbox_time_s": record.sandbox_time_s,
        "harness.cold_start_s": record.cold_start_s, "harness.version": record.harness_version})


def _role_model(record: RunRecord, call: LMCall) -> str:
    """The model that made an LM call: the agent's, or the simulated user's or judge's of the row."""
    if call.role == "user" and record.user_model:
        return record.user_model
    if call.role == "judge" and record.judge_model:
        return record.judge_model
    return record.model


def _chat_attributes(call: LMCall, model: str) -> dict[str, Any]:
    return _present({
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": family_of(model).name,
        "gen_ai.request.model": model, "gen_ai.usage.input_tokens": call.prompt_tokens,
        "gen_ai.usage.output_tokens": call.completion_tokens,
        "gen_ai.usage.cache_read.input_tokens": call.reused_prompt_tokens,
        "gen_ai.input.messages": input_messages(call), "gen_ai.output.messages": output_messages(call),
        "harness.lm.role": call.role, "harness.lm.cached": call.cached, "harness.lm.reuse_source": call.reuse_source,
        "harness.lm.retries": call.retries, "harness.lm.grammar": call.grammar, "harness.step": call.step})


def _tool_attributes(call: ToolCallRecord, call_id: str) -> dict[str, Any]:
    error = "timeout" if call.abandoned else ("tool_error" if call.is_error else None)
    return _present({
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.tool, "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": json.dumps(call.arguments, default=str), "error.type": error,
        "harness.tool.server": call.server or None, "harness.tool.result_chars": call.result_chars,
        "harness.tool.result_preview": call.result_preview, "harness.tool.in_code": call.in_code,
        "harness.tool.batch": call.batch, "harness.step": call.step})


def _code_attributes(execution: CodeExecution, step: int | None) -> dict[str, Any]:
    return _present({
        "gen_ai.operation.name": "execute_code", "error.type": execution.error_kind,
        "harness.code.source": execution.code, "harness.code.stdout": execution.stdout,
        "harness.code.error": execution.error, "harness.code.tool_calls": execution.tool_calls,
        "harness.code.files_read": list(execution.files_read) or None, "harness.step": step})


def _evaluation_attributes(score: ScoreEvent) -> dict[str, Any]:
    return _present({"gen_ai.evaluation.name": EVALUATION_NAME, "gen_ai.evaluation.score.value": float(score.value),
                     "gen_ai.evaluation.score.label": "pass" if score.passed else "fail",
                     "gen_ai.evaluation.explanation": score.reason or None})


def _scores(record: RunRecord, trajectory: Trajectory) -> Sequence[ScoreEvent]:
    """The run's verdicts: its transcript's score events, or (a trajectory written before scores were events) the
    row's, at the run's end."""
    found = trajectory.of(ScoreEvent)
    return found or [ScoreEvent(record.success, record.score, record.score_reason, t=_run_end_s(record, trajectory))]


def _fail(span: Span, error_type: str | None, message: str) -> None:
    if error_type:
        span.set_status(Status(StatusCode.ERROR, message[:500] or error_type))


def _emit_run(tracer: Tracer, record: RunRecord, trajectory: Trajectory) -> None:
    """Start and end the spans of one run through `tracer`, children before their parent ends."""
    at = record.started_at

    def start(name: str, kind: SpanKind, parent: Span | None, begin: float, attributes: dict[str, Any]) -> Span:
        context = set_span_in_context(parent, Context()) if parent is not None else Context()  # a new trace
        return tracer.start_span(name, context=context, kind=kind, attributes=attributes, start_time=_ns(at, begin))

    run = start(f"invoke_agent {record.arm}", SpanKind.INTERNAL, None, 0.0,
                _run_attributes(record, family_of(record.model).name))
    codes = []
    spans: dict[int, Span] = {}  # event id -> its span (a step has none: what it holds is the run's)
    events = with_ids(trajectory.events)
    for event in (e for e in events if isinstance(e, CodeEvent)):  # started first: the tool calls their code made are their children
        begin = max(event.t - event.execution.duration_s, 0.0)
        codes.append(_OpenCode(start("execute_code", SpanKind.INTERNAL, run, begin,
                                  _code_attributes(event.execution, event.step)), begin, event))
        spans[event.id] = codes[-1].span
    tool_index = 0
    for event in events:
        if isinstance(event, ModelEvent):
            model = _role_model(record, event.call)
            span = start(f"chat {model}", SpanKind.CLIENT, spans.get(event.parent or 0, run),
                         event.t - event.call.latency_s, _chat_attributes(event.call, model))
            span.end(end_time=_ns(at, event.t))
        elif isinstance(event, ToolEvent):
            call, begin = event.call, event.t - event.call.duration_s
            parent = spans.get(event.parent or 0, run)  # the code execution that made it, as the run recorded
            attributes = _tool_attributes(call, f"call_{tool_index}")
            span = start(f"execute_tool {call.tool}", SpanKind.INTERNAL, parent, begin, attributes)
            _fail(span, attributes.get("error.type"), call.result_preview)
            span.end(end_time=_ns(at, event.t))
            tool_index += 1
    for code in codes:
        _fail(code.span, code.event.execution.error_kind, code.event.execution.error or "")
        code.span.end(end_time=_ns(at, code.event.t))
    for score in _scores(record, trajectory):
        run.add_event(EVALUATION_EVENT, _evaluation_attributes(score), timestamp=_ns(at, score.t))
    _fail(run, record.error_type, record.error_message)
    run.end(end_time=_ns(at, _run_end_s(record, trajectory)))
