"""Tool calls written as text: what counts as one, and what does not."""

import pytest

from harness.models.tool_call_text import looks_like_text_tool_call

FENCED = '```json\n{"name": "get_customer", "arguments": {"customer_id": "C-0007"}}\n```'


@pytest.mark.parametrize("text", [
    FENCED,
    'Let me look that up.\n```\n{"name": "get_customer", "parameters": {"customer_id": "C-0007"}}\n```',
    '<tool_call>\n{"name": "get_customer", "arguments": {"customer_id": "C-0007"}}\n</tool_call>',
    '{"name": "get_customer", "arguments": "{\\"customer_id\\": \\"C-0007\\"}"}',
    '```json\n[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]\n```',
    '{{"name": "add", "arguments": {"a": 2, "b": 3}}}',  # wrapped in extra braces, as the embedded model wrote it
])
def test_calls_written_as_text_are_recognised(text):
    assert looks_like_text_tool_call(text)


@pytest.mark.parametrize("text", [
    "IN", "27.0", "", None, "The customer is named Ada; the tool get_customer returned her.",
    '```json\n{"name": "Ada", "country": "IN"}\n```',  # JSON data that is no call
    '{"total": 27.0}', "```python\nprint(get_customer('C-0007'))\n```",
])
def test_ordinary_answers_are_not_tool_calls(text):
    assert not looks_like_text_tool_call(text)
