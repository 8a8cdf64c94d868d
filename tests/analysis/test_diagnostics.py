"""The tool-calls-written-as-text diagnostic, from (arm, answer) pairs and from a real direct-arm run."""

import asyncio

from harness.analysis.diagnostics import text_tool_call_note
from harness.models.scripted import ScriptedReply, policy_provider
from harness.run.runner import RunConfig, Runner
from harness.tasks.registry import load_suite

FENCED = '```json\n{"name": "get_customer", "arguments": {"customer_id": "C-0007"}}\n```'


def run_direct(tmp_path, answer: str):
    """The smoke suite's first task through the direct arm on a scripted model that only ever writes `answer`."""
    config = RunConfig(suite=load_suite("smoke"), model="scripted:t", arms=("direct",), out_dir=tmp_path,
                       task_ids=("customer-country",))
    provider = policy_provider("scripted:t", lambda task, arm: lambda request: ScriptedReply(answer))
    return asyncio.run(Runner(config, provider=provider).run()).records


def test_a_direct_run_that_answers_a_fenced_call_is_named(tmp_path):
    (record,) = run_direct(tmp_path, FENCED)
    assert record.answer == FENCED and not record.success
    note = text_tool_call_note([(record.arm, record.answer)])
    assert note is not None and note.startswith("Tool calls written as text: 1 answer(s) (direct 1)")
    assert "harness models --check" in note


def test_a_direct_run_with_an_ordinary_answer_is_not_named(tmp_path):
    (record,) = run_direct(tmp_path, "IN")
    assert record.answer == "IN"
    assert text_tool_call_note([(record.arm, record.answer)]) is None


def test_code_arms_are_not_named():
    assert text_tool_call_note([("codemode", FENCED), ("react", FENCED)]) is None


def test_counts_are_per_arm():
    note = text_tool_call_note([("direct", FENCED), ("direct", FENCED), ("direct", "IN")])
    assert note is not None and "2 answer(s) (direct 2)" in note


def test_on_the_embedded_model_the_note_blames_the_answer_not_a_server():
    note = text_tool_call_note([("direct", FENCED)], ["local"])
    assert note is not None and "model wrote inside its answer" in note and "--jinja" not in note
    served = text_tool_call_note([("direct", FENCED)], ["openai/qwen", "local"])
    assert served is not None and "--jinja" in served


def test_a_served_model_runs_answered_by_the_cache_say_the_server_was_not_asked_again():
    answers = [("direct", FENCED), ("direct", FENCED), ("direct", "IN")]
    note = text_tool_call_note(answers, ["openai/qwen"], [True, False, True])
    assert note.endswith("1 of these run(s) were answered by the response cache alone, so the server was not asked "
                         "again: a server restarted with other options is measured only by runs that ask it (a new "
                         "run id without --cache replay, or --no-cache).")
    assert "not asked again" not in text_tool_call_note(answers, ["openai/qwen"], [False, False, True])
