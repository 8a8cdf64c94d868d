"""A run's spans as the SDK hands them to an exporter: names and kinds, parent links, the GenAI conventions'
attributes, the evaluation event, and times on the run's own timeline, for a scripted run, a run that timed out
and a run whose code called tools."""

from __future__ import annotations

import json

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from harness.exports.otel_spans import EVALUATION_EVENT, SpanBuilder
from tests.exports.otel_runs import SLOW_TASK, STARTED, code_run, scripted_run, scripted_runs

START_NS = round(STARTED.timestamp() * 1e6) * 1000


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return scripted_runs(tmp_path_factory.mktemp("otel"))


def spans_of(record, trajectory):
    return SpanBuilder().run_spans(record, trajectory)


def root_of(spans):
    (root,) = [s for s in spans if s.parent is None]
    return root


def test_a_run_is_one_trace_an_invoke_agent_span_over_its_lm_and_tool_calls(results):
    record, trajectory = scripted_run(results, "country")
    spans = spans_of(record, trajectory)
    root = root_of(spans)
    assert (root.name, root.kind) == ("invoke_agent direct", SpanKind.INTERNAL)
    children = sorted((s.name, s.kind) for s in spans if s is not root)
    assert children == [("chat scripted:test", SpanKind.CLIENT)] * 2 + [("execute_tool get_customer",
                                                                          SpanKind.INTERNAL)]
    assert {s.context.trace_id for s in spans} == {root.context.trace_id}
    assert {s.parent.span_id for s in spans if s is not root} == {root.context.span_id}


def test_the_run_span_names_arm_task_scaffold_hash_success_and_run_id(results):
    record, trajectory = scripted_run(results, "country")
    attributes = root_of(spans_of(record, trajectory)).attributes
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.agent.name"] == "direct"
    assert attributes["harness.task.id"] == "country"
    assert attributes["harness.scaffold.hash"] == record.scaffold_hash != ""
    assert attributes["harness.success"] is True
    assert attributes["harness.run.id"] == "otel"
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == \
        (record.prompt_tokens, record.completion_tokens)


def test_chat_spans_carry_the_model_the_tokens_and_last_as_long_as_the_call(results):
    record, trajectory = scripted_run(results, "country")
    chats = [s for s in spans_of(record, trajectory) if s.name.startswith("chat ")]
    assert [s.attributes["gen_ai.request.model"] for s in chats] == ["scripted:test"] * 2
    assert [s.attributes["gen_ai.usage.input_tokens"] for s in chats] == [c.prompt_tokens for c in trajectory.lm_calls]
    assert sum(s.attributes["gen_ai.usage.output_tokens"] for s in chats) == record.completion_tokens
    for span, call in zip(chats, trajectory.lm_calls, strict=True):
        assert abs((span.end_time - span.start_time) / 1e9 - call.latency_s) < 2e-6


def test_a_chat_span_holds_its_messages_and_reply_as_the_conventions_shape_them(results):
    record, trajectory = scripted_run(results, "country")
    second = [s for s in spans_of(record, trajectory) if s.name.startswith("chat ")][1]
    sent = json.loads(second.attributes["gen_ai.input.messages"])
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[2]["parts"] == [{"type": "tool_call", "id": "call_0", "name": "get_customer",
                                 "arguments": {"customer_id": "C-0007"}}]
    assert sent[3]["parts"][0]["type"] == "tool_call_response" and '"IN"' in sent[3]["parts"][0]["response"]
    (reply,) = json.loads(second.attributes["gen_ai.output.messages"])
    assert reply["finish_reason"] == "tool_call"
    assert reply["parts"] == [{"type": "tool_call", "id": None, "name": "final_answer", "arguments": {"answer": "IN"}}]


def test_a_tool_span_names_the_tool_its_call_id_arguments_and_result_size(results):
    record, trajectory = scripted_run(results, "country")
    (tool,) = [s for s in spans_of(record, trajectory) if s.name.startswith("execute_tool")]
    assert tool.attributes["gen_ai.tool.name"] == "get_customer"
    assert tool.attributes["gen_ai.tool.call.id"] == "call_0"
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"customer_id": "C-0007"}
    assert tool.attributes["harness.tool.result_chars"] == trajectory.tool_calls[0].result_chars > 0
    assert "error.type" not in tool.attributes and tool.status.status_code is StatusCode.UNSET


def test_the_score_is_an_evaluation_result_event_on_the_run_span(results):
    record, trajectory = scripted_run(results, "country")
    (event,) = root_of(spans_of(record, trajectory)).events
    assert event.name == EVALUATION_EVENT == "gen_ai.evaluation.result"
    assert dict(event.attributes) == {"gen_ai.evaluation.name": "task_success", "gen_ai.evaluation.score.value": 1.0,
                                      "gen_ai.evaluation.score.label": "pass",
                                      "gen_ai.evaluation.explanation": record.score_reason}


def test_a_timed_out_run_is_an_error_span_that_keeps_its_calls_and_its_failing_score(results):
    record, trajectory = scripted_run(results, SLOW_TASK)
    assert record.error_type == "timeout"
    spans = spans_of(record, trajectory)
    root = root_of(spans)
    assert root.status.status_code is StatusCode.ERROR
    assert root.attributes["error.type"] == "timeout"
    assert [s.name for s in spans if s is not root] == ["chat scripted:test"] * len(trajectory.lm_calls)
    (event,) = root.events
    assert (event.attributes["gen_ai.evaluation.score.label"], event.attributes["gen_ai.evaluation.score.value"]) == \
        ("fail", 0.0)


def test_code_is_its_own_span_and_the_tool_calls_its_code_made_are_its_children():
    spans = spans_of(*code_run())
    by_name = {}
    for span in spans:
        by_name.setdefault(span.name, []).append(span)
    root, (code,) = root_of(spans), by_name["execute_code"]
    assert code.parent.span_id == root.context.span_id
    assert code.attributes["gen_ai.operation.name"] == "execute_code"
    assert code.attributes["harness.code.tool_calls"] == 2
    in_code = [s for s in spans if s.attributes.get("harness.tool.in_code")]
    assert [s.name for s in in_code] == ["execute_tool get_order", "execute_tool get_customer"]
    assert {s.parent.span_id for s in in_code} == {code.context.span_id}
    (own,) = [s for s in by_name["execute_tool get_order"] if s not in in_code]
    assert own.parent.span_id == root.context.span_id


def test_a_tool_call_that_failed_is_an_error_span():
    (failed,) = [s for s in spans_of(*code_run()) if s.name == "execute_tool get_customer"]
    assert failed.attributes["error.type"] == "tool_error"
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description == "no such customer"


def test_spans_keep_the_runs_own_timeline_whenever_they_are_exported():
    spans = spans_of(*code_run())
    root = root_of(spans)
    assert root.start_time == START_NS
    assert root.end_time == START_NS + 1_200_000_000  # its last event (the score) after its 1.15 s of wall time
    (chat,) = [s for s in spans if s.name.startswith("chat ")]
    assert (chat.start_time, chat.end_time) == (START_NS + 100_000_000, START_NS + 300_000_000)
    (code,) = [s for s in spans if s.name == "execute_code"]
    assert (code.start_time, code.end_time) == (START_NS + 300_000_000, START_NS + 900_000_000)


def test_cached_prompt_tokens_are_the_conventions_cache_read_tokens():
    (chat,) = [s for s in spans_of(*code_run()) if s.name.startswith("chat ")]
    assert chat.attributes["gen_ai.usage.cache_read.input_tokens"] == 512
    assert chat.attributes["harness.lm.reuse_source"] == "prefix_cache"


def test_every_run_is_a_trace_of_its_own():
    builder = SpanBuilder()
    first, second = builder.run_spans(*code_run()), builder.run_spans(*code_run())
    assert {s.context.trace_id for s in first}.isdisjoint({s.context.trace_id for s in second})
    assert len(first) == len(second) == 6
