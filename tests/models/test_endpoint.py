"""The endpoint check's verdicts, on mocked LiteLLM responses (no network)."""

from types import SimpleNamespace

import pytest

from harness.errors import UserError
from harness.models import endpoint
from harness.models.endpoint import check_endpoint, tool_call_verdict, verdict_line

CALL = SimpleNamespace(function=SimpleNamespace(name="add", arguments='{"a": 2, "b": 3}'))
FENCED = '```json\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n```'


def response(content=None, tool_calls=None):
    return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=content, tool_calls=tool_calls))])


def mock_completion(monkeypatch, tool_reply, sent):
    def completion(**kwargs):
        sent.append(kwargs)
        return tool_reply if kwargs.get("tools") else response("OK")

    monkeypatch.setattr(endpoint, "litellm_module", lambda: SimpleNamespace(completion=completion))


def test_native_tool_calls_are_a_yes(monkeypatch):
    sent = []
    mock_completion(monkeypatch, response(None, [CALL]), sent)
    found = check_endpoint("openai/qwen", "http://127.0.0.1:9/v1")
    assert found.tool_calls == "native" and found.reply == "OK"
    assert found.tool_reply == 'add({"a": 2, "b": 3})'
    assert [s.get("tool_choice") for s in sent] == [None, "auto"]  # auto, as a run sends: never forced


def test_a_call_written_as_text_is_a_no_with_the_fix(monkeypatch):
    mock_completion(monkeypatch, response(FENCED), [])
    found = check_endpoint("openai/qwen", "http://127.0.0.1:9/v1")
    assert found.tool_calls == "text"
    line = verdict_line(found.tool_calls)
    assert line.startswith("native tool calls: no (the server returned the call as text")
    assert "--chat_format chatml-function-calling" in line and "--enable-auto-tool-choice" in line


def test_prose_without_a_call_is_unknown():
    assert tool_call_verdict([], "The answer is 5.") == "none"
    assert verdict_line("none").startswith("native tool calls: unknown")


def test_tool_call_tags_in_text_are_a_no():
    assert tool_call_verdict(None, '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>') == "text"


def test_an_endpoint_that_does_not_answer_is_one_line_naming_the_url(monkeypatch):
    def refuse(**kwargs):
        raise ConnectionError("Connection refused\nmore detail")

    monkeypatch.setattr(endpoint, "litellm_module", lambda: SimpleNamespace(completion=refuse))
    with pytest.raises(UserError, match=r"http://127\.0\.0\.1:9/v1 did not answer") as info:
        check_endpoint("openai/qwen", "http://127.0.0.1:9/v1")
    assert "\n" not in str(info.value)
