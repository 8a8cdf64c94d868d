"""The scripted engine: policies answer in ChatAdapter fields, plain text, or native tool calls."""

from __future__ import annotations

import asyncio

import dspy

from harness.models.engine import CallRecorder, make_lm
from harness.models.scripted import ScriptedEngine, ScriptedReply, ScriptedRequest
from harness.trace.transcript import Transcript

LOOKUP = {"type": "function", "function": {"name": "lookup", "description": "Look a customer up.",
                                           "parameters": {"type": "object", "properties": {"id": {"type": "integer"}}}}}


def test_a_scripted_reply_comes_back_as_native_tool_calls():
    seen: list[ScriptedRequest] = []

    def policy(request: ScriptedRequest):
        seen.append(request)
        return ScriptedReply("Looking.", tool_calls=(("lookup", {"id": 7}),))

    log = Transcript()
    lm = make_lm("scripted", ScriptedEngine(policy), recorder=CallRecorder(log))
    outputs = asyncio.run(lm.acall(messages=[{"role": "user", "content": "who is 7?"}], tools=[LOOKUP]))
    assert seen[0].tools == ("lookup",)
    assert outputs[0]["text"] == "Looking."
    assert [c["function"]["name"] for c in outputs[0]["tool_calls"]] == ["lookup"]
    assert log.lm_calls[0].tool_calls == ({"name": "lookup", "arguments": {"id": 7}},)
    assert log.lm_calls[0].completion_tokens > 0


def test_the_policy_sees_earlier_tool_calls_and_results_as_chat_messages():
    seen: list[ScriptedRequest] = []

    def policy(request: ScriptedRequest):
        seen.append(request)
        return "Customer 7 is Ada."

    messages = [{"role": "user", "content": "who is 7?"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "call_0", "type": "function", "function": {
                    "name": "lookup", "arguments": '{"id": 7}'}}]},
                {"role": "tool", "tool_call_id": "call_0", "name": "lookup", "content": "Ada"}]
    outputs = asyncio.run(make_lm("scripted", ScriptedEngine(policy)).acall(messages=messages, tools=[LOOKUP]))
    assert outputs == ["Customer 7 is Ada."]
    assert list(seen[0].messages) == messages


def test_a_dict_policy_still_answers_chat_adapter_fields():
    def policy(request: ScriptedRequest):
        assert request.output_fields == ("answer",) and request.tools == ()
        return {"answer": "42"}

    with dspy.context(lm=make_lm("scripted", ScriptedEngine(policy))):
        assert dspy.Predict("question -> answer")(question="6 times 7?").answer == "42"
