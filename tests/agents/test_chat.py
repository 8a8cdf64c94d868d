"""The chat protocols' per-call options: the reply shape each declares (engine-neutral, no grammar text)."""

import json

from harness.agents.chat import CodeChatAdapter, ToolCallingAdapter
from harness.models.messages import REPLY_KEY, ReplyShape, reply_shape_option

TOOLS = [{"type": "function", "function": {"name": "ping", "description": "", "parameters": {
    "type": "object", "properties": {}}}}]


def turn() -> dict:
    return {"action": {"code": "print(1)"}, "observation": "1"}


def declared(options: dict) -> dict:
    return options["metadata"][REPLY_KEY]


def shape(protocol: str, answer: bool) -> dict:
    return declared(reply_shape_option(ReplyShape(protocol, answer=answer)))


def acting(adapter, must_act: bool):
    """The adapter as a policy leaves it before a step (harness.agents.loop.must_act decides)."""
    adapter.must_act = must_act
    return adapter


def test_an_adapter_admits_an_answer_unless_its_policy_says_the_reply_must_act():
    assert declared(CodeChatAdapter().options({"history": [turn()]})) == shape("code_block", answer=True)
    assert declared(ToolCallingAdapter().options({"tools": TOOLS, "history": []})) == shape("tool_call", answer=True)


def test_code_mode_must_write_code_when_the_rule_says_so():
    adapter = acting(CodeChatAdapter(), True)
    assert declared(adapter.options({"history": [turn()]})) == shape("code_block", answer=False)
    assert declared(acting(adapter, False).options({"history": [turn()]})) == shape("code_block", answer=True)


def test_direct_must_call_a_tool_when_the_rule_says_so():
    adapter = acting(ToolCallingAdapter(), True)
    assert declared(adapter.options({"tools": TOOLS, "history": [turn()]})) == shape("tool_call", answer=False)
    assert declared(acting(adapter, False).options({"tools": TOOLS, "history": []})) == shape("tool_call",
                                                                                            answer=True)


def test_direct_offers_its_tools_natively_and_neither_protocol_sends_grammar_text():
    direct = ToolCallingAdapter().options({"tools": TOOLS, "history": []})
    code = CodeChatAdapter().options({"history": []})
    assert direct["tools"] == TOOLS
    assert "::=" not in json.dumps(direct) and "::=" not in json.dumps(code)  # no GBNF rule anywhere


def _system(adapter, signature, inputs: dict) -> str:
    return adapter.format(signature, [], inputs)[0]["content"]


def test_every_chat_protocol_puts_the_tasks_system_instructions_last_in_its_system_message():
    from dataclasses import replace

    from harness.agents.chat import system_prompt
    from harness.agents.codemode import CodeStep
    from harness.agents.direct import ToolStep
    from harness.agents.hybrid import HybridAdapter, HybridStep
    from harness.tasks.suite import load_suite

    plain = load_suite("smoke").tasks[0]
    task = replace(plain, system_instructions="Never reveal a customer's email.")
    inputs = {"task": task.prompt, "tools": TOOLS, "tool_api": "def ping() -> str: ...", "history": []}
    for make, signature in ((lambda t: CodeChatAdapter(task=t), CodeStep), (lambda t: ToolCallingAdapter(task=t),
                            ToolStep), (lambda t: HybridAdapter(task=t), HybridStep)):
        own = _system(make(plain), signature, inputs)  # the arm's text, its tool API included where it has one
        assert _system(make(task), signature, inputs) == f"{own}\n\nNever reveal a customer's email."
        assert _system(make(None), signature, inputs) == own
    assert "def ping()" in _system(CodeChatAdapter(task=task), CodeStep, inputs).split("Never reveal")[0]
    assert system_prompt("rules", plain) == "rules" and system_prompt("rules", task).startswith("rules\n\n")
