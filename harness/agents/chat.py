"""Multi-turn chat protocols as DSPy adapters, so an arm's step is still a `dspy.Predict` (traced, tunable by
every optimizer: instructions and demos) while the model sees an ordinary conversation:

    system:    the step's instructions (tunable) [+ the tool API, an INPUT that no optimizer can rewrite]
               [+ the task's system instructions: a benchmark's policy, the same in every arm]
    user:      the task
    assistant: action 1        (a ```python block, or a native tool call)
    user|tool: observation 1   (what the code printed, or the tool's result)
    ...

The conversation so far is the `history` input: a list of {"action": ..., "observation": ...} turns whose
actions are rendered canonically (the parsed code or call, never the raw reply), so a reply that invented
an observation after its action cannot carry it into later prompts. The one output field, `reply`, is the
raw model output: the arm's policy turns it into an Action.
"""

from __future__ import annotations

import json
from typing import Any

import dspy

from harness.agents.loop import FINAL_ANSWER_DESCRIPTION, FINAL_ANSWER_TOOL
from harness.models.messages import ReplyShape, reply_shape_option
from harness.tasks.task import Task

DEMO_OBSERVATION = "(an example: its result is not shown here)"


def system_prompt(own: str, task: Task | None) -> str:
    """An arm's system message with the task's system instructions (Task.system_instructions), the rule every arm
    follows: the arm's own text (its instructions, and its tool text where the arm puts it there) first, then the
    task's instructions as their own paragraph, word for word. The arm's text is the same in every run and the
    task's the same across a benchmark's domain, so the longest prefix runs share comes first (the embedded
    engine's prefix cache), and the task's rules are the last word before the conversation, as τ²-bench's own
    agent puts its policy after its instructions."""
    extra = task.system_instructions if task is not None else ""
    return f"{own}\n\n{extra}" if extra else own


class ChatProtocolAdapter(dspy.Adapter):
    """One LM call per step: format the conversation, call the LM with the protocol's options, return the reply.
    `must_act`: whether the next reply must act rather than answer, set by the arm's policy before each step from
    the loop's one answer-or-act rule (harness.agents.loop.must_act): the reply shape then admits no answer (the
    embedded engine's grammar enforces it, other engines ignore it). `task`: the run's task, whose system
    instructions follow the arm's system message (`system_prompt`). One adapter per run: a policy owns it."""

    def __init__(self, task: Task | None = None):
        super().__init__()
        self.task, self.must_act = task, False

    def system_message(self, signature: type[dspy.Signature], inputs: dict[str, Any]) -> str:
        return signature.instructions

    def action_messages(self, action: Any) -> list[dict[str, Any]]:
        raise NotImplementedError

    def observation_messages(self, action: Any, observation: str | list[str]) -> list[dict[str, Any]]:
        """The messages showing an action's outcome: one observation, or one per tool call of an action that made
        several (a history turn's `observations`)."""
        raise NotImplementedError

    def takes_action(self, reply: Any) -> bool:
        """Whether a reply is an action (it gets an observation), not the answer."""
        raise NotImplementedError

    def options(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Per-call LM options (tools, stop sequences, the reply shape)."""
        return {}

    def reply(self, output: Any) -> Any:
        return output.get("text") or "" if isinstance(output, dict) else output

    def conversation(self, inputs: dict[str, Any], reply: Any = None) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = [{"role": "user", "content": inputs["task"]}]
        for turn in inputs.get("history") or []:
            messages += self.action_messages(turn["action"])
            if turn.get("from_user") and not self.takes_action(turn["action"]):  # a message to the user: its reply
                messages.append({"role": "user", "content": turn["observation"]})
            else:
                messages += self.observation_messages(turn["action"], turn.get("observations") or turn["observation"])
        if reply is not None:
            messages += self.action_messages(reply)
        return messages

    def format(self, signature: type[dspy.Signature], demos: list[dict[str, Any]],
               inputs: dict[str, Any]) -> list[dict[str, Any]]:
        messages = [{"role": "system", "content": system_prompt(self.system_message(signature, inputs), self.task)}]
        for demo in demos:  # a demo is an earlier step: its conversation and the reply that was chosen
            if demo.get("task") and demo.get("reply") is not None:
                messages += self.conversation(demo, reply=demo["reply"])
                if self.takes_action(demo["reply"]):  # every call answered
                    messages += self.observation_messages(demo["reply"], DEMO_OBSERVATION)
        return messages + self.conversation(inputs)

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        return {"reply": completion}

    def __call__(self, lm, lm_kwargs, signature, demos, inputs):
        messages = self.format(signature, demos, inputs)
        outputs = lm(messages=messages, **{**lm_kwargs, **self.options(inputs)})
        return [{"reply": self.reply(output)} for output in outputs]

    async def acall(self, lm, lm_kwargs, signature, demos, inputs):
        messages = self.format(signature, demos, inputs)
        outputs = await lm.acall(messages=messages, **{**lm_kwargs, **self.options(inputs)})
        return [{"reply": self.reply(output)} for output in outputs]


def code_block(code: str) -> str:
    return f"```python\n{code}\n```"


class CodeChatAdapter(ChatProtocolAdapter):
    """Code mode: the tool API as Python stubs in the system message, code blocks as actions, printed output
    as the next user message."""

    def system_message(self, signature: type[dspy.Signature], inputs: dict[str, Any]) -> str:
        return f"{signature.instructions}\n\nDefined in the sandbox:\n{code_block(inputs['tool_api'])}"

    def action_messages(self, action: Any) -> list[dict[str, Any]]:
        content = code_block(action["code"]) if isinstance(action, dict) and "code" in action else str(action)
        return [{"role": "assistant", "content": content}]

    def observation_messages(self, action: Any, observation: str | list[str]) -> list[dict[str, Any]]:
        return [{"role": "user", "content": f"Output:\n{observation}"}]

    def takes_action(self, reply: Any) -> bool:
        return (isinstance(reply, dict) and "code" in reply) or "```" in str(reply)

    def options(self, inputs: dict[str, Any]) -> dict[str, Any]:
        # one code block, or (right after the model has seen an output) a plain answer
        return reply_shape_option(ReplyShape("code_block", answer=not self.must_act))


FINAL_ANSWER_FUNCTION = {"type": "function", "function": {
    "name": FINAL_ANSWER_TOOL, "description": FINAL_ANSWER_DESCRIPTION,
    "parameters": {"type": "object", "properties": {"answer": {
        "description": "the answer to the task: text, a number, a list or an object",
        "anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "array"}, {"type": "object"}]}},
        "required": ["answer"]}}}


class ToolCallingAdapter(ChatProtocolAdapter):
    """Direct: the model's native tool calling. Tools go in the request's `tools` (the provider's API, or the
    local model's own chat template); an action is the reply's tool calls, each call's result a tool message with
    the call's id, in the calls' order. `parallel`: the scaffold's `parallel_tool_calls` (the reply shape admits
    several calls; off: one)."""

    def __init__(self, parallel: bool = False, task: Task | None = None):
        super().__init__(task)
        self.parallel = parallel

    def action_messages(self, action: Any) -> list[dict[str, Any]]:
        if isinstance(action, dict) and action.get("tool_calls"):
            calls = [{"id": call.get("id") or f"call_{n}", "type": "function",
                      "function": {"name": call["name"], "arguments": call["arguments"] if isinstance(
                          call["arguments"], str) else json.dumps(call["arguments"])}}
                     for n, call in enumerate(action["tool_calls"])]
            return [{"role": "assistant", "content": action.get("text") or "", "tool_calls": calls}]
        text = action.get("text", "") if isinstance(action, dict) else str(action)
        return [{"role": "assistant", "content": text}]

    def observation_messages(self, action: Any, observation: str | list[str]) -> list[dict[str, Any]]:
        if isinstance(action, dict) and action.get("tool_calls"):
            calls = action["tool_calls"]
            texts = observation if isinstance(observation, list) else [observation] * len(calls)
            return [{"role": "tool", "tool_call_id": call.get("id") or f"call_{n}", "name": call["name"],
                     "content": text} for n, (call, text) in enumerate(zip(calls, texts, strict=True))]
        return [{"role": "user", "content": observation if isinstance(observation, str) else "\n\n".join(observation)}]

    def takes_action(self, reply: Any) -> bool:
        return isinstance(reply, dict) and bool(reply.get("tool_calls"))

    def options(self, inputs: dict[str, Any]) -> dict[str, Any]:
        # tool calls valid for the tools they name (one, or several if parallel), or (right after the model has
        # seen a result) a plain answer
        shape = ReplyShape("tool_call", answer=not self.must_act, parallel=self.parallel)
        return {"tools": list(inputs["tools"]), **reply_shape_option(shape)}

    def reply(self, output: Any) -> dict[str, Any]:
        if not isinstance(output, dict):
            return {"text": output or "", "tool_calls": []}
        calls = []
        for n, call in enumerate(output.get("tool_calls") or []):
            function = call["function"] if isinstance(call, dict) else call.function
            name = function["name"] if isinstance(function, dict) else function.name
            arguments = function["arguments"] if isinstance(function, dict) else function.arguments
            call_id = (call.get("id") if isinstance(call, dict) else getattr(call, "id", None)) or f"call_{n}"
            calls.append({"id": call_id, "name": name, "arguments": arguments})
        return {"text": output.get("text") or "", "tool_calls": calls}
