"""An LM call's messages in the shape the OpenTelemetry GenAI conventions give `gen_ai.input.messages` and
`gen_ai.output.messages`: each message a role and a list of parts (text, a tool call, a tool call's response).

The harness records messages as the chat API took them (OpenAI's form: `content`, `tool_calls`, `tool_call_id`);
backends that read the conventions (Phoenix, Langfuse, MLflow) show parts, so each message is rewritten once here.
Span attributes hold no nested objects, so each list travels as one JSON string, as the conventions allow.
"""

from __future__ import annotations

import json
from typing import Any

from harness.trace.calls import LMCall

# The roles the conventions' message schema knows; any other role the harness met is sent as the user's.
ROLES = ("system", "user", "assistant", "tool")


def _text_parts(content: Any) -> list[dict[str, Any]]:
    """A message's content as text parts: a string, or a list of content parts of which the text ones count."""
    if isinstance(content, str):
        return [{"type": "text", "content": content}] if content else []
    if isinstance(content, list):
        return [{"type": "text", "content": str(part.get("text", ""))} for part in content
                if isinstance(part, dict) and part.get("type") == "text"]
    return [] if content is None else [{"type": "text", "content": str(content)}]


def _arguments(value: Any) -> Any:
    """Tool call arguments as an object where they are JSON text (OpenAI's form), else as they were recorded."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _tool_call_part(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    return {"type": "tool_call", "id": call.get("id"), "name": str(function.get("name", "")),
            "arguments": _arguments(function.get("arguments"))}


def input_message(message: dict[str, Any]) -> dict[str, Any]:
    """One chat message as the conventions' input message."""
    role = message.get("role") if message.get("role") in ROLES else "user"
    if role == "tool":
        parts = [{"type": "tool_call_response", "id": message.get("tool_call_id"),
                  "response": message.get("content", "")}]
    else:
        parts = _text_parts(message.get("content"))
        parts += [_tool_call_part(call) for call in message.get("tool_calls") or [] if isinstance(call, dict)]
    return {"role": role, "parts": parts}


def input_messages(call: LMCall) -> str:
    """The call's messages, in order, as the JSON text of `gen_ai.input.messages`."""
    return json.dumps([input_message(m) for m in call.messages if isinstance(m, dict)], default=str)


def output_messages(call: LMCall) -> str:
    """The call's reply (its text and native tool calls) as the JSON text of `gen_ai.output.messages`: one choice,
    finished by a tool call when it made one."""
    parts = _text_parts(call.output) + [_tool_call_part(c) for c in call.tool_calls if isinstance(c, dict)]
    finish = "tool_call" if call.tool_calls else "stop"
    return json.dumps([{"role": "assistant", "parts": parts, "finish_reason": finish}], default=str)
