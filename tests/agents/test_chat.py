"""The chat protocols' per-call options: which grammar the embedded engine decodes the next reply under."""

from harness.agents.chat import CodeChatAdapter, ToolCallingAdapter, answer_allowed
from harness.models.grammars import (
    code_block_grammar,
    code_reply_grammar,
    tool_call_grammar,
    tool_reply_grammar,
)
from harness.models.messages import GRAMMAR_KEY

TOOLS = [{"type": "function", "function": {"name": "ping", "description": "", "parameters": {
    "type": "object", "properties": {}}}}]


def turn(may_answer: bool) -> dict:
    return {"action": {"code": "print(1)"}, "observation": "1", "may_answer": may_answer}


def test_an_answer_is_allowed_only_right_after_a_turn_that_allows_one():
    assert not answer_allowed({"history": []})
    assert answer_allowed({"history": [turn(False), turn(True)]})
    assert not answer_allowed({"history": [turn(True), turn(False)]})


def test_without_the_answer_or_act_rule_an_answer_is_always_allowed():
    assert answer_allowed({"history": []}, answer_or_act=False)
    adapter = CodeChatAdapter(answer_or_act=False)
    assert adapter.options({"history": [turn(False)]})["metadata"][GRAMMAR_KEY] == code_reply_grammar()
    tools = ToolCallingAdapter(answer_or_act=False)
    assert tools.options({"tools": TOOLS, "history": []})["metadata"][GRAMMAR_KEY] == tool_reply_grammar(TOOLS)


def test_code_mode_must_write_code_after_a_failed_turn_and_may_answer_after_a_result():
    adapter = CodeChatAdapter()
    assert adapter.options({"history": [turn(False)]})["metadata"][GRAMMAR_KEY] == code_block_grammar()
    assert adapter.options({"history": [turn(True)]})["metadata"][GRAMMAR_KEY] == code_reply_grammar()


def test_direct_must_call_a_tool_after_a_failed_turn_and_may_answer_after_a_result():
    adapter = ToolCallingAdapter()
    assert adapter.options({"tools": TOOLS, "history": [turn(False)]})["metadata"][GRAMMAR_KEY] == \
        tool_call_grammar(TOOLS)
    assert adapter.options({"tools": TOOLS, "history": [turn(True)]})["metadata"][GRAMMAR_KEY] == \
        tool_reply_grammar(TOOLS)
